"""The paper-like toy regime (issue 24): its committed model is made by today's settings, its
preconditions are judged against the pre-registered thresholds in the right direction, and the
paper report opens with them and marks every finding "not interpretable" when one is not met."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.report import write_report
from recipe_bcr.miniature.paper.v1 import load_config
from recipe_bcr.miniature.stages import Run
from recipe_bcr.miniature.toy.model import RESOURCES, built_with, cache_key, load_specs
from recipe_bcr.miniature.toy.preconditions import CHECKS, measure, table, verdicts

THRESHOLDS = load_config([])["preconditions"]["thresholds"]


@pytest.mark.parametrize("config", ["toy_verbose", "toy_compete"])
def test_committed_model_is_built_with_the_current_settings(config):
    """Change hydra_configs/<config>.yaml or the task and this fails until the model is rebuilt and
    committed: python -m recipe_bcr toy --rebuild --ship config=<config>"""
    task, mspec, raw = load_specs([f"config={config}"])
    assert built_with(RESOURCES / raw["shipped"]) == cache_key(task, mspec)
    # verl builds the actor from config.json's architecture: anything else loads a model without its LM head
    assert json.loads((RESOURCES / raw["shipped"] / "config.json").read_text())["architectures"] == ["Qwen3ForCausalLM"]
    assert built_with(RESOURCES / raw["shipped"]) != built_with(RESOURCES / load_specs()[2]["shipped"])


def test_thresholds_are_preregistered_for_every_check_and_judged_in_their_direction():
    assert set(THRESHOLDS) == set(CHECKS)
    at = verdicts(dict(THRESHOLDS), THRESHOLDS)
    assert all(r["met"] for r in at)  # the threshold itself passes, either direction
    nudged = {k: v + (0.01 if CHECKS[k][0] == "<=" else -0.01) for k, v in THRESHOLDS.items()}
    assert not any(r["met"] for r in verdicts(nudged, THRESHOLDS))
    nan = verdicts({**THRESHOLDS, "acc_skipped_n1": math.nan}, THRESHOLDS)  # nothing skipped: not shown, not met
    assert [r["name"] for r in nan if not r["met"]] == ["acc_skipped_n1"]
    with pytest.raises(ValueError, match="lacks"):
        verdicts(THRESHOLDS, {k: v for k, v in THRESHOLDS.items() if k != "n3_acc_drop"})
    assert table(at).count("| yes |") == len(CHECKS)


def _plant(root: Path, met: bool) -> tuple[dict, list[Run], dict[str, Path]]:
    cfg = load_config(["seeds=[0]", "ablation_seeds=[]", "eval.n=[1,2]", "bcr.tokens_per_problem=28"])
    values = {**THRESHOLDS, "redundancy_n1": 0.62 if met else 0.2}
    details = {
        "problems_n1": 10,
        "groups_n3": 2,
        "written_n1": 9,
        "skipped_n1": 1,
        "acc_n1": 0.9,
        "acc_n3": 0.85,
        "l_avg_n1": 80.0,
        "budget_n3": 120,
        "compression": 0.5,
        "essential_tokens_3": 75.0,
        "mean_tokens_n3": 250.0,
    }
    (root / "preconditions.json").write_text(
        json.dumps({"model": "m", "key": "k", "rows": verdicts(values, THRESHOLDS), "details": details})
    )
    runs = [Run("baseline_n1_s0", "main", 1, 128, 0, single=True), Run("bcr_n3_s0", "main", 3, 84, 0)]
    evals = {}
    for label, tok in (("base", 35.0), ("baseline_n1_s0", 30.0), ("bcr_n3_s0", 20.0)):
        d = root / "eval" / label
        d.mkdir(parents=True)
        (d / "summary.json").write_text(
            json.dumps(
                [
                    {
                        "label": label,
                        "benchmark": "Toy",
                        "n": n,
                        "acc": 0.6,
                        "acc_stderr": 0.01,
                        "tokens_per_problem": tok,
                    }
                    for n in (1, 2)
                ]
            )
        )
        rec = {"n": 1, "completion": "### Problem 1\n1 + 2 = 3.\nAnswer1: \\boxed{3}", "problems": [{"correct": True}]}
        (d / "samples.jsonl").write_text(json.dumps(rec) + "\n")
        evals[label] = d
        if label != "base":
            (root / "runs" / label).mkdir(parents=True)
            (root / "runs" / label / "metrics.jsonl").write_text(json.dumps({"step": 1, "bcr/acc": 0.6}) + "\n")
    return cfg, runs, evals


@pytest.mark.parametrize("met", [True, False])
def test_report_opens_with_the_preconditions_and_unmet_ones_void_the_findings(tmp_path, met):
    report = write_report(tmp_path, *_plant(tmp_path, met), 60.0).read_text()
    first = report.index("## ")
    assert report[first:].startswith("## Preconditions") and report.index("## Preconditions") < report.index("| ")
    found = json.loads((tmp_path / "findings.json").read_text())
    assert [r["name"] for r in found["preconditions"]] == list(CHECKS) and found["seeds"] == [0]
    redundancy = next(r for r in found["preconditions"] if r["name"] == "redundancy_n1")
    assert redundancy["met"] is met and redundancy["threshold"] == THRESHOLDS["redundancy_n1"]
    verdict = found["findings"][0]
    assert verdict["id"] == "1" and verdict["text"].startswith("1. ")
    if met:  # 20 tokens against 30 at equal accuracy: finding 1 holds
        assert verdict["verdict"] == "reproduced" and "Every precondition is met" in report
    else:
        assert {f["verdict"] for f in found["findings"]} == {"not interpretable"} and "**no**" in report


@pytest.mark.slow
def test_measure_on_the_committed_demo_model_at_tiny_sizes():
    """The measurement end to end (sampling, grading, calibration) on the demo's toy model: it does
    not sit in the paper's regime (README "The toy task"), and every value is a real measurement."""
    task, _, raw = load_specs()
    got = measure(RESOURCES / raw["shipped"], task, problems=12, groups=3, seed=0, compression=0.5)
    v, d = got["values"], got["details"]
    assert d["written_n1"] + d["skipped_n1"] == 12 and 0 <= v["reasoning_written_n1"] <= 1
    assert d["budget_n3"] == round(3 * 0.5 * d["l_avg_n1"])
    assert v["essential_slack_at_budget"] == pytest.approx(1 - d["essential_tokens_3"] / d["budget_n3"])
    assert not all(r["met"] for r in verdicts(v, THRESHOLDS))


def test_report_tables_the_training_rollouts_advantage_by_behaviour(tmp_path):
    """Planted verl rollout dumps (two steps, one group of two each): a lean right rollout against a
    skipped wrong one, so the kept-reasoning rows carry +1 and the dropped ones -1."""
    cfg, runs, evals = _plant(tmp_path, True)
    dump = tmp_path / "runs" / "bcr_n3_s0" / "rollouts"
    dump.mkdir()
    # verl's v1 trainer dump: input, output, gts, score, step, uid ("{sample}_{rollout}_{output}"); no reward parts
    lean = {"output": "### Problem 1\n1 + 2 = 3.\nAnswer1: \\boxed{3}", "score": 3.0, "gts": ["3"]}
    skip = {"output": "### Problem 1\nAnswer1: \\boxed{4}", "score": 1.0, "gts": ["3"]}
    for step in (1, 2):
        (dump / f"{step}.jsonl").write_text(
            "".join(
                json.dumps({**r, "input": "same prompt", "step": step, "uid": f"s{step}_{k}_0"}) + "\n"
                for k, r in enumerate((lean, skip))
            )
        )
    report = write_report(tmp_path, cfg, runs, evals, 60.0).read_text()
    rows = [line for line in report.splitlines() if line.startswith("| bcr_n3_s0 ") and "reasoning" in line]
    assert len(rows) == 4  # two categories x first and last half of the steps
    kept = [r for r in rows if "kept reasoning, no redundancy" in r]
    assert all("| +1.000 |" in r for r in kept) and all("| -1.000 |" in r for r in rows if "dropped" in r)
    assert "| 1-1 |" in kept[0] and "| 2-2 |" in kept[1]
    assert "| 1.00 | 1.00 |" in kept[0] and "| 0.00 | 1.00 |" in next(r for r in rows if "dropped" in r)  # acc, format


def test_every_training_run_gets_the_configured_grpo_sizes(tmp_path, monkeypatch):
    """paper.yaml `grpo` (prompts per step, rollouts, lr: the knobs the pilot of issue 24 sets) reaches
    main_ppo's keys; the training command is captured and stopped before anything runs."""
    from recipe_bcr.miniature import stages
    from recipe_bcr.miniature.paper import v1 as paper_v1

    seen = []

    def stop(cmd, log, what):
        seen.append(cmd)
        raise RuntimeError("stopped")

    monkeypatch.setattr(stages, "run_stage", stop)
    cfg = load_config(["grpo.prompts_per_step=16", "grpo.rollouts=8", "grpo.lr=3e-4"])
    run = Run("bcr_n3_s0", "main", 3, 135, 0)
    with pytest.raises(RuntimeError, match="stopped"):
        paper_v1._train(run, tmp_path, tmp_path / "model", {"group": tmp_path / "g", "single": tmp_path / "s"}, cfg)
    args = seen[0][seen[0].index("+recipe=bcr_toy") :]
    for key in (
        "data.train_batch_size=16",
        "actor_rollout_ref.actor.ppo_mini_batch_size=16",
        "actor_rollout_ref.rollout.n=8",
        "actor_rollout_ref.actor.optim.lr=0.0003",
        "bcr.budget=135",
    ):
        assert key in args, key
