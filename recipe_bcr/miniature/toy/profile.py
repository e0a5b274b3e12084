"""What a model writes per toy problem: steps, filler, and the accuracy that goes with each.

Reads an evaluation run's samples.jsonl (recipe_bcr.eval.runner) and splits every completion
at its "### Problem i" headers, so that the report can say which tokens a trained model
dropped (filler: no accuracy cost) and which it kept (steps: they carry the computation).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from recipe_bcr.miniature.toy.task import read_section, redundant_chars

_HEADER = re.compile(r"### Problem (\d++)")


def sections(completion: str, n: int) -> list[str]:
    """The text of problems 1..n (empty for a problem without its header)."""
    heads = [(m.start(), int(m.group(1))) for m in _HEADER.finditer(completion)]
    out = {}
    for k, (start, i) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(completion)
        if 1 <= i <= n and i not in out:
            out[i] = completion[start:end]
    return [out.get(i, "") for i in range(1, n + 1)]


def profile(records: Iterable[dict[str, Any]], n: int) -> dict[str, float]:
    """Steps and filler per problem, the share of redundant text, and accuracy with and without steps
    and filler, over the records at N=n."""
    count: Counter[str] = Counter()
    for rec in records:
        if int(rec["n"]) != n:
            continue
        for text, prob in zip(sections(rec["completion"], n), rec["problems"]):
            steps, filler = read_section(text)
            chars, redundant = redundant_chars(text)
            count.update(problems=1, steps=steps, filler=filler, chars=chars, redundant=redundant)
            for group in (("with_steps" if steps else "skipped"), ("with_filler" if filler else "no_filler")):
                count[group] += 1
                count[f"{group}_correct"] += bool(prob["correct"])

    def rate(a: str, b: str) -> float:
        return count[a] / count[b] if count[b] else float("nan")

    return {
        "problems": count["problems"],
        "steps_per_problem": rate("steps", "problems"),
        "filler_per_problem": rate("filler", "problems"),
        "share_with_steps": rate("with_steps", "problems"),
        "share_with_filler": rate("with_filler", "problems"),
        "redundancy": rate("redundant", "chars"),  # re-checks, restatements, narration, filler (task.redundant_chars)
        **{f"acc_{g}": rate(f"{g}_correct", g) for g in ("with_steps", "skipped", "with_filler", "no_filler")},
    }
