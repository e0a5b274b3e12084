"""verl entry point: `reward.custom_reward_function.path=pkg://reward_fns.bcr`, name `compute_score`.

A thin adapter: it decodes verl's arguments (ground truth as a list, numpy array or JSON
string; solution as str, bytes or None), reads the knobs from `reward_kwargs`, and calls
recipe_bcr.grading.reward. Policy output can never raise out of here; bad *data* (a ground truth
whose length is not the group's N) raises with the sample named.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from recipe_bcr.grading.reward import RewardWeights, failed_breakdown, require_length, score_completion
from recipe_bcr.grading.verify import Gold, configure_default

logger = logging.getLogger(__name__)


def _as_list(value: Any) -> list[Any] | None:
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    return list(value) if isinstance(value, list | tuple) else None


def _decode_json_list(text: str, n: int | None) -> list[Any] | None:
    """A JSON list of answers, or None. "[-2, 7]" is an interval unless the group has n=2
    problems: without n only a list of strings counts as a list of answers."""
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(decoded, list) or not decoded:
        return None
    if n is not None:
        return decoded if len(decoded) == n else None
    return decoded if all(isinstance(x, str | list) for x in decoded) else None


def parse_ground_truth(ground_truth: Any, extra_info: Mapping[str, Any] | None) -> list[Gold]:
    """The N gold answers; each is a string or a list of acceptable strings.

    Alternatives may also come from `extra_info["gold_alternatives"]` (our parquet schema).
    """
    where = _sample_name(extra_info)
    items = _as_list(ground_truth)
    if items is None:
        if isinstance(ground_truth, bytes):
            ground_truth = ground_truth.decode("utf-8", errors="replace")
        if not isinstance(ground_truth, str | int | float):
            raise TypeError(f"{where}: ground_truth has unsupported type {type(ground_truth).__name__}")
        text = str(ground_truth).strip()
        items = (_decode_json_list(text, _group_size(extra_info, where)) if text.startswith("[") else None) or [text]
    alternatives = _as_list((extra_info or {}).get("gold_alternatives")) or []
    golds: list[Gold] = []
    for k, item in enumerate(items):
        sub = _as_list(item)
        options = [str(s) for s in sub] if sub is not None else [str(item)]
        if k < len(alternatives):
            options += [str(a) for a in (_as_list(alternatives[k]) or [])]
        options = [o for o in options if o.strip()]
        if not options:
            raise ValueError(f"{where}: gold answer {k + 1} is empty")
        golds.append(options[0] if len(options) == 1 else options)
    if not golds:
        raise ValueError(f"{where}: ground_truth is empty")
    n = _group_size(extra_info, where)
    if n is not None and n != len(golds):
        raise ValueError(f"{where}: ground_truth has {len(golds)} answers but the group has n={n} problems")
    return golds


def _group_size(extra_info: Mapping[str, Any] | None, where: str) -> int | None:
    """`extra_info["n"]` as a positive int, None when absent; anything else is a data error."""
    n = (extra_info or {}).get("n")
    if n is None:
        return None
    try:
        size = int(n)
    except (TypeError, ValueError):
        size = 0
    if size < 1 or size != float(n):
        raise ValueError(f"{where}: extra_info.n must be a positive whole number of problems, got {n!r}")
    return size


def _sample_name(extra_info: Mapping[str, Any] | None) -> str:
    info = extra_info or {}
    return f"sample (split={info.get('split', '?')}, index={info.get('index', '?')})"


def _as_text(solution_str: Any) -> str:
    if isinstance(solution_str, bytes):
        return solution_str.decode("utf-8", errors="replace")
    return solution_str if isinstance(solution_str, str) else ""


def compute_score(
    data_source: str,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    w_acc: float = 2.0,
    w_fmt: float = 1.0,
    w_len: float = 0.0,
    thinking: bool = False,
    timeout_s: float = 2.0,
    workers: int = 2,
    **_: Any,
) -> dict[str, float]:
    """BCR reward for one completion: `score` plus the breakdown keys (all floats)."""
    golds = parse_ground_truth(ground_truth, extra_info)
    info = extra_info or {}
    verifier = configure_default(float(timeout_s), int(workers))
    weights = RewardWeights(float(w_acc), float(w_fmt), float(w_len))
    require_length(weights, info.get("response_length"), info.get("max_response_length"))
    try:
        return score_completion(
            _as_text(solution_str),
            golds,
            verifier,
            weights,
            thinking=bool(thinking),
            response_length=info.get("response_length"),
            max_response_length=info.get("max_response_length"),
        ).breakdown
    except Exception:  # noqa: BLE001 - a policy output must never crash a training step
        # counted, never silent: `reward_errors` in the breakdown becomes bcr/reward_errors per step
        logger.exception("%s: scoring failed; the completion earns 0 (data_source=%s)", _sample_name(info), data_source)
        return failed_breakdown(len(golds))
