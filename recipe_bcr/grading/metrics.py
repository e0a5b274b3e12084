"""Training-time BCR metrics from the reward breakdowns of one step (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np


def training_metrics(breakdowns: Iterable[Mapping[str, float]], prefix: str = "bcr/") -> dict[str, float]:
    """The per-step metrics from each completion's `compute_score` breakdown (others' samples skipped)."""
    rows = [b for b in breakdowns if b and "correct_bits" in b and "n" in b]
    if not rows:
        return {}
    out: dict[str, float] = {}
    renamed = {"truncated": "truncation_rate", "think_open": "think_open_rate"}
    for key in ("acc", "fmt", "answered", "stage1", "truncated", "verify_timeouts", "think_open"):
        out[f"{prefix}{renamed.get(key, key)}"] = float(np.mean([float(r.get(key, 0.0)) for r in rows]))
    ns = np.array([int(r["n"]) for r in rows])
    bits = np.array([int(r["correct_bits"]) for r in rows], dtype=np.int64)
    for pos in range(int(ns.max())):
        has = ns > pos
        out[f"{prefix}acc_pos{pos + 1}"] = float(((bits[has] >> pos) & 1).mean())
    # how many completions this step were zeroed by the reward's last line of defence (target 0)
    out[f"{prefix}reward_errors"] = float(sum(float(r.get("reward_errors", 0.0)) for r in rows))
    tokens = np.array([float(r["response_tokens"]) for r in rows])
    if tokens.any():
        out[f"{prefix}tokens_per_problem"] = float((tokens / ns).mean())
        out[f"{prefix}response_tokens"] = float(tokens.mean())
    return out
