"""The third registration's findings.json and report.md, from judge_v3.judge's dict (written whole, then renamed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper import history
from recipe_bcr.miniature.paper.figures import plot_scaling, plot_training
from recipe_bcr.miniature.paper.findings import metrics_by_arm, read_runs
from recipe_bcr.miniature.paper.gates import gates_table
from recipe_bcr.miniature.paper.judge_v3 import ARMS
from recipe_bcr.miniature.paper.writeup import _cell, _path_block, _registered, _write, controls_table, finite
from recipe_bcr.miniature.toy.preconditions import regime_table

# per finding, the numbers its line states (key in the finding's dict, label, scale)
STATED = {
    "F1": [("diff_pts", "BCR - baseline N=1 accuracy, points", 1), ("ci_pts", "90% CI, seeds as units", 1),
           ("tokens_diff", "tokens per problem", 1), ("acc_baseline", "the trained baseline's accuracy", 1),
           ("seeds", "seeds (BCR, baseline)", 1)],
    "F2": [("bcr_tokens_per_problem", "BCR tokens per problem over N", 1),
           ("drop_diff_pts", "BCR's accuracy drop N=1 -> 5 minus the baseline's, points", 1),
           ("drop_diff_ci_pts", "90% CI", 1), ("baseline_drop_ci_pts", "the baseline's own drop, 90% CI", 1)],
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
        stated = [f"{label} {_value(f[key])}" for key, label, _ in STATED[fid] if key in f]
        lines.append(f"- **{fid}: {f['verdict']}.** " + "; ".join([*stated, *([f["why"]] if f.get("why") else [])]))
    return lines


def over_n_table(over_n: dict[str, Any], field: str, scale: float) -> str:
    """One row per arm: its seeds' mean at each N (min..max over seeds)."""
    ns = sorted({int(n) for curve in over_n.values() for n in curve})
    lines = ["| arm | seeds | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|---:|" + "---:|" * len(ns)]
    for arm, curve in over_n.items():
        seeds = max((len(c[field]) for c in curve.values()), default=0)
        cells = [_cell(curve[str(n)][field], scale) if str(n) in curve else "-" for n in ns]
        lines.append(f"| {arm} | {seeds} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def base_drop_line(over_n: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The base's fall from N=1 to the largest N on the held-out questions beside the precondition that bounded it on
    the base's own sets: the same quantity on two question sets."""
    curve = over_n.get("base", {})
    ns = sorted(int(n) for n in curve if curve[n]["acc"])
    pre = next((r for r in rows if r["name"] == "n5_acc_drop"), None)
    if len(ns) < 2 or pre is None:
        return ""
    first, last = curve[str(ns[0])]["acc"][0], curve[str(ns[-1])]["acc"][0]
    return (
        f"The base falls {100 * (first - last):.1f} points from N={ns[0]} to N={ns[-1]} on these questions; its "
        f"precondition `n5_acc_drop`, measured on the base's own sets, was {100 * pre['value']:.1f} points."
    )


def slopes_line(slopes: dict[str, Any]) -> str:
    """The main part's runs' last-window slopes of training accuracy, grouped by arm, against the steps rule's bound."""
    by: dict[str, list[str]] = {}
    for name, x in slopes.get("runs", {}).items():
        by.setdefault(name.rsplit("_s", 1)[0], []).append("-" if x is None or x != x else f"{x:+.2f}")
    arms = "; ".join(f"{arm} {', '.join(xs)}" for arm, xs in by.items()) or "no run"
    return (
        f"Slope of `{slopes['key']}` over each run's last {slopes['window']} steps, points a step, by seed (the steps "
        f"rule's plateau: below {slopes['bound_pts']}): {arms}."
    )


def position_table(by_position: dict[str, Any]) -> str:
    """Per arm and N, each section's accuracy (%) with the share left with no answer (%) in parentheses."""
    width = max((len(cells) for arm in by_position.values() for cells in arm.values()), default=0)
    head = "| arm | N | " + " | ".join(f"section {i}" for i in range(1, width + 1)) + " |"
    lines = [head, "|---|---:|" + "---:|" * width]
    for arm, per_n in by_position.items():
        for n, cells in per_n.items():
            row = [f"{100 * c['acc']:.0f} ({100 * c['no_answer']:.0f})" for c in cells] + [""] * (width - len(cells))
            lines.append(f"| {arm} | {n} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def faults_table(by_position: dict[str, Any]) -> str:
    """Per arm and N, over all its sections: the share (%) whose answer label names another problem, then the share
    restating a question not their own."""
    ns = sorted({int(n) for per_n in by_position.values() for n in per_n})
    lines = ["| arm | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|" + "---:|" * len(ns)]
    for arm, per_n in by_position.items():
        row = []
        for n in ns:
            cells = per_n.get(str(n), [])
            mean = (
                {k: 100 * sum(c[k] for c in cells) / len(cells) for k in ("other_label", "wrong_question")}
                if cells
                else {}
            )
            row.append(f"{mean['other_label']:.0f} / {mean['wrong_question']:.0f}" if cells else "-")
        lines.append(f"| {arm} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def chain_table(by_chain: dict[str, dict[str, dict[str, float]]]) -> str:
    """N=1 accuracy (%) and tokens per problem by the chain's number of operations, per arm (all its seeds)."""
    ops = sorted({int(k) for row in by_chain.values() for k in row})
    lines = ["| arm | " + " | ".join(f"{k} ops" for k in ops) + " |", "|---|" + "---:|" * len(ops)]
    for arm, row in by_chain.items():
        cells = (row.get(str(k)) for k in ops)
        lines.append(
            f"| {arm} | " + " | ".join(f"{100 * c['acc']:.1f} ({c['tokens']:.0f})" if c else "-" for c in cells) + " |"
        )
    return "\n".join(lines)


KINDS = {
    "narration": "narration",
    "restatement": "restatement",
    "filler": "filler",
    "recheck": "useful re-check",
    "inert_recheck": "inert re-check",
    "useful_recheck_long": "useful re-check, long chains",
}


def kinds_table(kinds: dict[str, dict[str, float]]) -> str:
    """Tokens per problem at N=1 by kind of text, per arm (mean over its seeds): what each arm cut or kept."""
    lines = ["| arm | " + " | ".join(KINDS.values()) + " |", "|---|" + "---:|" * len(KINDS)]
    for arm, row in kinds.items():
        lines.append(f"| {arm} | " + " | ".join(f"{row.get(k, 0.0):.1f}" for k in KINDS) + " |")
    return "\n".join(lines)


def _point(c: dict[str, list[float]]) -> tuple[float, float, float, float]:
    """One arm at one N as plot_scaling draws it: accuracy (%) mean, tokens mean, accuracy min and max (the mean
    held inside them against rounding, so a bar never reads as negative)."""
    acc = [100 * x for x in c["acc"]]
    lo, hi = min(acc), max(acc)
    return min(max(sum(acc) / len(acc), lo), hi), sum(c["tokens"]) / len(c["tokens"]), lo, hi


def figures(root: Path, over_n: dict[str, Any]) -> list[Path]:
    """figures/training_curves.png (each arm's per-step curves, mean over its seeds) and figures/over_n.png
    (accuracy and tokens per problem over N, every arm and the base, seed range as bars); none without a run."""
    by_arm = metrics_by_arm(read_runs(root), ARMS)
    if not by_arm:
        return []
    figs = root / "figures"
    figs.mkdir(exist_ok=True)
    made = [plot_training(by_arm, figs / "training_curves.png")]
    scaling = {arm: {int(n): _point(c) for n, c in curve.items() if c["acc"]} for arm, curve in over_n.items()}
    if any(scaling.values()):
        made.append(plot_scaling({a: pts for a, pts in scaling.items() if pts}, figs / "over_n.png"))
    return made


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
    over_n, steps = result["over_n"], result["steps"]
    chosen = f"{steps} GRPO steps per run (the steps pilot's choice)" if steps else "steps not chosen"
    plots = "\n".join(f"![{p.stem.replace('_', ' ')}](figures/{p.name})" for p in figures(root, over_n))
    text = f"""# BCR in miniature, third registration (hydra_configs/paper_v3.yaml)

Made by `{made_by}`. Registration {_registered(result["registration"])}; launched {result["launched_at"]}.
Budget {f"B = {b['B']} (lambda {b['lambda']})" if b else "not chosen"}; {chosen}; oracle caps by chain length {result["oracle_caps"]}.
{f"Stopped: {result['stopped']}." if result["stopped"] else ""}

{status}

## Findings (seeds as units)

{chr(10).join(finding_lines(result["findings"]))}

## The base's preconditions

{regime_table(result["preconditions"]["rows"])}

Evaluation against training and warm-start groups: {_value(result["preconditions"]["overlap"])}.

## Training-dynamics gates per BCR seed

{gates_table(result["gates"], result["gates_rule"]) if result["gates"] else "No BCR run in this folder."}

{slopes_line(result["final_slopes"])}

## BCR and its controls

{controls_table(result["controls"]) if result["controls"] else "No run in this folder."}

{against_table(result["against_controls"])}

## Over N: every arm evaluated at N = 1..{max((int(n) for c in over_n.values() for n in c), default=1)}

Accuracy (%), seed mean (min..max over seeds):

{over_n_table(over_n, "acc", 100)}

Tokens per problem:

{over_n_table(over_n, "tokens", 1)}

{base_drop_line(over_n, result["preconditions"]["rows"])}

{plots}

## Where accuracy went

By section of the prompt: accuracy (%) and, in parentheses, the share left with no answer (%), all seeds pooled.

{position_table(result["by_position"])}

Read with every answer under its own section's header (each "AnswerK:" taken as the answer of the "### Problem i"
above it: what numbering alone cost; a reading, not a registered number), accuracy (%), seed mean (min..max):

{over_n_table(over_n, "acc_by_header", 100)}

Sections (%) whose answer label names another problem / that restate a question other than their own, all seeds
pooled:

{faults_table(result["by_position"])}

At N=1, by the chain's number of operations, accuracy (%) and, in parentheses, tokens per problem, all seeds pooled:

{chain_table(result["by_chain_n1"])}

At N=1, tokens per problem by kind of text (counted as F3 counts them; mean over seeds):

{kinds_table(result["text_kinds_n1"])}

{history.BEGIN}
{_path_block()}
{history.END}
"""
    _write(root / "report.md", text)
    return root / "report.md"
