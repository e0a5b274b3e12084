"""`python -m recipe_bcr toy --out DIR [--rebuild [--ship]] [key=value ...]`: the tiny model and toy data."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from recipe_bcr.toy.model import SHIPPED, ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_benchmark, write_toy_data


def ship(model: Path, dest: Path = SHIPPED) -> Path:
    """Replace the committed warm start with `model` (staged, then renamed)."""
    stage = Path(tempfile.mkdtemp(prefix=".toy-model-", dir=dest.parent))
    shutil.copytree(model, stage, dirs_exist_ok=True)
    if dest.exists():
        shutil.rmtree(dest)
    stage.rename(dest)
    return dest


def run_toy(out: str, overrides: list[str], rebuild: bool = False, to_ship: bool = False) -> int:
    try:
        task, mspec, cfg = load_specs(overrides)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec, rebuild=rebuild)
    if to_ship:
        print(f"committed warm start replaced: {ship(model)}")
    d = cfg["data"]
    paths = write_toy_data(Path(out), d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    bench = write_toy_benchmark(Path(out) / "toy_benchmark.jsonl", 60, d["seed"], task)
    print(f"model: {model}\ndata: {paths['train']}, {paths['val']}, {bench}")
    print(f"train: python -m verl.trainer.main_ppo +recipe=bcr_toy bcr.data_dir={out} bcr.n={d['n']} bcr.model.path={model}")
    return 0
