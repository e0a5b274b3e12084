"""Row cleaning with a reason for every row not used.

Rules, in order (a row is dropped by the first that applies):
  empty_question / empty_answer   missing, NaN or blank;
  unverifiable_answer             proof-style ("proof", "show that", QED marks) or long
                                  prose / multi-part text (more than 3 words outside LaTeX,
                                  or over 200 characters): nothing a grader can check;
  contaminated:<benchmark>        the question equals an evaluation problem after
                                  normalisation (lowercase, no whitespace, no $);
  duplicate_of:<file>#<row>       the question equals an earlier kept question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

_PROOF = re.compile(r"\b(proof|prove[ds]?|show that|q\.?e\.?d)\b|\\blacksquare|\\square|∎", re.IGNORECASE)
_LATEX = re.compile(r"\\[A-Za-z]+|\$[^$]*\$|\\\(.*?\\\)|[{}^_]")
_WORD = re.compile(r"[A-Za-z]{2,}")


def normalize_question(text: str) -> str:
    return re.sub(r"[\s$]+", "", text).lower()


def _blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return not str(value).strip()


def answer_problem(answer: str) -> str | None:
    """Why an answer cannot be graded automatically, or None if it can."""
    if _PROOF.search(answer):
        return "unverifiable_answer"
    if len(answer) > 200:
        return "unverifiable_answer"
    prose = _LATEX.sub(" ", answer)
    if len(_WORD.findall(prose)) > 3:
        return "unverifiable_answer"
    return None


@dataclass(frozen=True)
class Dropped:
    file: str
    row: int
    reason: str


def clean(df: pd.DataFrame, contamination: dict[str, str] | None = None) -> tuple[pd.DataFrame, list[Dropped]]:
    """Keep the usable rows; return every other row with its reason.

    `contamination` maps a normalised question to the benchmark it belongs to.
    """
    contamination = contamination or {}
    keep: list[int] = []
    dropped: list[Dropped] = []
    seen: dict[str, str] = {}
    for pos, (q, a, file, row) in enumerate(zip(df["question"], df["final_answer"], df["_file"], df["_row"])):
        reason = None
        if _blank(q):
            reason = "empty_question"
        elif _blank(a):
            reason = "empty_answer"
        else:
            reason = answer_problem(str(a).strip())
            if reason is None:
                key = normalize_question(str(q))
                if key in contamination:
                    reason = f"contaminated:{contamination[key]}"
                elif key in seen:
                    reason = f"duplicate_of:{seen[key]}"
                else:
                    seen[key] = f"{file}#{row}"
        if reason is None:
            keep.append(pos)
        else:
            dropped.append(Dropped(str(file), int(row), reason))
    return df.iloc[keep].reset_index(drop=True), dropped


def contamination_index(benchmarks: Iterable[tuple[str, Iterable[str]]]) -> dict[str, str]:
    """Normalised question -> benchmark name, for exact-match decontamination."""
    return {normalize_question(q): name for name, questions in benchmarks for q in questions}
