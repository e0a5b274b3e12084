"""The BCR reward for trainers: verl's `compute_score` (`reward.custom_reward_function.path=pkg://reward_fns.bcr`)
and `trl_reward`, the same grader with TRL's reward-function signature (`GRPOTrainer(reward_funcs=[trl_reward])`).

A thin adapter: it decodes the trainer's arguments (ground truth as a list, numpy array or JSON
string; solution as str, bytes or None), reads the knobs from `reward_kwargs`, and calls
recipe_bcr.grading.reward. Policy output can never raise out of here; bad *data* (a ground truth
whose length is not the group's N) raises with the sample named.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
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
    r"""The BCR reward of one completion that answers N problems (paper Eq. 4-6), as verl's reward loop calls it.

    Args:
        data_source: the dataset's name (only logged).
        solution_str: the decoded completion; bytes and None are read as text and as no answer.
        ground_truth: the N gold answers in order: a list, a numpy array or a JSON list string; an item may be a
            list of acceptable spellings. A single answer (N=1) may be a plain string.
        extra_info: verl's per-sample info; `n` (problems in the group, checked against the golds),
            `gold_alternatives`, and for `w_len` the `response_length` / `max_response_length` in tokens.
        w_acc, w_fmt, w_len: reward weights (`bcr_reward` presets: the paper's 2, 1, 0).
        thinking: read answers only after the last `</think>` (thinking models).
        timeout_s, workers: the symbolic check's limit per completion and its worker processes.

    Returns:
        `score` and the same float keys for every sample: `acc` (share of the N answers right), `fmt` (1 when
        every answer sits in its own labelled box), `answered`, `n_correct`, `stage1`, `verify_timeouts`,
        `len_penalty`, `n`, `correct_bits`, `response_tokens`, `truncated`, `reward_errors`.

    Raises:
        ValueError, TypeError: bad data (a ground truth that is empty or of another length than `n`), naming
            the sample. Nothing the policy writes raises.

    Example:
        >>> completion = "### Problem 1\nAnswer 1: \\boxed{4}\n\n### Problem 2\nAnswer 2: \\boxed{\\frac{1}{2}}"
        >>> r = compute_score("deepmath_bcr", completion, ["4", "0.5"], {"n": 2})
        >>> r["score"], r["acc"], r["fmt"]
        (3.0, 1.0, 1.0)
        >>> compute_score("deepmath_bcr", completion, ["4", "3"], {"n": 2})["score"]  # 2 x 0.5 + 1 x 1
        2.0
    """
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


def _completion_text(completion: Any) -> str:
    """TRL's completion: text (standard format) or a list of messages (conversational: the last one's content)."""
    if isinstance(completion, Mapping):
        return _as_text(completion.get("content"))
    if isinstance(completion, Sequence) and not isinstance(completion, str | bytes):
        return _completion_text(completion[-1]) if completion else ""
    return _as_text(completion)


def make_trl_reward(
    *, w_acc: float = 2.0, w_fmt: float = 1.0, thinking: bool = False, timeout_s: float = 2.0, workers: int = 2
) -> Callable[..., list[float]]:
    r"""A BCR reward function with TRL's signature, `(completions, solution, **kwargs) -> list[float]`.

    Args:
        w_acc, w_fmt: the reward's weights (the paper's 2 and 1). The explicit length term needs the true token
            count and is verl's only (`compute_score`'s `w_len`).
        thinking: read answers only after the last `</think>`.
        timeout_s, workers: the symbolic check's limit per completion and its worker processes.

    Returns:
        `bcr_reward(completions, solution, **kwargs)`: `completions` are TRL's (strings, or lists of messages
        whose last one is the answer), `solution` the dataset column of gold answers (per sample the N golds as a
        list or JSON list string, or one answer for N=1); an `n` column, when the dataset has one, is checked
        against the golds. Other keyword arguments (`prompts`, `completion_ids`, `trainer_state`, columns) are
        ignored.

    Example:
        >>> reward = make_trl_reward()
        >>> right = "### Problem 1\nAnswer 1: \\boxed{4}"                                  # standard format
        >>> wrong = [{"role": "assistant", "content": "### Problem 1\nAnswer 1: \\boxed{5}"}]  # conversational
        >>> reward([right, wrong], solution=["4", "4"])
        [3.0, 1.0]
    """

    def bcr_reward(completions: Sequence[Any], solution: Sequence[Any], **kwargs: Any) -> list[float]:
        sizes = kwargs.get("n")
        if len(completions) != len(solution):
            raise ValueError(f"{len(completions)} completions but {len(solution)} solutions")
        return [
            compute_score(
                "trl",
                _completion_text(completion),
                gold,
                {"n": sizes[i]} if sizes is not None else None,
                w_acc=w_acc,
                w_fmt=w_fmt,
                thinking=thinking,
                timeout_s=timeout_s,
                workers=workers,
            )["score"]
            for i, (completion, gold) in enumerate(zip(completions, solution))
        ]

    return bcr_reward


trl_reward = make_trl_reward()  # the paper's weights: GRPOTrainer(reward_funcs=[trl_reward])
