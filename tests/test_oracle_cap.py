"""The oracle-allocation control (issue 52): an N=1 run whose token cap follows each problem's chain length, BCR's
budget spread by need; planned beside the uniform cap, written into its own data, and scored at its caps by the
reward manager (tests/test_verl_integration.py)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from recipe_bcr.miniature import stages
from recipe_bcr.miniature.paper import command as paper
from recipe_bcr.miniature.paper.design_checks import ChainCosts
from recipe_bcr.miniature.paper.oracle_cap import oracle_caps
from recipe_bcr.miniature.toy.model import load_specs

# toy_compete's shortest written sections by chain length (tests/test_outcome_space.py checks them on its tokenizer)
COMPETE = {
    o: ChainCosts(bare=b - 1.0, recheck=0.0, restatement=0.0) for o, b in enumerate([27, 38, 51, 66, 83, 102], 1)
}


def test_the_caps_follow_chain_length_and_average_the_uniform_cap():
    caps = oracle_caps(COMPETE, 309, 3)
    assert caps == {1: 45, 2: 64, 3: 86, 4: 111, 5: 140, 6: 172}  # registration_v3.md section 3
    assert sum(caps.values()) / len(caps) == pytest.approx(309 / 3, abs=1)
    assert oracle_caps(COMPETE, 618, 3)[6] == 2 * 172


CFG = {
    "bcr": {"n": 3},
    "seeds": [0, 1],
    "controls": {
        "truncation_n1": {"n": 1, "prompt": "single", "budget": "per_problem"},
        "oracle_cap_n1": {"n": 1, "prompt": "single", "budget": "oracle"},
    },
    "ablations": {"budget_scales": [1.0], "reward": []},
}


def test_the_oracle_arm_is_planned_with_its_caps_and_its_own_data(tmp_path):
    caps = oracle_caps(COMPETE, 309, 3)
    runs = {r.name: r for r in paper.plan_part(CFG, 309, "main", caps)}
    oracle, uniform = runs["oracle_cap_n1_s1"], runs["truncation_n1_s1"]
    assert (oracle.n, oracle.single, oracle.budget) == (1, True, 172)  # the rollout must reach the largest cap
    assert dict(oracle.token_caps) == caps and uniform.token_caps == () and uniform.budget == 103
    assert oracle.data_key != uniform.data_key
    with pytest.raises(ValueError, match="budget oracle needs the caps"):
        paper.plan_part(CFG, 309, "main")

    spec = load_specs(["config=toy_compete"])[0]
    d = {"train_groups": 8, "val_groups": 4, "seed": 0}
    data = stages.write_data(
        tmp_path, list(runs.values()), d, {"train_steps": 2, "grpo": {"prompts_per_step": 4}}, spec
    )
    assert len(data) == 3  # BCR's N=3 groups, the uniform cap's and the oracle's single prompts
    rows = pq.read_table(data[oracle.data_key] / "train_n1.parquet").to_pylist()
    for row in rows:
        ops = row["prompt"][-1]["content"].count(" + ") + row["prompt"][-1]["content"].count(" - ")
        assert row["extra_info"]["token_cap"] == caps[ops]
    plain = pq.read_table(data[uniform.data_key] / "train_n1.parquet").to_pylist()
    assert {r["extra_info"]["token_cap"] for r in plain} == {None}
    assert [r["prompt"] for r in plain] == [r["prompt"] for r in rows]  # the same problems, capped by need


def test_a_run_json_from_before_the_oracle_cap_is_still_finished(tmp_path):
    import json

    run = stages.Run("truncation_n1_s0", "control", 1, 103, 0, single=True)
    out = tmp_path / "runs" / run.name
    (out / "hf_model").mkdir(parents=True)
    (out / "hf_model" / "config.json").write_text("{}")
    old = {k: v for k, v in run.__dict__.items() if k != "token_caps"} | {"extra": [], "steps": 5}
    (out / "run.json").write_text(json.dumps(old))
    assert stages.finished(run, tmp_path, 5)
    capped = stages.Run("truncation_n1_s0", "control", 1, 103, 0, single=True, token_caps=((1, 45),))
    with pytest.raises(ValueError, match="token_caps"):
        stages.finished(capped, tmp_path, 5)


def test_a_real_grpo_step_scores_each_row_at_its_own_cap(tmp_path):
    """Through the stock main_ppo on the shipped toy_model_compete: the oracle arm's parquet rows carry their caps
    into verl's reward loop, where BCRRewardManager cuts each response at its row's cap (caps far below the rollout's
    length: every row truncated, the scored tokens below what the rollout wrote)."""
    import json

    from recipe_bcr.miniature.toy.model import RESOURCES
    from recipe_bcr.miniature.toy.preconditions import load_preregistration

    cfg = load_preregistration(["grpo.prompts_per_step=4"], name="paper_v3")  # 32 completions: one device batch
    spec, _, toy = load_specs(["config=toy_compete"])
    caps = {o: 15 + 5 * o for o in range(1, 7)}  # 20..45 tokens: below any written section
    (run,) = [r for r in paper.plan_part(cfg, 309, "main", caps) if r.name == "oracle_cap_n1_s0"]
    data = stages.write_data(tmp_path, [run], toy["data"], {**cfg, "train_steps": 1}, spec)
    stages.train_run(run, tmp_path, RESOURCES / "toy_model_compete", data[run.data_key], cfg, 1, 1)
    (row,) = [json.loads(x) for x in (tmp_path / "runs" / run.name / "metrics.jsonl").read_text().splitlines()]
    assert row["response_length/max"] <= max(caps.values())  # the rollout's length: the largest cap
    assert row["bcr/truncation_rate"] == 1.0 and row["bcr/reward_errors"] == 0.0
    assert row["bcr/response_tokens"] < row["response_length/mean"]  # scored at the rows' caps, not the rollout's
