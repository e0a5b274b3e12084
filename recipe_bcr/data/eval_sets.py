"""N-grouped evaluation sets: every benchmark at every N, every problem scored once per N."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from recipe_bcr.benchmarks import BenchmarkSpec, load_benchmark
from recipe_bcr.data.io import DataError, Staging
from recipe_bcr.data.schema import SCHEMA, GroupRow, Problem, to_record
from recipe_bcr.grouping import cover_groups
from recipe_bcr.prompt import PromptStyle


def grouped_records(
    name: str, problems: list[Problem], n: int, seed: int, n1_style: PromptStyle = "group"
) -> list[dict[str, Any]]:
    """verl rows for one benchmark at one N (data_source = the benchmark name)."""
    idx, scored = cover_groups(len(problems), n, seed)
    style: PromptStyle = n1_style if n == 1 else "group"
    return [
        to_record(
            GroupRow(
                [problems[i] for i in members],
                split="test",
                index=g,
                data_source=name,
                benchmark=name,
                scored=[bool(s) for s in flags],
                prompt_style=style,
            )
        )
        for g, (members, flags) in enumerate(zip(idx, scored))
    ]


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
    manifest: dict[str, Any] = {"seed": seed, "n1_style": n1_style, "config": dict(config or {}), "sets": {}}
    loaded = {name: load_benchmark(BenchmarkSpec.from_config(name, spec)) for name, spec in benchmarks.items()}
    jobs = [(name, int(k)) for name in loaded for k in n]
    with Staging() as stage:
        for name, size in tqdm(jobs, desc="eval sets", disable=not progress):
            records = grouped_records(name, loaded[name], size, seed, n1_style)
            file = f"{name}_n{size}.parquet"
            stage.parquet(records, SCHEMA, out / file)
            scored = sum(sum(r["extra_info"]["scored"]) for r in records)
            manifest["sets"][f"{name}/n{size}"] = {
                "file": file,
                "benchmark": name,
                "n": size,
                "problems": len(loaded[name]),
                "groups": len(records),
                "scored_problems": scored,
                "filler_slots": len(records) * size - scored,
            }
        stage.json(manifest, out / "manifest.json")
    return manifest
