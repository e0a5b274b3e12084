"""Toy problems ("What is 3 + 4?") in the paper's group format, with verl parquet rows.

Pure functions: problems, the supervised target completions (with answer noise and
verbosity, the two things GRPO can then improve), and GroupRows for recipe_bcr.data.schema.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from dataclasses import dataclass

from recipe_bcr.data.schema import GroupRow, Problem

FILLER = "Wait, let me double-check."


@dataclass(frozen=True)
class ToySpec:
    """What the toy task draws from (hydra_configs/toy.yaml `task`)."""

    max_operand: int
    wrong_rate: float    # share of supervised answers off by one
    max_filler: int      # supervised reasoning repeats FILLER 0..max_filler times


def make_problem(rng: random.Random, spec: ToySpec, index: int) -> Problem:
    a, b = rng.randint(0, spec.max_operand), rng.randint(0, spec.max_operand)
    return Problem(problem_id=f"toy-{index}", question=f"What is {a} + {b}?", answers=(str(a + b),),
                   difficulty=float(a + b), topic="addition")


def operands(problem: Problem) -> tuple[int, int]:
    body = problem.question.removeprefix("What is ").removesuffix("?")
    a, b = body.split(" + ")
    return int(a), int(b)


def target_completion(problems: Sequence[Problem], rng: random.Random, spec: ToySpec) -> str:
    """A supervised answer: per problem a short computation, some filler, an answer that is
    wrong by one with probability `wrong_rate`."""
    parts = []
    for i, p in enumerate(problems, start=1):
        a, b = operands(p)
        answer = a + b
        if rng.random() < spec.wrong_rate:
            answer += rng.choice((-1, 1))
        filler = " ".join([FILLER] * rng.randint(0, spec.max_filler))
        reasoning = f"{a} plus {b}. {filler}".strip()
        parts.append(f"### Problem {i}\n{reasoning}\nAnswer{i}: \\boxed{{{answer}}}")
    return "\n\n".join(parts)


def make_groups(n: int, count: int, seed: int, spec: ToySpec, split: str) -> list[GroupRow]:
    rng = random.Random(f"{seed}:{split}:{n}")
    return [
        GroupRow(problems=[make_problem(rng, spec, k * n + j) for j in range(n)], split=split, index=k,
                 data_source="toy_addition")
        for k in range(count)
    ]


def write_toy_data(out_dir: Path, n: int, train_groups: int, val_groups: int, seed: int, spec: ToySpec) -> dict[str, Path]:
    """train_n{N}.parquet and val_n{N}.parquet in verl's schema, staged and renamed together."""
    from recipe_bcr.data.io import Staging
    from recipe_bcr.data.schema import SCHEMA, to_record

    out_dir = Path(out_dir)
    paths = {"train": out_dir / f"train_n{n}.parquet", "val": out_dir / f"val_n{n}.parquet"}
    with Staging() as stage:
        for split, count in (("train", train_groups), ("val", val_groups)):
            stage.parquet([to_record(r) for r in make_groups(n, count, seed, spec, split)], SCHEMA, paths[split])
    return paths


def write_toy_benchmark(path: Path, count: int, seed: int, spec: ToySpec) -> Path:
    """A plain benchmark file (problem, answer per JSON line) for the eval harness."""
    import json

    rng = random.Random(f"{seed}:benchmark")
    lines = [json.dumps({"problem": p.question, "answer": p.answers[0]})
             for p in (make_problem(rng, spec, k) for k in range(count))]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    return path
