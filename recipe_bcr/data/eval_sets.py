"""N-grouped evaluation sets as verl parquet: the evaluation tasks, written in verl's schema.

The groups are exactly those `python -m recipe_bcr.eval` asks (recipe_bcr.data.eval_tasks), so
verl's validation during training and the evaluation harness see the same prompts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from recipe_bcr.data.eval_tasks import Task, build_tasks
from recipe_bcr.data.io import DataError, Staging
from recipe_bcr.data.prompt import PromptStyle
from recipe_bcr.data.schema import SCHEMA, GroupRow, to_record


def task_record(task: Task) -> dict[str, Any]:
    """One verl row for one evaluation group (data_source = the benchmark name)."""
    return to_record(
        GroupRow(
            task.problems,
            split="test",
            index=task.group,
            data_source=task.benchmark,
            benchmark=task.benchmark,
            scored=task.scored,
            prompt_style=task.style,
        )
    )


def build_eval_sets(
    *,
    benchmarks: Mapping[str, Mapping[str, Any]],
    output_dir: str | Path,
    n: list[int],
    seed: int,
    n1_style: PromptStyle = "group",
    progress: bool = True,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write {benchmark}_n{N}.parquet for every benchmark and N, plus manifest.json."""
    if not benchmarks:
        raise DataError("no benchmarks configured")
    if not n or any(int(k) < 1 for k in n):
        raise DataError(f"n must be a non-empty list of group sizes >= 1, got {n}")
    out = Path(output_dir)
    by_set: dict[tuple[str, int], list[Task]] = defaultdict(list)
    for task in build_tasks(benchmarks, [int(k) for k in n], seed, n1_style):
        by_set[(task.benchmark, task.n)].append(task)
    manifest: dict[str, Any] = {"seed": seed, "n1_style": n1_style, "config": dict(config or {}), "sets": {}}
    with Staging() as stage:
        for (name, size), tasks in tqdm(by_set.items(), desc="eval sets", disable=not progress):
            file = f"{name}_n{size}.parquet"
            stage.parquet([task_record(t) for t in tasks], SCHEMA, out / file)
            scored = sum(sum(t.scored) for t in tasks)
            manifest["sets"][f"{name}/n{size}"] = {
                "file": file,
                "benchmark": name,
                "n": size,
                "problems": scored,
                "groups": len(tasks),
                "scored_problems": scored,
                "filler_slots": len(tasks) * size - scored,
            }
        stage.json(manifest, out / "manifest.json")
    return manifest
