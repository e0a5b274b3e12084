"""`python -m recipe_bcr toy --out DIR [--rebuild [--ship]] [config=toy_verbose] [key=value ...]`: the tiny
model and toy data. `python -m recipe_bcr.commands.toy --preconditions --out DIR [config=toy_verbose]`
measures whether that model sits in the paper's regime (recipe_bcr/toy/preconditions.py) against the
thresholds pre-registered in hydra_configs/paper_v1.yaml, and writes DIR/preconditions.json."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from recipe_bcr.toy.model import RESOURCES, ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_benchmark, write_toy_data


def ship(model: Path, dest: Path) -> Path:
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
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec, rebuild=rebuild, model_dir=cfg["model_dir"],
                         shipped=RESOURCES / cfg["shipped"])
    if to_ship:
        print(f"committed warm start replaced: {ship(model, RESOURCES / cfg['shipped'])}")
    d = cfg["data"]
    paths = write_toy_data(Path(out), d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    bench = write_toy_benchmark(Path(out) / "toy_benchmark.jsonl", 60, d["seed"], task)
    print(f"model: {model}\ndata: {paths['train']}, {paths['val']}, {bench}")
    print(f"train: python -m verl.trainer.main_ppo +recipe=bcr_toy bcr.data_dir={out} bcr.n={d['n']} bcr.model.path={model}")
    return 0


def paper_preconditions() -> dict:
    """The `preconditions` block of hydra_configs/paper_v1.yaml (the committed miniature's sizes and thresholds)."""
    from importlib import resources

    from omegaconf import OmegaConf

    cfg = OmegaConf.load(Path(str(resources.files("hydra_configs") / "paper_v1.yaml")))
    return OmegaConf.to_container(cfg["preconditions"], resolve=True)


def measure_preconditions(out: Path, overrides: list[str], pre: dict) -> dict:
    """Measure the toy base's regime against `pre` (paper.yaml `preconditions`) and write
    OUT/preconditions.json: {"model", "key", "rows": [{"name","value","threshold","met"}], "details"}."""
    from recipe_bcr.toy.model import built_with
    from recipe_bcr.toy.preconditions import measure, verdicts

    task, mspec, cfg = load_specs(overrides)
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"],
                         shipped=RESOURCES / cfg["shipped"])
    got = measure(model, task, int(pre["problems"]), int(pre["groups"]), int(pre["seed"]), float(pre["compression"]))
    result = {"model": str(model), "key": built_with(model), "toy_overrides": overrides,
              "rows": verdicts(got["values"], pre["thresholds"]), "details": got["details"]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "preconditions.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv: list[str] | None = None) -> int:
    from recipe_bcr.toy.preconditions import table

    ap = argparse.ArgumentParser(prog="python -m recipe_bcr.commands.toy")
    ap.add_argument("--preconditions", action="store_true", required=True,
                    help="measure the toy base against hydra_configs/paper.yaml preconditions")
    ap.add_argument("--out", default="toy_preconditions", help="folder for preconditions.json")
    ap.add_argument("overrides", nargs="*", help="toy config overrides, e.g. config=toy_verbose")
    args = ap.parse_args(argv)
    try:
        result = measure_preconditions(Path(args.out), args.overrides, paper_preconditions())
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(table(result["rows"]))
    print(json.dumps(result["details"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
