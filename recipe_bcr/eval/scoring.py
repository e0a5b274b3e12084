"""One generation of one task -> one per-sample record (JSON-ready), scored by the reward core."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from recipe_bcr.data.eval_tasks import Task
from recipe_bcr.engines.base import Generation
from recipe_bcr.eval.analysis import is_degenerate, marker_count
from recipe_bcr.eval.attribution import attribute
from recipe_bcr.grading.reward import ScoredCompletion, failed_completion, score_completion
from recipe_bcr.grading.verify import Gold, Verifier

logger = logging.getLogger(__name__)


def task_golds(task: Task) -> list[Gold]:
    return [p.answers[0] if len(p.answers) == 1 else list(p.answers) for p in task.problems]


def _score_guarded(task: Task, sample: int, text: str, verifier: Verifier, thinking: bool) -> ScoredCompletion:
    """The reward core's scoring, with training's last line of defence: a raise scores 0, with a warning."""
    try:
        return score_completion(text, task_golds(task), verifier, thinking=thinking)  # training's reader, any style
    except Exception:  # noqa: BLE001 - one bad completion must not end an evaluation run
        logger.warning("reward error: scoring %s raised; the sample scores 0", task.key(sample), exc_info=True)
        return failed_completion(task.n)


def score_sample(
    task: Task,
    sample: int,
    gen: Generation,
    verifier: Verifier,
    tokenizer: Any,
    *,
    thinking: bool,
    markers: Sequence[str],
    seed: int,
    keep_token_ids: bool = True,
) -> dict[str, Any]:
    scored = _score_guarded(task, sample, gen.text, verifier, thinking)
    spans = list(scored.sections)
    if task.n == 1 and spans[0] is None:  # one problem without a header: all the answer text is its
        spans = [(scored.answer_start, len(gen.text))]
    think_end = gen.text.rfind("</think>")
    think_span = [(0, think_end + len("</think>"))] if think_end >= 0 else [None]
    counts, method = attribute(tokenizer, gen.text, spans + think_span, gen.token_ids)
    problems = [
        {
            "id": p.problem_id,
            "gold": list(p.answers),
            "answer": scored.answers[i],
            "stage": scored.stages[i],
            "correct": scored.correct[i],
            "verdict": scored.methods[i],
            "scored": task.scored[i],
            "tokens": counts[i],
            "difficulty": None if p.difficulty != p.difficulty else p.difficulty,
        }
        for i, p in enumerate(task.problems)
    ]
    record: dict[str, Any] = {
        "key": task.key(sample),
        "benchmark": task.benchmark,
        "n": task.n,
        "group": task.group,
        "sample": sample,
        "seed": seed + sample,
        "style": task.style,
        "prompt": task.messages,
        "completion": gen.text,
        "generated_tokens": gen.num_tokens,
        "finish_reason": gen.finish_reason,
        "think_tokens": counts[-1],
        "attribution": method,
        "format_ok": bool(scored.breakdown["fmt"]),
        "markers": marker_count(gen.text, markers),
        "degenerate": is_degenerate(gen.text),
        "problems": problems,
    }
    if keep_token_ids and gen.token_ids is not None:
        record["token_ids"] = list(gen.token_ids)
    return record
