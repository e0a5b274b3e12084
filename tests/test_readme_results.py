"""The README's miniature status line and results are what the committed records say: they are written by
`python -m recipe_bcr.miniature.paper.summary --write README.md` from benchmarks/paper_v3/findings.json, and this
fails when it changes without the README."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.summary import blocks, fill, main, results, status_line

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "benchmarks" / "paper_v3"


def test_readme_states_the_committed_findings():
    readme = (REPO / "README.md").read_text()
    assert fill(readme, blocks(PAPER)) == readme, "run: python -m recipe_bcr.miniature.paper.summary --write README.md"


def test_the_summary_follows_the_records():
    """Another verdict, another accuracy over N or a missed gate reads otherwise in both blocks."""
    found = json.loads((PAPER / "findings.json").read_text())
    changed = copy.deepcopy(found)
    changed["findings"]["F2"]["verdict"] = "inconclusive"
    changed["findings"]["F1"]["acc_bcr"] = 0.5
    changed["over_n"]["bcr"]["5"]["acc"] = [0.25] * len(found["over_n"]["bcr"]["5"]["acc"])
    changed["gates"][0]["gates"]["all_met"] = False
    changed["interpretable"] = False
    changed["findings"]["F4"]["slope"] = 0.031
    changed["findings"]["F5"]["penalties"]["len_2_1_1"]["collapsed_seeds"] = 2
    table = results(changed)
    assert "(F2): inconclusive" in table and "| 25.0 |" in table and "in 4 of 5 seeds" in table
    assert "budget token: +0.03 (90% CI" in table and "len_2_1_1 2 of 3" in table
    assert "F2 inconclusive" in status_line(changed) and "50.0% accurate" in status_line(changed)
    assert "is not interpretable" in status_line(changed) and "engages" in status_line(found)


def test_a_readme_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="miniature-status"):
        fill("# no markers\n", blocks(PAPER))


def test_a_second_registration_folder_is_refused_by_name(tmp_path):
    (tmp_path / "findings.json").write_text(json.dumps({"findings": {}, "controls": {}}))
    with pytest.raises(ValueError, match="not the findings of a third-registration folder"):
        blocks(tmp_path)


@pytest.mark.parametrize(("broken", "why"), [("key", "KeyError 'verdict'"), ("json", "not JSON")])
def test_a_broken_findings_file_is_refused_with_its_path_and_the_fix(tmp_path, capsys, broken, why):
    """A findings.json missing a key the blocks read, or not JSON, exits 2 naming the file, what is wrong and the
    command that writes it again; the README is left as it was."""
    found = json.loads((PAPER / "findings.json").read_text())
    del found["findings"]["F3"]["verdict"]
    (tmp_path / "findings.json").write_text(json.dumps(found) if broken == "key" else "{not json")
    readme = tmp_path / "README.md"
    readme.write_text(before := (REPO / "README.md").read_text())
    assert main(["--paper", str(tmp_path), "--write", str(readme)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "findings.json") in err and why in err
    assert f"recipe_bcr paper out={tmp_path} registration=paper_v3 part=findings" in err
    assert readme.read_text() == before
