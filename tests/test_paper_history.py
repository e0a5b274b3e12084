"""The path to the committed main part (benchmarks/paper/history.json and the marked section of report.md and
docs/miniature.md) is generated from the folders' own records, and is what those records say: written by
`python -m recipe_bcr.miniature.paper.history --write`, checked by `--check`."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper import history
from recipe_bcr.miniature.paper.history import HistoryError, collect, fill, main, render

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "benchmarks" / "paper" / "history.json"


def _snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text())


def _row(h: dict, folder: str) -> dict:
    return next(r for r in h["rows"] if r["folder"] == folder)


def _no_git(monkeypatch):
    def fail(repo, *args):
        raise OSError("git: command not found")

    monkeypatch.setattr(history, "_git", fail)


def test_the_committed_section_and_snapshot_are_current():
    assert main(["--check"]) == 0, "run: python -m recipe_bcr.miniature.paper.history --write"


def test_every_folder_read_from_git_names_a_commit_that_holds_it():
    """`collect` falls back to the snapshot when git cannot read a folder (a clone without the history), so a mistyped
    `where` would render from the snapshot without a word: each must name a commit of this repository holding it."""
    shallow = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != b"false":
        pytest.skip("not a git checkout with full history (the fallback to the snapshot is tested below)")
    for folder in (f for f in history.FOLDERS if f.where != "tree"):
        held = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{folder.where}:{folder.path}/"])
        assert held.returncode == 0, f"{folder.path}: commit {folder.where} does not hold it (history.FOLDERS)"


def test_the_snapshot_is_strict_json_with_every_folder():
    def refuse(name):
        raise ValueError(f"history.json holds {name}")

    h = json.loads(SNAPSHOT.read_text(), parse_constant=refuse)
    assert [r["folder"] for r in h["rows"]] == [f.path for f in history.FOLDERS]
    assert _row(h, "benchmarks/paper")["verdicts"]["F1"] == "not reproduced"


def test_the_section_follows_the_snapshot():
    """Another verdict or another gate in the snapshot reads otherwise in the section."""
    h = _snapshot()
    changed = copy.deepcopy(h)
    _row(changed, "benchmarks/paper/lr4")["verdicts"]["F1"] = "reproduced"
    _row(changed, "benchmarks/paper/pilot_rerun")["gates"][0]["gates"]["format"]["step_reached"] = 44
    before, after = render(h), render(changed)
    assert before != after
    assert "F1 not reproduced, F2 not reproduced" in before
    assert "| F1 reproduced, F2 not reproduced, F3 not reproduced" in after
    assert "s0 no: format (0.90 at step 44)" in after


def test_settings_that_changed_are_computed_from_the_records():
    text = render(_snapshot())
    line = next(x for x in text.splitlines() if x.startswith("| `benchmarks/paper/pilot_lr4/`"))
    assert "registration 2372aa8; lr 2e-4 -> 4e-4" in line


def test_without_git_the_earlier_folders_come_from_the_snapshot(tmp_path, monkeypatch):
    h = _snapshot()
    _row(h, "benchmarks/paper/prompts8")["verdicts"]["F2"] = "reproduced"
    _row(h, "benchmarks/paper_v3/toy_gaps_fill20")["launched_at"] = "2026-01-01T00:00:00Z"
    snap = tmp_path / "history.json"
    snap.write_text(json.dumps(h))
    _no_git(monkeypatch)
    got = collect(REPO, snap)
    assert _row(got, "benchmarks/paper/prompts8")["verdicts"]["F2"] == "reproduced"
    assert _row(got, "benchmarks/paper")["verdicts"]["F1"] == "not reproduced"  # left the tree: from the snapshot
    # the folders in the tree are read from the tree, whatever the snapshot says
    assert _row(got, "benchmarks/paper_v3/toy_gaps_fill20")["launched_at"] == "2026-11-29T06:38:55Z"


def test_check_fails_on_a_stale_section_and_write_mends_it(tmp_path):
    files = {"report": REPO / "benchmarks/paper/report.md", "docs": REPO / "docs/miniature.md", "snapshot": SNAPSHOT}
    args = []
    for name, src in files.items():
        dst = tmp_path / src.name
        shutil.copyfile(src, dst)
        args += [f"--{name}", str(dst)]
    assert main(["--check", *args]) == 0
    report = tmp_path / "report.md"
    report.write_text(report.read_text().replace("| s0 all (0.90 at step 16) |", "| s0 all (0.90 at step 15) |"))
    assert main(["--check", *args]) == 1
    assert main(["--write", *args]) == 0
    assert main(["--check", *args]) == 0
    assert report.read_text() == files["report"].read_text()


def test_a_missing_snapshot_without_git_names_the_file_the_commit_and_the_fix(tmp_path, monkeypatch, capsys):
    _no_git(monkeypatch)
    with pytest.raises(HistoryError) as e:
        collect(REPO, tmp_path / "history.json")
    msg = str(e.value)
    assert "benchmarks/paper_24_steps" in msg and "ba05637" in msg and "git: command not found" in msg
    assert "history --write" in msg and "git checkout -- benchmarks/paper/history.json" in msg
    assert main(["--check", "--snapshot", str(tmp_path / "history.json")]) == 2
    assert "cannot read benchmarks/paper_24_steps" in capsys.readouterr().err


def test_a_folder_that_is_not_a_git_checkout_without_snapshot_is_refused(tmp_path, capsys):
    assert main(["--write", "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ba05637" in err and "--unshallow" in err


def test_a_file_without_the_markers_is_refused():
    with pytest.raises(HistoryError, match="path:begin"):
        fill("# no markers\n", "block", "README.md")


def _base_folder(root: Path, missed: bool, pilot: bool, plan_written: bool = True) -> history.Folder:
    """A planted registration stopped at its base: base_preconditions.json, maybe plan.json and toy_pilot.json."""
    folder = root / "attempt"
    folder.mkdir()
    plan = {"settings": {"toy": "toy_x", "grpo": {"lr": 2e-4, "prompts_per_step": 16, "rollouts": 8}, "seeds": [0]}}
    rows = [
        {"name": "acc_n1", "value": 0.75, "range": [0.6, 0.85], "met": True},
        {"name": "allocator_share", "value": 0.671 if missed else 0.9, "range": [0.8, None], "met": not missed},
    ]
    pre = {
        "registration": {"id": "abc", "commit": "c0ffee0"},
        "launched_at": "2026-11-28T22:36:00Z",
        "rows": rows,
        "details": {"budget_n3": 382},
        "toy": "toy_x",
    }
    if plan_written:
        (folder / "plan.json").write_text(json.dumps(plan))
    (folder / "base_preconditions.json").write_text(json.dumps(pre))
    if pilot:
        record = {
            "steps": 150,
            "accuracy_n1": {"baseline_n1_s5": 0.861, "baseline_n1_s6": 0.874},
            "decision": "accepted",
        }
        (folder / "toy_pilot.json").write_text(json.dumps(record))
    return history.Folder("attempt", "base", "base", "tree", history.V3, "the toy amended")


@pytest.mark.parametrize(("missed", "pilot"), [(True, True), (False, False)])
def test_a_registration_stopped_at_its_base_lists_what_it_missed_and_its_toy_pilot(tmp_path, missed, pilot):
    row = history.extract(_base_folder(tmp_path, missed, pilot), tmp_path)
    basis = row["gates_basis"]
    assert ("missed allocator_share 0.671 (registered >= 0.8)" in basis) is missed
    assert ("preconditions: all met" in basis) is not missed
    assert ("toy pilot: N=1 accuracy s5 0.861, s6 0.874 -> accepted" in basis) is pilot
    assert row["interpretable"] is (False if missed else history.NOT_RECORDED)
    assert row["settings"]["budget"] == 382 and row["settings"]["seeds"] == ([5, 6] if pilot else [])
    assert row["registration"] == {"config": history.V3, "id": "abc", "commit": "c0ffee0"}
    line = next(
        x for x in render({"commit": history.COMMIT, "rows": [row]}).splitlines() if x.startswith("| `attempt/`")
    )
    assert "none (a pilot)" in line and basis in line and "B 382" in line


def test_a_base_measured_with_no_part_after_it_says_no_run_was_made(tmp_path):
    """A base that missed before any part ran leaves no plan.json: its row names the toy and B, and no GRPO settings."""
    row = history.extract(_base_folder(tmp_path, missed=True, pilot=False, plan_written=False), tmp_path)
    assert row["settings"]["toy"] == "toy_x" and row["settings"]["lr"] == history.NO_RUN
    line = next(
        x for x in render({"commit": history.COMMIT, "rows": [row]}).splitlines() if x.startswith("| `attempt/`")
    )
    assert "| toy toy_x, B 382, none (no run) |" in line and "missed allocator_share" in line


def test_attempts_stopped_without_a_record_are_listed_after_the_table():
    """An attempt that kept no folder is still on the path: the snapshot carries it and the section lists it."""
    h = collect(REPO)
    assert h["stopped"] == list(history.STOPPED) and h["stopped"]
    text = render(h)
    listed = text.split("Attempts stopped before they kept a record")[1]
    assert "toy_gaps_fill20's toy pilot, first start" in " ".join(listed.split())
    assert "Attempts stopped" not in render({**h, "stopped": []})


def test_a_steps_pilot_shows_its_bcr_runs_gates_by_the_registration_they_ran_under(tmp_path):
    """A pilots folder with a steps pilot: the chosen steps, and each BCR pilot run judged by the gates in its own
    plan.json (here a start window that a fast fall misses), the baseline's runs left out."""
    folder = _base_folder(tmp_path, missed=False, pilot=True)
    root = tmp_path / "attempt"
    gates = {"window": 20, "truncation_last_max": 0.3, "truncation_drop_min": 0.4, "format_min": 0.9}
    gates |= {"last_position_ratio": 0.5, "reward_tau_min": 0.5}
    plan = json.loads((root / "plan.json").read_text())
    (root / "plan.json").write_text(json.dumps({**plan, "launched_at": "2026-11-28T20:00:00Z", "settings": {
        **plan["settings"], "gates": gates}}))  # fmt: skip
    checks = [{"step": 10, "plateaued": False}, {"step": 20, "plateaued": False}]
    (root / "steps_pilot.json").write_text(json.dumps({"steps": 20, "checks": checks}))
    steps = [
        {"step": s + 1, "bcr/truncation_rate": max(0.8 - 0.1 * s, 0.0), "bcr/fmt": 0.95, "critic/score/mean": s}
        | {"bcr/acc_pos1": 0.9, "bcr/acc_pos3": 0.8}
        for s in range(40)
    ]
    for name, single in (("bcr_n3_s5", False), ("baseline_n1_s5", True)):
        (root / "runs" / name).mkdir(parents=True)
        (root / "runs" / name / "run.json").write_text(
            json.dumps({"name": name, "n": 1 if single else 3, "single": single})
        )
        (root / "runs" / name / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in steps))
    row = history.extract(folder, tmp_path)
    assert [g["run"] for g in row["gates"]] == ["bcr_n3_s5"] and row["gates"][0]["steps"] == 40
    assert not row["gates"][0]["gates"]["truncation"]["met"] and row["gates"][0]["gates"]["format"]["met"]
    assert "steps pilot: 20 steps (the maximum: no plateau)" in row["gates_basis"]
    assert row["launched_at"] == "2026-11-28T20:00:00Z"  # the plan's, before the base's measurement
    line = next(
        x for x in render({"commit": history.COMMIT, "rows": [row]}).splitlines() if x.startswith("| `attempt/`")
    )
    assert "s5 no: truncation (0.90 at step 5)" in line


def test_a_folder_that_left_the_tree_is_read_at_its_own_commit(tmp_path):
    """Each folder names the last commit that held it: one removed later is read there, not from the tree, and its row
    says where."""
    _base_folder(tmp_path, missed=True, pilot=True)

    def git(*args: str) -> str:
        return history._git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", *args).strip()

    git("init", "-q")
    git("add", "attempt")
    git("commit", "-qm", "attempt")
    held = git("rev-parse", "HEAD")
    shutil.rmtree(tmp_path / "attempt")
    git("commit", "-qam", "attempt leaves the tree")
    folder = history.Folder("attempt", "base", "base", held, history.V3, "the toy amended")
    row = history.extract(folder, tmp_path)
    assert row["at"] == held and "missed allocator_share 0.671" in row["gates_basis"]
    line = next(
        x for x in render({"commit": history.COMMIT, "rows": [row]}).splitlines() if x.startswith("| `attempt/`")
    )
    assert line.startswith(f"| `attempt/` (at `{held[:7]}`) |")
    with pytest.raises(OSError):  # the folder is not in the tree, so a "tree" folder cannot be read
        history.extract(history.Folder("attempt", "base", "base", "tree", history.V3, "x"), tmp_path)
