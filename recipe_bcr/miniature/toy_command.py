"""`python -m recipe_bcr toy out=DIR [--rebuild [--ship]] [config=toy_verbose] [device=cuda] [key=value ...]`: the
tiny model (warm-started on the CPU, or on a GPU with `device=cuda`) and toy data. `python -m recipe_bcr toy --preconditions out=DIR` measures the second miniature's base
(hydra_configs/paper.yaml names it) against the preconditions pre-registered there and writes
DIR/base_preconditions.json."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs
from recipe_bcr.miniature.toy.task import write_toy_benchmark, write_toy_data


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
    try:
        model = ensure_model(
            Path(cfg["cache_dir"]),
            task,
            mspec,
            rebuild=rebuild,
            model_dir=cfg["model_dir"],
            shipped=RESOURCES / cfg["shipped"],
            device=cfg["device"],
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if to_ship:
        print(f"committed warm start replaced: {ship(model, RESOURCES / cfg['shipped'])}")
    d = cfg["data"]
    paths = write_toy_data(Path(out), d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    bench = write_toy_benchmark(Path(out) / "toy_benchmark.jsonl", 60, d["seed"], task)
    print(f"model: {model}\ndata: {paths['train']}, {paths['val']}, {bench}")
    print(
        f"train: python -m verl.trainer.main_ppo +recipe=bcr_toy bcr.data_dir={out} bcr.n={d['n']} bcr.model.path={model}"
    )
    return 0


def measure_base(out: Path, overrides: list[str]) -> dict:
    """The second miniature's base preconditions (hydra_configs/paper.yaml, issue 35) on the toy base it names,
    written to OUT/base_preconditions.json with the commit that registered the thresholds and the launch time.
    `overrides`: paper.yaml dotlist overrides (smoke sizes, e.g. preconditions.problems=8)."""
    from recipe_bcr.miniature.toy.model import built_with
    from recipe_bcr.miniature.toy.preconditions import (
        launched_at,
        load_preregistration,
        measure_regime,
        regime_rows,
        registration,
    )

    name = next((o.split("=", 1)[1] for o in overrides if o.startswith("registration=")), "paper")
    overrides = [o for o in overrides if not o.startswith("registration=")]
    cfg = load_preregistration(overrides, name)
    reg, launched = registration(name=name), launched_at()
    pre = cfg["preconditions"]
    task, mspec, toy = load_specs([f"config={cfg['toy']}"])
    model = ensure_model(
        Path(toy["cache_dir"]), task, mspec, model_dir=toy["model_dir"], shipped=RESOURCES / toy["shipped"]
    )
    got = measure_regime(model, task, mspec.n_values, pre, batch_size=128)  # a tiny model: per-step overhead dominates
    if "interventions" in got:
        got["values"] |= got["interventions"]["values"]
    if name == "paper_v3":
        got["values"] |= _offline(cfg, task, mspec, toy, model, int(got["details"]["budget_n3"]), got["details"])
    result = {
        "registration": reg,
        "launched_at": launched,
        "made_by": f"python -m recipe_bcr toy --preconditions out={out}" + "".join(f" {o}" for o in overrides),
        "toy": cfg["toy"],
        "model": toy["shipped"],
        "key": built_with(model),
        "sampling": pre["sampling"],
        "rows": regime_rows(got["values"], pre["thresholds"]),
        "details": got["details"],
    }
    result["all_met"] = all(r["met"] for r in result["rows"])
    if "interventions" in got:  # only with preconditions.paired (toy/interventions.py): paper.yaml's file as it was
        iv = got["interventions"]
        pairs = {a: "".join("1" if c else "0" for c in v) for a, v in iv["pairs"].items()}  # per problem, in order
        result["interventions"] = {"values": iv["values"], "details": iv["details"], "pairs": pairs}
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "base_preconditions.json.tmp"
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(out / "base_preconditions.json")
    return result


def _offline(cfg: dict, task, mspec, toy: dict, model: Path, budget: int, details: dict) -> dict[str, float]:
    """The third registration's offline preconditions (allocator share at B, held-out overlap) on this base."""
    from dataclasses import asdict

    from transformers import AutoTokenizer

    from recipe_bcr.miniature.paper.design_checks import offline_preconditions, run_sources
    from recipe_bcr.miniature.stages import train_group_count
    from recipe_bcr.miniature.toy.task import benchmark_problems

    tok = AutoTokenizer.from_pretrained(str(model))
    ev = cfg["eval"]
    evaluation = [(p.problem_id, p.question) for p in benchmark_problems(int(ev["problems"]), int(ev["seed"]), task)]
    groups = train_group_count(toy["data"], {**cfg, "train_steps": cfg["steps"]["max"]})
    sources = run_sources(task, toy["data"], groups, asdict(mspec))
    got = offline_preconditions(
        task,
        lambda text: len(tok(text, add_special_tokens=False)["input_ids"]),
        budget,
        int(cfg["preconditions"]["long_chain_ops"]),
        evaluation,
        sources,
    )
    details["offline"] = got["details"]
    return got["values"]


def run_preconditions(out: str, overrides: list[str]) -> int:
    """`python -m recipe_bcr toy --preconditions out=DIR [paper.yaml overrides]`: measure and print the table."""
    from recipe_bcr.miniature.toy.preconditions import regime_table

    try:
        result = measure_base(Path(out), overrides)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(regime_table(result["rows"]))
    d = result["details"]
    print(
        f"budget B = {d['budget_n3']} (lambda {d['compression']}, L_avg {d['l_avg_n1']:.1f}); "
        f"registration {result['registration']['id']}; all met: {result['all_met']}"
    )
    return 0
