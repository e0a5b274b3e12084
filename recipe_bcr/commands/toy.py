"""`python -m recipe_bcr toy --out DIR [key=value ...]`: the tiny model (cached) and toy data."""

from __future__ import annotations

import sys
from pathlib import Path

from recipe_bcr.toy.model import ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_benchmark, write_toy_data


def run_toy(out: str, overrides: list[str]) -> int:
    try:
        task, mspec, cfg = load_specs(overrides)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec)
    d = cfg["data"]
    paths = write_toy_data(Path(out), d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    bench = write_toy_benchmark(Path(out) / "toy_benchmark.jsonl", 60, d["seed"], task)
    print(f"model: {model}\ndata: {paths['train']}, {paths['val']}, {bench}")
    print(f"train: python -m verl.trainer.main_ppo +recipe=bcr_toy bcr.data_dir={out} bcr.n={d['n']} bcr.model.path={model}")
    return 0
