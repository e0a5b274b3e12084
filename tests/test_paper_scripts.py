"""The paper folder's scripts on a cut-down copy of a main part (tests/fixtures/paper_part/): the gates of a run's
first steps and the fresh-clone comparison. The committed run itself is re-judged only by the
opt-in `pytest -m committed` (tests/test_committed_run.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.gates import main as gates_main
from recipe_bcr.miniature.paper.gates import run_gates

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "paper_part"
SCRIPTS = REPO / "benchmarks" / "paper"


def _fresh_clone_check():
    """benchmarks/paper/fresh_clone_check.py as a module (it imports its neighbour seed_repeat.py, as when run)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location("fresh_clone_check", SCRIPTS / "fresh_clone_check.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def test_gates_on_the_first_steps_read_only_those_steps(tmp_path):
    """A pilot's steps rule judges its run on the first S steps (`--steps S`): the same gates as the run cut to S
    steps, not the whole run's; a run shorter than S is refused."""
    cut = tmp_path / "cut"
    shutil.copytree(FIXTURE / "runs", cut / "runs")
    for metrics in cut.glob("runs/*/metrics.jsonl"):
        metrics.write_text("".join(metrics.read_text().splitlines(keepends=True)[:30]))
    (first30,) = run_gates(FIXTURE, steps=30)
    assert first30 == run_gates(cut)[0] and first30["steps"] == 30
    assert first30["gates"] != run_gates(FIXTURE)[0]["gates"]
    with pytest.raises(ValueError, match="fewer than --steps 31"):
        run_gates(cut, steps=31)


def test_gates_on_no_steps_is_refused_by_name(capsys):
    with pytest.raises(SystemExit) as e:
        gates_main(["--gates", str(FIXTURE), "--steps", "0"])
    assert e.value.code == 2 and "--steps 0: judge at least one step" in capsys.readouterr().err


def test_fresh_clone_check_finds_one_changed_metric(tmp_path):
    """A copy of a main part is reproduced; one metric of one step changed in the copy is not, and the step is
    named; the samples are compared uncompressed (a kept copy is gzip'd)."""
    check = _fresh_clone_check()
    committed, fresh = tmp_path / "committed", tmp_path / "fresh"
    shutil.copytree(FIXTURE, committed)
    shutil.copytree(FIXTURE, fresh)
    samples = fresh / "eval" / "bcr_n3_s1" / "samples.jsonl.gz"
    subprocess.run(["gunzip", str(samples)], check=True)
    assert check.check(committed, fresh)["reproduced"]
    metrics = fresh / "runs" / "bcr_n3_s1" / "metrics.jsonl"
    rows = [json.loads(x) for x in metrics.read_text().splitlines()]
    rows[21]["bcr/fmt"] += 0.01
    metrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = check.check(committed, fresh)
    assert not result["reproduced"]
    assert result["runs"]["bcr_n3_s1"]["first_step_any_differs"] == rows[21]["step"]
    assert result["runs"]["bcr_n3_s1"]["steps_all_equal"] == result["runs"]["bcr_n3_s1"]["steps"] - 1


def test_fresh_clone_check_names_a_missing_file_before_writing(tmp_path):
    """An unfinished rerun (a run's metrics absent) stops with the file and the command that completes it, and
    --out is not written."""
    fresh = tmp_path / "fresh"
    shutil.copytree(FIXTURE, fresh)
    (fresh / "runs" / "n2_s1" / "metrics.jsonl").unlink()
    out = tmp_path / "record.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "fresh_clone_check.py"), "--fresh", str(fresh), "--committed", str(FIXTURE),
         "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "n2_s1/metrics.jsonl" in done.stderr and "python -m recipe_bcr paper out=DIR" in done.stderr
    assert not out.exists()
