"""The reward and advantage path of training, checked on a synthetic batch whose advantages are
known by hand (issue 24, item 4): the recipe's reward (`reward_fns.bcr.compute_score`, called with
the response length and budget as BCRRewardManager passes them) on group completions that keep
or drop their reasoning, carry or drop redundancy, are right or wrong, truncated or not; then
verl 0.9.1's own GRPO advantage (`ray_trainer.compute_advantage`) under the recipe's settings.

What the hand numbers say about BCR: inside the budget, redundancy is free (a1 and a2 earn the
same); it costs only through truncation (a3 loses a problem's accuracy and the whole format
term), and skipping reasoning costs accuracy, not format (a4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from recipe_bcr.miniature.toy.rollouts import advantages, summarize, tag
from reward_fns.bcr import compute_score

CONFIGS = Path(__file__).resolve().parents[1] / "hydra_configs"
PROBLEMS = ("What is 7 - 3 + 4?", "What is 2 + 5 - 1?", "What is 9 - 4 - 3?")
GOLDS = ["8", "6", "2"]
STEPS = ("7 - 3 = 4. 4 + 4 = 8.", "2 + 5 = 7. 7 - 1 = 6.", "9 - 4 = 5. 5 - 3 = 2.")
NOISE = "Let me work through this carefully. Wait, let me double-check. So the final answer is {a}."


def _group(reasoning: list[str], answers: list[str], cut_before: int | None = None) -> str:
    parts = [f"### Problem {i}\n{r}\nAnswer{i}: \\boxed{{{a}}}" for i, (r, a) in enumerate(zip(reasoning, answers), 1)]
    text = "\n\n".join(parts)
    return (
        text if cut_before is None else text[: text.index(f"### Problem {cut_before}")] + f"### Problem {cut_before}\n"
    )


def _verbose(i: int) -> str:
    return STEPS[i] + " " + NOISE.format(a=GOLDS[i])


# (group id, completion, response tokens, budget, hand-computed reward, hand-computed advantage)
# N=3, budget 120: mean reward (3 + 3 + 4/3 + 5/3) / 4 = 9/4
# N=1 (the baseline's prompt), budget 128: mean (3 + 1 + 1 + 3) / 4 = 2
# a group whose rewards are equal carries no signal: advantage 0
CASES = [
    ("a", _group(list(STEPS), GOLDS), 60, 120, 3.0, 0.75),  # steps, no redundancy, right
    ("a", _group([_verbose(i) for i in range(3)], GOLDS), 110, 120, 3.0, 0.75),  # steps + redundancy, fits
    ("a", _group([_verbose(i) for i in range(3)], GOLDS, cut_before=3), 120, 120, 4 / 3, 4 / 3 - 9 / 4),  # truncated
    ("a", _group(["", "", ""], ["8", "5", "3"]), 20, 120, 5 / 3, 5 / 3 - 9 / 4),  # no reasoning, 1 of 3 right
    ("b", _group([STEPS[0]], ["8"]), 20, 128, 3.0, 1.0),  # steps, right
    ("b", _group([""], ["5"]), 8, 128, 1.0, -1.0),  # skipped, wrong
    ("b", _group(["7 - 3 = 5. 5 + 4 = 9."], ["9"]), 20, 128, 1.0, -1.0),  # a step slipped, wrong
    ("b", _group([_verbose(0)], ["8"]), 40, 128, 3.0, 1.0),  # steps + redundancy, right
    ("c", _group([_verbose(0)], ["8"]), 40, 128, 3.0, 0.0),
    ("c", _group([STEPS[0]], ["8"]), 20, 128, 3.0, 0.0),
]


def _recipe() -> tuple[dict, dict]:
    """The recipe's algorithm settings and the paper's reward weights, read from the configs training composes."""
    algo = OmegaConf.load(CONFIGS / "recipe" / "bcr.yaml")["algorithm"]
    weights = OmegaConf.load(CONFIGS / "bcr_reward" / "paper.yaml")
    return dict(algo), {k: float(weights[k]) for k in ("w_acc", "w_fmt", "w_len")}


def _score(case) -> dict[str, float]:
    gid, text, length, budget, *_ = case
    golds = GOLDS if gid == "a" else GOLDS[:1]
    info = {"n": len(golds), "response_length": length, "max_response_length": budget}
    return compute_score("toy_chain", text, golds, info, **_recipe()[1])


@pytest.fixture(scope="module")
def scored():
    return [_score(c) for c in CASES]


def test_the_reward_gives_the_hand_computed_scores(scored):
    for case, s in zip(CASES, scored):
        assert s["score"] == pytest.approx(case[4]), (case[1], s)
    truncated = scored[2]
    assert (truncated["truncated"], truncated["fmt"], truncated["n_correct"]) == (1.0, 0.0, 2.0)
    assert scored[1]["truncated"] == 0.0 and scored[3]["fmt"] == 1.0 and scored[3]["acc"] == pytest.approx(1 / 3)


def test_verl_grpo_advantage_under_the_recipe_settings_is_the_hand_computed_one(scored):
    from verl import DataProto
    from verl.trainer.ppo.core_algos import AdvantageEstimator
    from verl.trainer.ppo.ray_trainer import compute_advantage

    algo, _ = _recipe()
    assert algo["adv_estimator"] == "grpo" and algo["norm_adv_by_std_in_grpo"] is False  # Eq. 3: A = R - mean(R)
    width = max(c[2] for c in CASES)
    mask = torch.zeros(len(CASES), width)
    rewards = torch.zeros(len(CASES), width)
    for i, (case, s) in enumerate(zip(CASES, scored)):
        mask[i, : case[2]] = 1
        rewards[i, case[2] - 1] = s["score"]  # verl puts an outcome reward on the last response token
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "response_mask": mask},
        non_tensors={"uid": np.array([c[0] for c in CASES], dtype=object)},
    )
    out = compute_advantage(
        data, AdvantageEstimator(algo["adv_estimator"]), norm_adv_by_std_in_grpo=algo["norm_adv_by_std_in_grpo"]
    )
    adv = out.batch["advantages"]
    expected = torch.tensor([c[5] for c in CASES])
    for i, case in enumerate(CASES):  # one value per rollout on every response token, 0 on padding
        assert torch.allclose(adv[i, : case[2]], expected[i].expand(case[2]), atol=1e-6), (i, adv[i, : case[2]])
        assert not adv[i, case[2] :].any()
    # the same batch through the recipe's diagnostic (recipe_bcr.miniature.toy.rollouts) gives the same numbers
    assert advantages([s["score"] for s in scored], [c[0] for c in CASES]) == pytest.approx(expected.tolist(), abs=1e-6)
    # verl's default (std-normalised) would scale group a and b differently: the setting matters
    std = compute_advantage(data, AdvantageEstimator.GRPO, norm_adv_by_std_in_grpo=True).batch["advantages"]
    assert not torch.allclose(std[:, 0], expected, atol=1e-3)


def test_the_per_rollout_diagnostic_tags_reasoning_redundancy_and_truncation(scored):
    rows = [{"input": c[0], "output": c[1], "score": s["score"], **s} for c, s in zip(CASES, scored)]
    tags = [tag(r["output"], int(r["n"])) for r in rows]
    # a truncated completion kept its reasoning in the problems it reached
    assert [t["kept_reasoning"] for t in tags] == [True, True, True, False, True, False, True, True, True, True]
    assert [t["redundant"] for t in tags] == [False, True, True, False, False, False, False, True, True, False]
    table = summarize(rows, redundancy_cut=0.3)
    lean = table["kept reasoning, no redundancy"]  # a1, b1, b3, c2
    assert lean["rollouts"] == 4 and lean["advantage"] == pytest.approx((0.75 + 1.0 - 1.0 + 0.0) / 4)
    verbose = table["kept reasoning, redundancy"]  # a2, a3 (truncated), b4, c1
    assert verbose["advantage"] == pytest.approx((0.75 + 4 / 3 - 9 / 4 + 1.0 + 0.0) / 4)
    assert verbose["truncated"] == pytest.approx(1 / 4) and verbose["fmt"] == pytest.approx(3 / 4)
    dropped = table["dropped reasoning"]  # a4, b2
    assert dropped["rollouts"] == 2 and dropped["advantage"] == pytest.approx(((5 / 3 - 9 / 4) - 1) / 2)
    assert dropped["truncated"] == 0.0 and dropped["fmt"] == 1.0


def test_a_section_cut_before_its_steps_is_not_dropped_reasoning():
    """Under a binding budget the last section is often cut in its opening narration: the completion
    kept its reasoning in every problem it finished; one that skipped the steps of a finished problem did not."""
    cut = f"### Problem 1\n{STEPS[0]} {NOISE.format(a=GOLDS[0])}\nAnswer1: \\boxed{{{GOLDS[0]}}}\n\n### Problem 2\nLet me work"
    assert tag(cut, 3)["kept_reasoning"] and tag(cut, 3)["redundancy"] > 0.3
    skipped = f"### Problem 1\nAnswer1: \\boxed{{{GOLDS[0]}}}\n\n### Problem 2\n{STEPS[1]}"
    assert not tag(skipped, 3)["kept_reasoning"]
    assert summarize([{"input": "a", "output": cut, "score": 1.0}])["kept reasoning, redundancy"]["truncated"] != 0.0
