"""The README's miniature status line and results are what the committed records say: they are written by
`python -m recipe_bcr.miniature.paper.summary --write README.md` from benchmarks/paper/findings.json and
fresh_clone.json, and this fails when either changes without the README."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.summary import blocks, fill, results, status_line

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "benchmarks" / "paper"


def test_readme_states_the_committed_findings():
    readme = (REPO / "README.md").read_text()
    assert fill(readme, blocks(PAPER)) == readme, "run: python -m recipe_bcr.miniature.paper.summary --write README.md"


def test_the_summary_follows_the_records():
    """Another verdict, another accuracy or a rerun that did not reproduce reads otherwise in both blocks."""
    found = json.loads((PAPER / "findings.json").read_text())
    rerun = json.loads((PAPER / "fresh_clone.json").read_text())
    changed = copy.deepcopy(found)
    changed["findings"]["F1"]["verdict"] = "reproduced"
    changed["controls"]["bcr"]["acc_n1"] = [0.5, 0.5, 0.5]
    assert "(F1): reproduced" in results(changed, rerun) and "| 50.0 |" in results(changed, rerun)
    assert "F1 reproduced" in status_line(changed, rerun)
    assert "does not give the same files" in results(found, {**rerun, "reproduced": False})
    assert "Not yet repeated" in status_line(found, None)


def test_a_readme_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="miniature-status"):
        fill("# no markers\n", blocks(PAPER))
