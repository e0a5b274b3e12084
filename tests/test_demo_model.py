"""The demo's BCR model (recipe_bcr/resources/toy_model_verbose_bcr) is a paper command's run under
today's settings: its provenance.json against hydra_configs/paper.yaml, the base's settings key, the
run today's plan makes, the committed report's evaluation of that run, and the weights themselves; and
the committed report's training figures re-derived from the committed run metrics."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from recipe_bcr.commands.demo import closing_sentence
from recipe_bcr.commands.paper_v1 import load_config, plan, ship_run
from recipe_bcr.toy.model import PAPER_TRAINED, PROVENANCE, RESOURCES, cache_key, load_specs, provenance

REPORT = Path(__file__).resolve().parents[1] / "benchmarks" / "paper"
TRAINING_KEYS = ("toy", "preconditions", "train_steps", "grpo", "bcr", "train_overrides")
RUN_FIELDS = ("group", "n", "budget", "seed", "reward", "single")


def test_committed_bcr_model_was_trained_by_todays_paper_settings():
    """Change a setting that shapes the run (paper.yaml's training keys, the toy base) and this fails
    until the model is retrained and shipped: python -m recipe_bcr paper config=paper_v1 out=DIR --ship bcr_n3_s0"""
    made, today = provenance(), load_config([])
    assert {k: made["paper_config"][k] for k in TRAINING_KEYS} == {k: today[k] for k in TRAINING_KEYS}
    task, mspec, toy = load_specs([f"config={today['toy']}"])
    assert made["base_key"] == cache_key(task, mspec)
    # the budget is the calibration of the committed report's preconditions, and today's plan makes this run
    pre = json.loads((REPORT / "preconditions.json").read_text())
    assert pre["key"] == made["base_key"]
    assert made["tokens_per_problem"] == round(pre["details"]["compression"] * pre["details"]["l_avg_n1"], 2)
    cfg = {**today, "bcr": {**today["bcr"], "tokens_per_problem": made["tokens_per_problem"]}}
    planned = {r.name: r for r in plan(cfg)}[made["run"]["name"]]
    assert {k: made["run"][k] for k in RUN_FIELDS} == {k: getattr(planned, k) for k in RUN_FIELDS}
    assert planned.group == "main" and planned.seed in today["seeds"] and made["run"]["steps"] == today["train_steps"]
    # the report's evaluation of that run is this model's, and these are the weights it evaluated
    summary = json.loads((REPORT / "eval" / made["run"]["name"] / "summary.json").read_text())
    assert made["eval"] == [{k: r[k] for k in ("n", "acc", "tokens_per_problem")} for r in summary]
    assert hashlib.sha256((PAPER_TRAINED / "model.safetensors").read_bytes()).hexdigest() == made["sha256"]
    base = RESOURCES / toy["shipped"]
    assert (PAPER_TRAINED / "tokenizer.json").read_bytes() == (base / "tokenizer.json").read_bytes()
    assert (
        json.loads((PAPER_TRAINED / "config.json").read_text())["hidden_size"]
        == json.loads((base / "config.json").read_text())["hidden_size"]
    )


def _finished_paper_run(root: Path, made: dict) -> None:
    """A paper output folder holding one trained and evaluated run, as run_paper leaves it."""
    name = made["run"]["name"]
    shutil.copytree(PAPER_TRAINED, root / "runs" / name / "hf_model", ignore=shutil.ignore_patterns(PROVENANCE))
    (root / "runs" / name / "run.json").write_text(json.dumps(made["run"]))
    (root / "paper_config.json").write_text(json.dumps(made["paper_config"]))
    shutil.copy(REPORT / "preconditions.json", root / "preconditions.json")
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


def test_ship_of_a_run_that_is_not_there_names_the_runs_and_writes_nothing(tmp_path):
    made = provenance()
    _finished_paper_run(tmp_path / "out", made)
    with pytest.raises(ValueError, match=f"no trained and evaluated run 'bcr_n3_s9'.*{made['run']['name']}"):
        ship_run(tmp_path / "out", "bcr_n3_s9", dest=tmp_path / "shipped")
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


def test_committed_report_training_table_comes_from_the_committed_run_metrics():
    """benchmarks/paper/runs/ holds what the report's training table was made from (every run's per-step
    metrics and run.json), so the committed figures can be re-derived without rerunning the hour."""
    from recipe_bcr.commands.paper_report import _metrics, training_table
    from recipe_bcr.commands.paper_stages import Run

    fields = set(Run.__dataclass_fields__)
    dirs = sorted((REPORT / "runs").iterdir())
    runs = [Run(**{k: v for k, v in json.loads((d / "run.json").read_text()).items() if k in fields}) for d in dirs]
    assert {r.name for r in runs} == {
        r.name
        for r in plan(
            {
                **load_config([]),
                "bcr": {**load_config([])["bcr"], "tokens_per_problem": provenance()["tokens_per_problem"]},
            }
        )
    }
    rows = training_table(runs, {d.name: _metrics(d) for d in dirs}).splitlines()[2:]
    report = (REPORT / "report.md").read_text().splitlines()
    assert len(rows) == 6 and all(row in report for row in rows), rows


@pytest.mark.parametrize(
    "planted, message",
    [
        (None, "no provenance beside the trained model"),
        ({"base_key": "000000000000"}, "not a model trained from this base"),
        ("{not json", "not valid JSON"),
    ],
)
def test_demo_without_a_valid_comparison_model_stops_before_any_stage(tmp_path, monkeypatch, capsys, planted, message):
    from recipe_bcr.commands import demo

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
