"""The demo's BCR model (recipe_bcr/miniature/resources/toy_model_compete_bcr) is a run of the second miniature committed in
benchmarks/paper/: its provenance.json against hydra_configs/paper.yaml, that folder's plan and base measurement,
the run today's plan makes, the committed evaluation of that run, and the weights themselves; the ship command that
writes it; and the demo's refusal of a model that is not one."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from recipe_bcr.miniature.demo import closing_sentence
from recipe_bcr.miniature.paper.command import plan_arms
from recipe_bcr.miniature.paper.ship import ship_run
from recipe_bcr.miniature.toy.model import PAPER_TRAINED, PROVENANCE, RESOURCES, cache_key, load_specs, provenance
from recipe_bcr.miniature.toy.preconditions import load_preregistration

REPORT = Path(__file__).resolve().parents[1] / "benchmarks" / "paper"
RUN_FIELDS = ("group", "n", "budget", "seed", "reward", "single")


def test_committed_bcr_model_was_trained_by_todays_paper_settings():
    """Change a setting that shapes the run (paper.yaml, the toy base) and this fails until the second miniature is
    run again and a run shipped: python -m recipe_bcr paper out=DIR --ship bcr_n3_s0"""
    made, today = provenance(), load_preregistration()
    plan = json.loads((REPORT / "plan.json").read_text())
    assert made["paper_config"] == plan["settings"] == {k: v for k, v in today.items() if k != "train_steps"}
    assert (made["thresholds_commit"], made["launched_at"]) == (plan["thresholds_commit"], plan["launched_at"])
    task, mspec, toy = load_specs([f"config={today['toy']}"])
    pre = json.loads((REPORT / "base_preconditions.json").read_text())
    assert made["base_key"] == pre["key"] == cache_key(task, mspec)
    assert made["budget"] == pre["details"]["budget_n3"]
    planned = {r.name: r for r in plan_arms(today, made["budget"])}[made["run"]["name"]]
    assert {k: made["run"][k] for k in RUN_FIELDS} == {k: getattr(planned, k) for k in RUN_FIELDS}
    assert planned.group == "main" and made["run"]["steps"] <= today["train_steps"]
    # the committed evaluation of that run is this model's, and these are the weights it evaluated
    summary = json.loads((REPORT / "eval" / made["run"]["name"] / "summary.json").read_text())
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


def _finished_paper_run(root: Path, made: dict) -> None:
    """A paper output folder holding one trained and evaluated BCR run, as `python -m recipe_bcr paper` leaves it."""
    name = made["run"]["name"]
    shutil.copytree(PAPER_TRAINED, root / "runs" / name / "hf_model", ignore=shutil.ignore_patterns(PROVENANCE))
    (root / "runs" / name / "run.json").write_text(json.dumps(made["run"]))
    for f in ("plan.json", "base_preconditions.json"):
        shutil.copy(REPORT / f, root / f)
    (root / "eval" / name).mkdir(parents=True)
    shutil.copy(REPORT / "eval" / name / "summary.json", root / "eval" / name / "summary.json")


def test_ship_writes_the_weights_with_their_provenance(tmp_path):
    made = provenance()
    root = tmp_path / made["made_by"].split("out=")[1].split()[0]
    _finished_paper_run(root, made)
    dest = ship_run(root, made["run"]["name"], dest=tmp_path / "shipped")
    assert provenance(dest) == made  # the committed provenance is exactly what the ship writes
    assert (dest / "model.safetensors").read_bytes() == (PAPER_TRAINED / "model.safetensors").read_bytes()
    assert not list(root.glob(".ship-*"))


@pytest.mark.parametrize("name", ["bcr_n3_s9", "truncation_n1_s0"])
def test_ship_of_a_run_that_is_not_a_bcr_run_there_names_them_and_writes_nothing(tmp_path, name):
    made = provenance()
    _finished_paper_run(tmp_path / "out", made)
    control = tmp_path / "out" / "runs" / "truncation_n1_s0"
    shutil.copytree(tmp_path / "out" / "runs" / made["run"]["name"], control)
    (control / "run.json").write_text(json.dumps({**made["run"], "name": control.name, "group": "control"}))
    shutil.copytree(tmp_path / "out" / "eval" / made["run"]["name"], tmp_path / "out" / "eval" / control.name)
    with pytest.raises(
        ValueError, match=f"no trained and evaluated BCR run '{name}'.*runs there: {made['run']['name']}\\)"
    ):
        ship_run(tmp_path / "out", name, dest=tmp_path / "shipped")
    assert not (tmp_path / "shipped").exists()


def test_closing_sentence_reads_the_table_at_n1(tmp_path):
    rows = [("base", 1, 0.95, 80.0), ("paper_bcr", 1, 1.0, 60.0), ("demo_bcr", 1, 0.9, 78.0), ("base", 2, 0.1, 10.0)]
    (tmp_path / "summary.csv").write_text(
        "label,benchmark,n,acc,tokens_per_problem\n" + "".join(f"{a},Toy,{n},{acc},{t}\n" for a, n, acc, t in rows)
    )
    sentence = closing_sentence(
        tmp_path / "summary.csv", {"base": "b", "paper_bcr": "40 steps", "demo_bcr": "4 live steps"}
    )
    assert "(40 steps) writes 60 tokens a problem against the base's 80 (-25%) at 100% accuracy against 95%" in sentence
    assert sentence.endswith("4 live steps give 78 tokens at 90%.") and sentence.count(".") == 1


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
