"""Opt-in (`pytest -m committed`): the second registration's main part (benchmarks/paper/, its runs/ and eval/ read
from git at the last commit that held them) judged again from its own files, and the demo's committed BCR model held
against the third miniature's run that made it. The default suite checks the code on fixtures instead
(tests/test_paper_scripts.py)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper import findings as paper_findings
from recipe_bcr.miniature.paper.command import _counter, plan_arms
from recipe_bcr.miniature.paper.history import V2_MAIN
from recipe_bcr.miniature.paper.writeup import finite
from recipe_bcr.miniature.toy.model import PAPER_TRAINED, RESOURCES, cache_key, load_specs, provenance
from recipe_bcr.miniature.toy.preconditions import load_preregistration, registration

pytestmark = pytest.mark.committed
REPO = Path(__file__).resolve().parents[1]
COMMITTED_V3 = REPO / "benchmarks" / "paper_v3"  # the third miniature, whose BCR run the demo's model is
RUN_FIELDS = ("group", "n", "budget", "seed", "reward", "single")


def _second_main_part(dest: Path) -> Path:
    """benchmarks/paper/ as it stood at V2_MAIN, written under `dest` (its runs/ and eval/ left the tree)."""
    done = subprocess.run(["git", "-C", str(REPO), "archive", V2_MAIN, "benchmarks/paper"], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"git cannot read {V2_MAIN[:7]} (a clone without full history): {done.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "benchmarks" / "paper"


def test_committed_findings_are_todays_judgement_of_the_committed_files(tmp_path):
    """`python -m recipe_bcr paper out=DIR registration=paper part=findings` on that folder rewrites the same
    findings.json; this re-derives it in process."""
    committed = _second_main_part(tmp_path)
    written = json.loads((committed / "findings.json").read_text())
    pre = json.loads((committed / "base_preconditions.json").read_text())
    assert written["registration"]["id"] == registration()["id"]  # judged by the paper.yaml of this checkout
    context = {k: written[k] for k in ("registration", "launched_at", "overrides", "train_steps", "budget")}
    context |= {k: written[k] for k in ("allow_missed_preconditions", "train_steps_registered", "stopped")}
    again = paper_findings.judge(
        committed, load_preregistration(), pre, _counter(RESOURCES / "toy_model_compete"), context
    )
    assert finite(json.loads(json.dumps(again))) == written


def test_committed_bcr_model_was_trained_by_todays_paper_settings():
    """Change a setting that shapes the run (paper_v3.yaml, the toy base) and this fails until the third miniature's
    run is trained again and shipped: python -m recipe_bcr paper out=DIR registration=paper_v3 --ship bcr_n3_s0"""
    made, today = provenance(), load_preregistration(name="paper_v3")
    plan = json.loads((COMMITTED_V3 / "plan.json").read_text())
    assert made["paper_config"] == plan["settings"] == {k: v for k, v in today.items() if k != "train_steps"}
    assert (made["registration"], made["launched_at"]) == (plan["registration"], plan["launched_at"])
    task, mspec, toy = load_specs([f"config={today['toy']}"])
    pre = json.loads((COMMITTED_V3 / "base_preconditions.json").read_text())
    assert made["base_key"] == pre["key"] == cache_key(task, mspec)
    assert made["budget"] == pre["details"]["budget_n3"]
    chosen = json.loads((COMMITTED_V3 / "steps_pilot.json").read_text())
    caps = {int(k): v for k, v in chosen["oracle_caps"].items()}
    planned = {r.name: r for r in plan_arms(today, made["budget"], caps)}[made["run"]["name"]]
    assert {k: made["run"][k] for k in RUN_FIELDS} == {k: getattr(planned, k) for k in RUN_FIELDS}
    assert planned.group == "main" and made["run"]["steps"] == chosen["steps"]
    # the committed evaluation and run record of that run are this model's, and these are the weights it evaluated
    assert made["run"] == json.loads((COMMITTED_V3 / "runs" / made["run"]["name"] / "run.json").read_text())
    summary = json.loads((COMMITTED_V3 / "eval" / made["run"]["name"] / "summary.json").read_text())
    assert made["eval"] == [
        {k: r[k] for k in ("n", "acc", "tokens_per_problem")} for r in summary if r["benchmark"] == "Toy"
    ]
    assert hashlib.sha256((PAPER_TRAINED / "model.safetensors").read_bytes()).hexdigest() == made["sha256"]
    base = RESOURCES / toy["shipped"]
    assert (PAPER_TRAINED / "tokenizer.json").read_bytes() == (base / "tokenizer.json").read_bytes()
    assert (
        json.loads((PAPER_TRAINED / "config.json").read_text())["num_hidden_layers"]
        == (json.loads((base / "config.json").read_text())["num_hidden_layers"])
    )
