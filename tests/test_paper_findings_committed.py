"""The committed second miniature (benchmarks/paper/) judged again from its own files: its findings.json is what
today's rules make of its run metrics and evaluation samples, so every verdict and number there can be re-derived
from the repository (`python -m recipe_bcr paper out=benchmarks/paper part=findings` rewrites it unchanged)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper import findings as paper_findings
from recipe_bcr.miniature.paper.command import _counter
from recipe_bcr.miniature.toy.model import RESOURCES
from recipe_bcr.miniature.toy.preconditions import load_preregistration

COMMITTED = Path(__file__).resolve().parents[1] / "benchmarks" / "paper"
PROMPTS8 = COMMITTED / "prompts8"  # the main part at 8 prompts a step, and its rerun from a second fresh clone
ARRIVAL = COMMITTED / "arrival_batches"  # the main part at 16 before the rollout sorted a step, and its rerun


# folder: whether its findings are interpretable (every BCR seed met its gates)
MAIN_PARTS = {"": True, "arrival_batches": True, "prompts8": False, "lr4": True, "lr4/fresh_clone": False}


@pytest.mark.parametrize("folder", MAIN_PARTS)
def test_committed_findings_are_todays_judgement_of_the_committed_files(folder):
    """The main part (16 prompts a step), the one before the rollout sorted a step's requests (arrival_batches/), the
    one at 8 (prompts8/), the earlier one at 4e-4 (lr4/) and that one run again from a fresh clone (lr4/fresh_clone/)."""
    root = COMMITTED / folder
    written = json.loads((root / "findings.json").read_text())
    plan = json.loads((root / "plan.json").read_text())
    pre = json.loads((root / "base_preconditions.json").read_text())
    # registered before the run, and judged by the thresholds the run was launched under
    assert written["thresholds_commit"] == plan["thresholds_commit"] == pre["thresholds_commit"]
    assert pre["launched_at"] <= written["launched_at"] == plan["launched_at"]
    context = {k: written[k] for k in ("thresholds_commit", "launched_at", "overrides", "train_steps", "budget")}
    context |= {k: written[k] for k in ("allow_missed_preconditions", "train_steps_registered", "stopped")}
    cfg = load_preregistration()
    again = paper_findings.judge(root, cfg, pre, _counter(RESOURCES / "toy_model_compete"), context)
    assert json.loads(json.dumps(again)) == written
    # the registered sizes: every arm at every seed, 500 problems each
    assert written["interpretable"] == MAIN_PARTS[folder]
    assert written["eval_problems"] == dict.fromkeys(paper_findings.ARMS, 500)
    assert all(c["seeds"] == len(cfg["seeds"]) for c in written["controls"].values())


@pytest.mark.parametrize(
    "pilot",
    [
        "pilot",
        "pilot_rerun",
        "pilot_lr4",
        "pilot_lr3/s3",
        "pilot_lr3/s4",
        "pilot_lr3/lr2_s3",
        "pilot_lr3/lr4_s3",
        "pilot16/s3",
        "pilot16/s4",
    ],
)
def test_each_committed_pilot_holds_the_metrics_its_gates_were_read_from(pilot):
    """The pilots' READMEs print their gates with `python -m recipe_bcr.miniature.paper.report --gates DIR`: the run
    metrics must be committed beside pilot.json, and give the gates it records."""
    from recipe_bcr.miniature.paper.report import run_gates

    recorded = json.loads((COMMITTED / pilot / "pilot.json").read_text())
    (again,) = run_gates(COMMITTED / pilot)
    assert again["run"] == recorded["run"] and again["steps"] == recorded["train_steps"]
    assert json.loads(json.dumps(again["gates"])) == recorded["gates"]


def test_gates_on_the_first_steps_read_only_those_steps(tmp_path):
    """A pilot's steps rule judges its run on the first S steps (`--steps S`): the same gates as the run cut to S
    steps, not the whole run's; a run shorter than S is refused."""
    from recipe_bcr.miniature.paper.report import run_gates

    src = COMMITTED / "pilot16" / "s3"
    cut = tmp_path / "cut"
    shutil.copytree(src / "runs", cut / "runs")
    metrics = next(cut.glob("runs/*/metrics.jsonl"))
    metrics.write_text("".join(metrics.read_text().splitlines(keepends=True)[:60]))
    (first60,) = run_gates(src, steps=60)
    assert first60 == run_gates(cut)[0] and first60["steps"] == 60
    assert first60["gates"] != run_gates(src)[0]["gates"]
    with pytest.raises(ValueError, match="fewer than --steps 61"):
        run_gates(cut, steps=61)


def _fresh_clone_check():
    import sys

    sys.path.insert(0, str(COMMITTED))  # the script imports its neighbour seed_repeat.py, as when run from there
    import fresh_clone_check

    return fresh_clone_check


@pytest.mark.parametrize("root", [COMMITTED, ARRIVAL, PROMPTS8], ids=["main", "arrival_batches", "prompts8"])
def test_fresh_clone_record_describes_the_committed_files(root):
    """fresh_clone.json compares the main part run again from a fresh clone with the committed files: its hashes
    are the committed samples', its first verdicts the committed findings', and it says reproduced only when every
    part was equal."""
    record = json.loads((root / "fresh_clone.json").read_text())
    findings = json.loads((root / "findings.json").read_text())
    check = _fresh_clone_check()
    assert {k: v[0] for k, v in record["verdicts"].items()} == {
        k: f["verdict"] for k, f in findings["findings"].items()
    }
    assert record["launched_at"][0] == findings["launched_at"] < record["launched_at"][1]
    assert record["thresholds_commit"] == [findings["thresholds_commit"]] * 2
    for label, ev in record["evaluations"].items():
        assert ev["samples_sha256"] == check.sha256(root / "eval" / label / "samples.jsonl")
    parts_equal = record["base_preconditions_equal"] and record["findings_equal_but_ephemeral"]
    parts_equal &= all(r["run_json_equal"] and r["steps_all_equal"] == r["steps"] for r in record["runs"].values())
    parts_equal &= all(e["samples_equal"] and e["summary_equal"] for e in record["evaluations"].values())
    assert record["reproduced"] == parts_equal
    runs, evals = check.main_part(root)
    assert list(record["runs"]) == runs and list(record["evaluations"]) == evals
    # the rerun's side is the folder committed beside it (its findings, gates and run metrics; not its samples)
    rerun = json.loads((root / "fresh_clone" / "findings.json").read_text())
    assert {k: v[1] for k, v in record["verdicts"].items()} == {k: f["verdict"] for k, f in rerun["findings"].items()}
    assert record["launched_at"][1] == rerun["launched_at"]
    for mine, theirs in zip(findings["gates"], rerun["gates"], strict=True):
        assert record["gates"][mine["run"]] == [check.gate_summary(mine), check.gate_summary(theirs)]
    for name, run in record["runs"].items():
        a = check.metric_rows(root / "runs" / name / "metrics.jsonl")
        b = check.metric_rows(root / "fresh_clone" / "runs" / name / "metrics.jsonl")
        assert check.compare(a, b)["first_step_any_differs"] == run["first_step_any_differs"]


def test_fresh_clone_check_finds_one_changed_metric(tmp_path):
    """A copy of (part of) the committed main part is reproduced; one metric of one step changed in the copy is not,
    and the step is named."""

    check = _fresh_clone_check()
    committed, fresh = tmp_path / "committed", tmp_path / "fresh"
    for name in (
        "runs/bcr_n3_s1",
        "eval/truncation_n1_s0",
        "findings.json",
        "base_preconditions.json",
        "wall_seconds.json",
    ):
        src = PROMPTS8 / name
        (committed / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, committed / name)
    shutil.copytree(committed, fresh)
    assert check.check(committed, fresh)["reproduced"]
    metrics = fresh / "runs" / "bcr_n3_s1" / "metrics.jsonl"
    rows = [json.loads(x) for x in metrics.read_text().splitlines()]
    rows[41]["bcr/fmt"] += 0.01
    metrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = check.check(committed, fresh)
    assert not result["reproduced"]
    assert result["runs"]["bcr_n3_s1"]["first_step_any_differs"] == rows[41]["step"]
    assert result["runs"]["bcr_n3_s1"]["steps_all_equal"] == result["runs"]["bcr_n3_s1"]["steps"] - 1


def test_fresh_clone_check_names_a_missing_file_before_writing(tmp_path):
    """An unfinished rerun (a run's metrics absent) stops with the file and the command that completes it, and
    --out is not written."""
    import subprocess
    import sys

    fresh = tmp_path / "fresh"
    for name in ("runs", "eval", "findings.json", "base_preconditions.json", "wall_seconds.json"):
        src = PROMPTS8 / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, fresh / name)
    (fresh / "runs" / "n2_s1" / "metrics.jsonl").unlink()
    out = tmp_path / "record.json"
    script = COMMITTED / "fresh_clone_check.py"
    done = subprocess.run(
        [sys.executable, str(script), "--fresh", str(fresh), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "n2_s1/metrics.jsonl" in done.stderr and "python -m recipe_bcr paper out=DIR" in done.stderr
    assert not out.exists()


def test_the_baselines_update_branch_repeats_into_the_two_committed_outcomes():
    """seed_repeat_baseline_n1_s0/: baseline_n1_s0 trained twice at once parts at the step its repeat.json records,
    and each copy is, at every step, one of the two committed runs of it (the main part's and the rerun's)."""
    check = _fresh_clone_check()
    here = PROMPTS8 / "seed_repeat_baseline_n1_s0"
    recorded = json.loads((here / "repeat.json").read_text())
    a, b = (check.metric_rows(here / side / "metrics.jsonl") for side in ("a", "b"))
    assert check.compare(a, b)["first_step_any_differs"] == recorded["first_step_any_differs"] is not None
    committed = check.metric_rows(PROMPTS8 / "runs" / "baseline_n1_s0" / "metrics.jsonl")
    rerun = check.metric_rows(PROMPTS8 / "fresh_clone" / "runs" / "baseline_n1_s0" / "metrics.jsonl")
    assert check.compare(a, rerun)["first_step_any_differs"] is None
    assert check.compare(b, committed)["first_step_any_differs"] is None


@pytest.mark.parametrize("run", ["baseline_n1_s0", "bcr_n3_s0"])
def test_a_main_run_trained_twice_at_once_gives_the_committed_one(run):
    """seed_repeat_16/<run>/: the run trained twice at once (`seed_repeat.py --paper DIR --run RUN --steps 60`, DIR
    this main part's folder). Each copy is the committed run at every step, or parts from it at the step where the
    two copies part (repeat.json: bcr_n3_s0's copies drew one token otherwise at step 35); at least one is the
    committed run throughout."""
    check = _fresh_clone_check()
    here = ARRIVAL / "seed_repeat_16" / run
    recorded = json.loads((here / "repeat.json").read_text())
    committed = check.metric_rows(ARRIVAL / "runs" / run / "metrics.jsonl")
    assert recorded["run"] == run and recorded["steps"] == len(committed)
    parted = [
        check.compare(committed, check.metric_rows(here / side / "metrics.jsonl"))["first_step_any_differs"]
        for side in ("a", "b")
    ]
    assert None in parted and set(parted) <= {None, recorded["first_step_any_differs"]}


def test_gates_on_no_steps_is_refused_by_name(capsys):
    from recipe_bcr.miniature.paper.report import main

    with pytest.raises(SystemExit) as e:
        main(["--gates", str(COMMITTED / "pilot16" / "s3"), "--steps", "0"])
    assert e.value.code == 2 and "--steps 0: judge at least one step" in capsys.readouterr().err


def test_the_fresh_clones_bcr_seed_0_is_one_of_its_two_repeatable_outcomes():
    """bcr_n3_s0 parts from its repeat at step 35 three times over (seed_repeat_16/'s two copies; the main part and
    its rerun from a second fresh clone): the rerun's run is the copy that parted from the committed one, at every
    step, so the branch is between two outcomes, each repeatable."""
    check = _fresh_clone_check()
    rerun = check.metric_rows(ARRIVAL / "fresh_clone" / "runs" / "bcr_n3_s0" / "metrics.jsonl")
    committed = check.metric_rows(ARRIVAL / "runs" / "bcr_n3_s0" / "metrics.jsonl")
    copies = [
        check.metric_rows(ARRIVAL / "seed_repeat_16" / "bcr_n3_s0" / side / "metrics.jsonl") for side in ("a", "b")
    ]
    parted = check.compare(committed, rerun)["first_step_any_differs"]
    assert (
        parted
        == json.loads((ARRIVAL / "seed_repeat_16" / "bcr_n3_s0" / "repeat.json").read_text())["first_step_any_differs"]
    )
    assert sorted(check.compare(c, rerun)["first_step_any_differs"] or 0 for c in copies) == [0, parted]


@pytest.mark.parametrize("run", ["bcr_n3_s1", "bcr_n3_s2"])
def test_with_the_step_sorted_into_batches_a_bcr_run_trained_twice_at_once_repeats(run):
    """seed_repeat_step_batches/<run>/: BCR runs that parted from their repeats in arrival_batches/'s rerun from a
    second fresh clone (at steps 20 and 2), trained twice at once after the rollout began to sort a step's requests
    before cutting them into batches: the two copies are equal at every step, the rollout's log-prob gap included, and
    so is the main part made later on that code, in its own process."""
    check = _fresh_clone_check()
    here = COMMITTED / "seed_repeat_step_batches" / run
    recorded = json.loads((here / "repeat.json").read_text())
    a, b = (check.metric_rows(here / side / "metrics.jsonl") for side in ("a", "b"))
    same = check.compare(a, b)
    assert recorded["run"] == run and same["steps_all_equal"] == same["steps"] == recorded["steps_all_equal"] == 60
    assert same["first_difference"]["actor/rollout_logprob_gap_max"] is None
    rerun = check.metric_rows(ARRIVAL / "fresh_clone" / "runs" / run / "metrics.jsonl")
    assert check.compare(rerun, a)["first_step_any_differs"] is not None
    main = check.compare(check.metric_rows(COMMITTED / "runs" / run / "metrics.jsonl"), a)
    assert main["steps_all_equal"] == 60 and main["first_difference"]["actor/rollout_logprob_gap_max"] is None


def test_accuracy_by_chain_reads_a_main_parts_samples_and_names_a_folder_without_them():
    """benchmarks/paper/accuracy_by_chain.py: on the main part, one row per arm with both chain kinds counted; on the
    rerun's folder (summaries only, no samples) it stops naming the missing file instead of printing NaN."""
    import subprocess
    import sys

    script = COMMITTED / "accuracy_by_chain.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    table = {r[0].strip(): r for r in rows[1:]}
    assert set(table) == {"base", *paper_findings.ARMS}
    assert all(int(r[3]) > 0 and int(r[5]) > 0 and "nan" not in "".join(r) for r in table.values())
    bad = subprocess.run(
        [sys.executable, str(script), "--paper", str(ARRIVAL / "fresh_clone")], capture_output=True, text=True
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "eval/base/samples.jsonl is missing" in bad.stderr
