"""The third registration's findings.json and report.md, from judge_v3.judge's dict (written whole, then renamed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper import history
from recipe_bcr.miniature.paper.gates import gates_table
from recipe_bcr.miniature.paper.writeup import _path_block, _registered, _write, controls_table, finite
from recipe_bcr.miniature.toy.preconditions import regime_table

# per finding, the numbers its line states (key in the finding's dict, label, scale)
STATED = {
    "F1": [("diff_pts", "BCR - baseline N=1 accuracy, points", 1), ("ci_pts", "90% CI, seeds as units", 1),
           ("tokens_diff", "tokens per problem", 1), ("acc_baseline", "the trained baseline's accuracy", 1)],
    "F2": [("bcr_tokens_per_problem", "BCR tokens per problem over N", 1),
           ("drop_diff_pts", "BCR's accuracy drop N=1 -> 5 minus the baseline's, points", 1),
           ("drop_diff_ci_pts", "90% CI", 1)],
    "F3": [("falls", "tokens fallen base -> BCR, by category", 1)],
    "F4": [("slope", "N=1 tokens per problem per budget token", 1), ("slope_ci", "90% CI", 1)],
    "F5": [("penalties", "per penalty", 1), ("bcr_collapsed", "BCR seeds collapsed", 1)],
}  # fmt: skip


def _value(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    if isinstance(x, list):
        return "[" + ", ".join(_value(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in x.items()) + "}"
    return str(x)


def finding_lines(findings: dict[str, Any]) -> list[str]:
    lines = []
    for fid, f in findings.items():
        stated = "; ".join(f"{label} {_value(f[key])}" for key, label, _ in STATED[fid] if key in f)
        lines.append(f"- **{fid}: {f['verdict']}.** {stated or f.get('why', '')}")
    return lines


def against_table(rows: dict[str, Any]) -> str:
    lines = ["| BCR against | accuracy N=1, points (90% CI) | tokens per problem (90% CI) |", "|---|---|---|"]
    for arm, r in rows.items():
        cells = [
            f"{r[k]['diff']:+.1f} ({r[k]['ci'][0]:+.1f}..{r[k]['ci'][1]:+.1f})" if k in r else "-"
            for k in ("correct", "tokens")
        ]
        lines.append(f"| {arm} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def write(root: Path, result: dict[str, Any], made_by: str) -> Path:
    """findings.json and report.md under `root`; returns the report's path."""
    root = Path(root)
    _write(root / "findings.json", json.dumps(finite(result), indent=1, allow_nan=False) + "\n")
    status = (
        "Every verdict below is judged by the registered rules."
        if result["interpretable"]
        else "**Not interpretable**: " + "; ".join(result["diagnosis"]) + "."
    )
    b = result["budget"]
    chains = "\n".join(f"- {arm}: {_value(v)}" for arm, v in result["accuracy_by_chain_n1"].items()) or "none"
    text = f"""# BCR in miniature, third registration (hydra_configs/paper_v3.yaml)

Made by `{made_by}`. Registration {_registered(result["registration"])}; launched {result["launched_at"]}.
Budget {f"B = {b['B']} (lambda {b['lambda']})" if b else "not chosen"}; {result["steps"]} GRPO steps per run (the
steps pilot's choice); oracle caps by chain length {result["oracle_caps"]}.
{f"Stopped: {result['stopped']}." if result["stopped"] else ""}

{status}

## Findings (seeds as units)

{chr(10).join(finding_lines(result["findings"]))}

## The base's preconditions

{regime_table(result["preconditions"]["rows"])}

Evaluation against training and warm-start groups: {_value(result["preconditions"]["overlap"])}.

## Training-dynamics gates per BCR seed

{gates_table(result["gates"], result["gates_rule"]) if result["gates"] else "No BCR run in this folder."}

## BCR and its controls

{controls_table(result["controls"]) if result["controls"] else "No run in this folder."}

{against_table(result["against_controls"])}

## Where accuracy went: N=1 accuracy by chain length

{chains}

{history.BEGIN}
{_path_block()}
{history.END}
"""
    _write(root / "report.md", text)
    return root / "report.md"
