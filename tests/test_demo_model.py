"""The ship command that writes the demo's BCR model with its provenance, the demo's closing sentence, and the demo's
refusal of a comparison model that is not a run of today's settings (the committed model itself is checked by the
opt-in `pytest -m committed`)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.ship import ship_run
from recipe_bcr.miniature.toy.model import PROVENANCE, provenance

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "paper_part"


def _finished_paper_run(root: Path) -> dict:
    """A paper output folder holding one trained and evaluated BCR run (bcr_n3_s1 of the fixture, with stand-in
    weights), as `python -m recipe_bcr paper` leaves it; returns its run.json."""
    run = json.loads((FIXTURE / "runs" / "bcr_n3_s1" / "run.json").read_text())
    hf = root / "runs" / run["name"] / "hf_model"
    hf.mkdir(parents=True)
    (hf / "config.json").write_text("{}")
    (hf / "model.safetensors").write_bytes(b"stand-in weights")
    (root / "runs" / run["name"] / "run.json").write_text(json.dumps(run))
    for f in ("plan.json", "base_preconditions.json"):
        shutil.copy(FIXTURE / f, root / f)
    (root / "eval" / run["name"]).mkdir(parents=True)
    shutil.copy(FIXTURE / "eval" / run["name"] / "summary.json", root / "eval" / run["name"] / "summary.json")
    return run


def test_ship_writes_the_weights_with_their_provenance(tmp_path):
    root = tmp_path / "paper_out"
    run = _finished_paper_run(root)
    dest = ship_run(root, run["name"], dest=tmp_path / "shipped")
    made, plan = provenance(dest), json.loads((FIXTURE / "plan.json").read_text())
    assert made["run"] == run and made["paper_config"] == plan["settings"]
    assert (made["registration"], made["launched_at"]) == (plan["registration"], plan["launched_at"])
    assert made["sha256"] == hashlib.sha256(b"stand-in weights").hexdigest()
    assert (dest / "model.safetensors").read_bytes() == b"stand-in weights"
    assert made["made_by"] == f"python -m recipe_bcr paper out=paper_out registration=paper --ship {run['name']}"
    assert not list(root.glob(".ship-*"))


def test_a_model_shipped_from_the_third_registration_records_the_command_that_makes_it(tmp_path):
    root = tmp_path / "paper_v3"
    run = _finished_paper_run(root)
    plan = json.loads((root / "plan.json").read_text())
    (root / "plan.json").write_text(json.dumps({**plan, "settings": {**plan["settings"], "toy_pilot": {}}}))
    made = provenance(ship_run(root, run["name"], dest=tmp_path / "shipped"))
    assert made["made_by"] == f"python -m recipe_bcr paper out=paper_v3 registration=paper_v3 --ship {run['name']}"


@pytest.mark.parametrize("name", ["bcr_n3_s9", "truncation_n1_s0"])
def test_ship_of_a_run_that_is_not_a_bcr_run_there_names_them_and_writes_nothing(tmp_path, name):
    run = _finished_paper_run(tmp_path / "out")
    control = tmp_path / "out" / "runs" / "truncation_n1_s0"
    shutil.copytree(tmp_path / "out" / "runs" / run["name"], control)
    (control / "run.json").write_text(json.dumps({**run, "name": control.name, "group": "control"}))
    shutil.copytree(tmp_path / "out" / "eval" / run["name"], tmp_path / "out" / "eval" / control.name)
    with pytest.raises(ValueError, match=f"no trained and evaluated BCR run '{name}'.*runs there: {run['name']}\\)"):
        ship_run(tmp_path / "out", name, dest=tmp_path / "shipped")
    assert not (tmp_path / "shipped").exists()


@pytest.mark.parametrize(
    "planted, message",
    [
        (None, "no provenance beside the trained model"),
        ({"base_key": "000000000000"}, "not a model trained from this base"),
        ("{not json", "not valid JSON"),
    ],
)
def test_demo_without_a_valid_comparison_model_stops_before_any_stage(tmp_path, monkeypatch, capsys, planted, message):
    from recipe_bcr.miniature import demo

    folder = tmp_path / "model"
    folder.mkdir()
    if planted is not None:
        (folder / PROVENANCE).write_text(
            planted if isinstance(planted, str) else json.dumps({**provenance(), **planted})
        )
    cfg = {**demo._cfg(), "paper_model": str(folder)}  # an absolute path replaces the resources folder
    monkeypatch.setattr(demo, "_cfg", lambda: cfg)
    assert demo.run_demo(str(tmp_path / "out")) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
