"""`python -m recipe_bcr paper out=DIR --ship RUN`: commit one BCR run of a finished paper folder as the
demo's trained model (recipe_bcr/resources/, toy/model.py `PAPER_TRAINED`), with provenance.json beside the weights:
the run, the registered settings and their commit, the budget, the base's settings key, the run's evaluation and
the weights' sha256, which tests/test_demo_model.py holds against paper.yaml and benchmarks/paper/."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from recipe_bcr.miniature.toy.model import PAPER_TRAINED, PROVENANCE
from recipe_bcr.miniature.toy_command import ship


def provenance_of(root: Path, name: str) -> dict:
    """What the shipped copy of run `name` in the paper folder `root` records (without the weights' hash)."""
    plan = json.loads((root / "plan.json").read_text())
    pre = json.loads((root / "base_preconditions.json").read_text())
    summary = json.loads((root / "eval" / name / "summary.json").read_text())
    reg = "paper_v3" if "toy_pilot" in plan["settings"] else "paper"  # only the third has a toy pilot
    return {
        "made_by": f"python -m recipe_bcr paper out={root.name} registration={reg} --ship {name}",  # as the committed model records
        "run": json.loads((root / "runs" / name / "run.json").read_text()),
        "paper_config": plan["settings"],
        "registration": plan["registration"],
        "launched_at": plan["launched_at"],
        "budget": pre["details"]["budget_n3"],
        "base_key": pre["key"],
        "eval": [{k: r[k] for k in ("n", "acc", "tokens_per_problem")} for r in summary if r["benchmark"] == "Toy"],
    }


def ship_run(root: Path, name: str, dest: Path = PAPER_TRAINED) -> Path:
    """Copy run `name`'s merged model with its provenance to `dest` (staged, then renamed); a run that is not a
    trained and evaluated BCR run of `root` is refused, naming the ones there, before anything is written."""
    hf = root / "runs" / name / "hf_model"
    evaluated = root / "eval" / name / "summary.json"
    run = root / "runs" / name / "run.json"
    if not ((hf / "config.json").exists() and evaluated.exists() and run.exists()) or (
        json.loads(run.read_text()).get("group") != "main"
    ):
        there = sorted(
            p.parent.name
            for p in root.glob("runs/*/run.json")
            if json.loads(p.read_text()).get("group") == "main" and (root / "eval" / p.parent.name).exists()
        )
        raise ValueError(
            f"--ship {name}: {root} holds no trained and evaluated BCR run {name!r} "
            f"(BCR runs there: {', '.join(there) or 'none'})"
        )
    record = {
        **provenance_of(root, name),
        "sha256": hashlib.sha256((hf / "model.safetensors").read_bytes()).hexdigest(),
    }
    staged = Path(tempfile.mkdtemp(prefix=".ship-", dir=root)) / "model"
    shutil.copytree(hf, staged)
    (staged / PROVENANCE).write_text(json.dumps(record, indent=1) + "\n")
    try:
        return ship(staged, dest)
    finally:
        shutil.rmtree(staged.parent, ignore_errors=True)
