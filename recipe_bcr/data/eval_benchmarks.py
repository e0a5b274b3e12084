"""Evaluation benchmarks as problems with normalised answers.

A benchmark is described in config (hydra_configs/benchmarks/*.yaml): a file (a path, or
`bundled://...` for the files shipped in recipe_bcr/resources), the question column, and
where the answer is. Answers are normalised at load: integral floats lose their ".0"
(AMC's 27.0 is 27), `answer_from: last_boxed` takes the last box of a solution (Minerva),
list answers (OlympiadBench) become the gold plus accepted alternatives, and unescaped `$`
math delimiters inside an answer ("69$,$84") are removed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np

from recipe_bcr.data.io import DataError, read_table, require_columns
from recipe_bcr.data.schema import Problem
from recipe_bcr.grading.parse.boxed import BoxIndex, last_boxed

BUNDLED = "bundled://"
AnswerFrom = Literal["column", "last_boxed"]


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    path: str
    question: str = "problem"
    answer: str = "answer"
    answer_from: AnswerFrom = "column"
    difficulty: str | None = None  # optional numeric column (MATH-500: level)

    @classmethod
    def from_config(cls, name: str, cfg: Mapping[str, Any]) -> BenchmarkSpec:
        unknown = set(cfg) - {"path", "question", "answer", "answer_from", "difficulty"}
        if unknown:
            raise DataError(f"benchmark {name!r}: unknown keys {sorted(unknown)}")
        if not cfg.get("path"):
            raise DataError(f"benchmark {name!r}: no path given")
        return cls(name=name, **{k: v for k, v in cfg.items()})


def resolve_path(path: str) -> Path:
    if path.startswith(BUNDLED):
        return Path(str(resources.files("recipe_bcr") / "resources" / path[len(BUNDLED) :]))
    return Path(path).expanduser()


def normalize_answer(value: Any, where: str) -> tuple[str, ...]:
    """Gold first, then alternatives; errors name the row."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list | tuple):
        out = tuple(a for v in value for a in normalize_answer(v, where))
        if not out:
            raise DataError(f"{where}: empty answer list")
        return out
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise DataError(f"{where}: answer is missing (NaN/None)")
    if isinstance(value, float) and value.is_integer():
        return (str(int(value)),)
    text = str(value).strip()
    if isinstance(value, str) and _looks_like_float_integer(text):
        text = text[: text.index(".")]
    text = re.sub(r"(?<!\\)\$", "", text).strip()  # "69$,$84": math delimiters, not dollars
    boxes = BoxIndex(text).top_level
    if len(boxes) == 1 and (boxes[0].start, boxes[0].end) == (0, len(text)):
        text = boxes[0].content.strip()  # AIME24's golds are boxed: the box is the answer's wrapper
    if not text:
        raise DataError(f"{where}: answer is empty")
    return (text,)


def _looks_like_float_integer(text: str) -> bool:
    head, dot, tail = text.partition(".")
    return bool(dot) and head.lstrip("-").isdigit() and set(tail) == {"0"}


def load_benchmark(spec: BenchmarkSpec) -> list[Problem]:
    path = resolve_path(spec.path)
    df = read_table(path)
    needed = [spec.question, spec.answer]
    require_columns(df, needed, f"benchmark {spec.name} ({path})")
    if spec.difficulty:
        require_columns(df, [spec.difficulty], f"benchmark {spec.name} ({path})")
    levels = df[spec.difficulty] if spec.difficulty else [float("nan")] * len(df)
    problems = []
    for q, a, file, row, level in zip(df[spec.question], df[spec.answer], df["_file"], df["_row"], levels):
        where = f"benchmark {spec.name}: {file} row {row}"
        if not isinstance(q, str) or not q.strip():
            raise DataError(f"{where}: question is empty")
        if spec.answer_from == "last_boxed":
            boxed = last_boxed(str(a)) if isinstance(a, str) else None
            if boxed is None:
                raise DataError(f"{where}: no \\boxed{{}} answer in column {spec.answer!r}")
            a = boxed
        try:
            difficulty = float(level)
        except (TypeError, ValueError):
            difficulty = float("nan")
        problems.append(Problem(f"{spec.name}-{row}", q.strip(), normalize_answer(a, where), difficulty))
    return problems
