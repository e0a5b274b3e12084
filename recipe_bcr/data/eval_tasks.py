"""Evaluation tasks: every benchmark at every N as prompt groups (no inference here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recipe_bcr.data.eval_benchmarks import BenchmarkSpec, load_benchmark
from recipe_bcr.data.grouping import cover_groups
from recipe_bcr.data.prompt import PromptStyle, build_messages
from recipe_bcr.data.schema import Problem


@dataclass(frozen=True)
class Task:
    benchmark: str
    n: int
    group: int
    problems: tuple[Problem, ...]
    scored: tuple[bool, ...]
    style: PromptStyle

    @property
    def messages(self) -> list[dict[str, str]]:
        return build_messages([p.question for p in self.problems], style=self.style)

    def key(self, sample: int) -> str:
        return f"{self.benchmark}|n{self.n}|g{self.group}|s{sample}"


def build_tasks(
    benchmarks: Mapping[str, Mapping[str, Any]],
    n: Sequence[int],
    seed: int = 0,
    n1_style: PromptStyle = "group",
    limit: int | None = None,
) -> list[Task]:
    """Groups of N for every benchmark; with `limit`, only its first problems (smoke runs)."""
    tasks = []
    for name, spec in benchmarks.items():
        problems = load_benchmark(BenchmarkSpec.from_config(name, spec))
        if limit:
            problems = problems[: int(limit)]
        for size in n:
            idx, scored = cover_groups(len(problems), int(size), seed)
            style: PromptStyle = n1_style if size == 1 else "group"
            for g, (members, flags) in enumerate(zip(idx, scored)):
                tasks.append(
                    Task(name, int(size), g, tuple(problems[i] for i in members), tuple(bool(f) for f in flags), style)
                )
    return tasks
