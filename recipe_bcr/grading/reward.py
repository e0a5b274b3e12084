"""The BCR reward (paper, Eq. 4-6): R = w_acc * mean per-problem accuracy + w_fmt * format (+ the ablation's
w_len * (-|y| / max_len)). Every breakdown has the same float keys, so verl can average them per step."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from recipe_bcr.grading.answers.gate import gives_answer
from recipe_bcr.grading.parse.extract import extract_group
from recipe_bcr.grading.verify import Gold, Verifier

BREAKDOWN_KEYS = (
    "score",
    "acc",
    "fmt",
    "answered",
    "n_correct",
    "stage1",
    "verify_timeouts",
    "len_penalty",
    "n",  # group size
    "correct_bits",  # bit i set when problem i+1 is right: per-position accuracy, floats only
    "response_tokens",  # true token length when the reward manager passes it, else 0
    "truncated",  # 1 when the response used the whole budget
    "reward_errors",  # 1 when scoring raised and the completion was given 0 by the last line of defence
    "think_open",  # 1 when a think block never closed (the budget ran out while thinking): its text was read whole
)


@dataclass(frozen=True)
class RewardWeights:
    acc: float = 2.0
    fmt: float = 1.0
    length: float = 0.0


@dataclass(frozen=True)
class ScoredCompletion:
    breakdown: dict[str, float]
    answers: list[str | None]
    stages: list[int | None]
    correct: list[bool]
    sections: list[tuple[int, int] | None]
    methods: list[str]
    answer_start: int  # where the answer text starts (after the last </think>)


def require_length(weights: RewardWeights, response_length: int | None, max_response_length: int | None) -> None:
    """The length penalty needs true token counts; fail loudly rather than guess from characters."""
    if weights.length and (response_length is None or not max_response_length):
        raise ValueError(
            "the explicit length penalty (w_len != 0) needs the response token length and the budget; "
            "use the BCR reward manager (reward.reward_manager.source=importlib, "
            "name=BCRRewardManager, module.path=pkg://recipe_bcr.verl_ext.reward_manager), which passes them"
        )


def score_completion(
    completion: str,
    golds: Sequence[Gold],
    verifier: Verifier,
    weights: RewardWeights = RewardWeights(),
    *,
    thinking: bool = False,
    response_length: int | None = None,
    max_response_length: int | None = None,
) -> ScoredCompletion:
    """Score one completion of an N-problem group (training, the TRL callable and the evaluation all score here)."""
    deadline = time.monotonic() + verifier.timeout_s  # from the call's start: extraction counts too
    n = len(golds)
    if n < 1:
        raise ValueError("a group needs at least one gold answer")
    require_length(weights, response_length, max_response_length)
    extraction = extract_group(completion, n, thinking=thinking)
    asked = [(p.candidates or (None,), gold) for p, gold in zip(extraction.problems, golds)]
    flat = verifier.check_many([(c, gold) for cands, gold in asked for c in cands], deadline)
    each = iter(flat)
    verdicts = [[next(each) for _ in cands] for cands, _ in asked]
    correct = [all(v.correct for v in vs) for vs in verdicts]
    acc = sum(correct) / n
    # format credit means one answer was given: a box of prose or a stand-in earns none (unless the gold is prose)
    fmt = float(extraction.format_ok and all(gives_answer(a, g) for a, g in zip(extraction.answers, golds)))
    len_penalty = -(response_length / max_response_length) if weights.length else 0.0
    score = weights.acc * acc + weights.fmt * fmt + weights.length * len_penalty
    breakdown = {
        "score": float(score),
        "acc": float(acc),
        "fmt": fmt,
        "answered": float(extraction.answered),
        "n_correct": float(sum(correct)),
        "stage1": sum(s == 1 for s in extraction.stages) / n,
        "verify_timeouts": float(sum(v.method == "timeout" for vs in verdicts for v in vs)),
        "len_penalty": float(len_penalty),
        "n": float(n),
        "correct_bits": float(sum(1 << i for i, c in enumerate(correct) if c)),
        "response_tokens": float(response_length or 0),
        "truncated": float(bool(response_length and max_response_length and response_length >= max_response_length)),
        "reward_errors": 0.0,
        "think_open": float(extraction.think_closed is False),
    }
    return ScoredCompletion(
        breakdown,
        extraction.answers,
        extraction.stages,
        correct,
        [p.section for p in extraction.problems],
        ["hedge" if len(vs) > 1 and not ok else vs[0].method for vs, ok in zip(verdicts, correct)],
        extraction.answer_start,
    )


def zero_breakdown() -> dict[str, float]:
    """The breakdown of a completion that earns nothing (same keys as a scored one)."""
    return {k: 0.0 for k in BREAKDOWN_KEYS}


def failed_breakdown(n: int) -> dict[str, float]:
    """The breakdown of a completion whose scoring raised: nothing earned, and the error counted."""
    return {**zero_breakdown(), "n": float(n), "reward_errors": 1.0}


def failed_completion(n: int) -> ScoredCompletion:
    """What a completion whose scoring raised is recorded as (evaluation's last line of defence)."""
    return ScoredCompletion(failed_breakdown(n), [None] * n, [None] * n, [False] * n, [None] * n, ["error"] * n, 0)
