"""Why answers go missing beyond the trained N: readings of a toy evaluation's sections beside the registered
accuracy, not registered rules.

A model trained at N=3 may close its fourth section with "Answer3:" (the grader then reads two answers for problem 3
and none for problem 4), or restate in a section a question that is not that section's. `relabelled` gives what
the grader would read had every answer label carried the number of the header above it, so a fall over N splits
into numbering and the rest; `faults` marks, per section, a label for another problem and a restated question
other than the section's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from recipe_bcr.grading.parse.extract import ANSWER_LABEL, SECTION_HEADER
from recipe_bcr.grading.reward import score_completion
from recipe_bcr.grading.verify import Verifier
from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import QUESTION, restated


def relabelled(completion: str) -> tuple[str, int]:
    """The completion with each answer label renumbered to the "### Problem i" header above it, and how many
    labels changed (one pass over headers and labels in order).

    Example:
        >>> relabelled("### Problem 4\\nSo 6.\\nAnswer3: \\\\boxed{6}")
        ('### Problem 4\\nSo 6.\\nAnswer4: \\\\boxed{6}', 1)
    """
    heads = [(m.start(), m[1]) for m in SECTION_HEADER.finditer(completion)]
    parts: list[str] = []
    pos, k, own, changed = 0, 0, None, 0
    for m in ANSWER_LABEL.finditer(completion):
        while k < len(heads) and heads[k][0] < m.start():
            own, k = heads[k][1], k + 1
        if own is not None and m[1].lstrip("0") != own.lstrip("0"):
            parts += [completion[pos : m.start(1)], own]
            pos, changed = m.end(1), changed + 1
    return "".join(parts) + completion[pos:], changed


def faults(rec: dict[str, Any]) -> list[dict[str, bool]]:
    """Per section 1..N of an evaluation record: `other_label`, an answer label in it names another problem;
    `wrong_question`, it restates a chain other than its own question's (a section never written has neither)."""
    n = int(rec["n"])
    prompt = "\n".join(m["content"] for m in rec["prompt"] if m["role"] == "user")
    asked = [(m[1] if (m := QUESTION.search(text)) else None) for text in sections(prompt, n)]
    out = []
    for i, (text, question) in enumerate(zip(sections(rec["completion"], n), asked), start=1):
        said = restated(text)
        out.append({
            "other_label": any(m[1].lstrip("0") != str(i) for m in ANSWER_LABEL.finditer(text)),
            "wrong_question": said is not None and question is not None and said.split() != question.split(),
        })  # fmt: skip
    return out


def header_accuracy(records: Iterable[dict[str, Any]], verifier: Verifier) -> float | None:
    """Accuracy over the scored problems of `records` with every answer read under its own section's header:
    a record whose labels all match its headers keeps its recorded verdicts, any other is scored again (the reward
    core, as the evaluation scored it) after `relabelled`. None without a scored problem."""
    right = total = 0
    for rec in records:
        text, changed = relabelled(rec["completion"])
        problems = rec["problems"]
        if changed:
            if any("gold" not in p for p in problems):
                raise ValueError(
                    f"eval record {rec.get('key', '?')}: its problems carry no `gold`, which re-scoring needs; "
                    "evaluate the run again (`python -m recipe_bcr.eval` writes it)"
                )
            golds = [p["gold"][0] if len(p["gold"]) == 1 else list(p["gold"]) for p in problems]
            correct = score_completion(text, golds, verifier).correct
        else:
            correct = [bool(p["correct"]) for p in problems]
        for p, ok in zip(problems, correct):
            if p["scored"]:
                right, total = right + ok, total + 1
    return right / total if total else None
