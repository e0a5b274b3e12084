"""The second miniature's findings.json and report.md, from paper_findings.judge's dict (written whole, then
renamed: outputs complete or absent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper import history
from recipe_bcr.miniature.paper.figures import plot_scaling, plot_training
from recipe_bcr.miniature.paper.findings import ARMS, arm_of, metrics_by_arm, read_runs, summary
from recipe_bcr.miniature.paper.gates import gates_table
from recipe_bcr.miniature.toy.preconditions import regime_table


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity as None: findings.json is strict JSON (a missing number is null)."""
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _registered(reg: dict[str, Any]) -> str:
    """A registration as the report names it: its content hash, and its commit when there is one."""
    return f"`{reg['id']}`" + (f" (commit `{reg['commit']}`)" if reg.get("commit") else "")


def _cell(xs: list[float], scale: float = 1.0, fmt: str = ".1f") -> str:
    xs = [scale * x for x in xs if x == x]
    if not xs:
        return "-"
    m = sum(xs) / len(xs)
    return f"{m:{fmt}}" if len(xs) == 1 else f"{m:{fmt}} ({min(xs):{fmt}}..{max(xs):{fmt}})"


def controls_table(controls: dict[str, Any]) -> str:
    lines = [
        "| arm | N | budget | seeds | acc N=1 (%) | tokens / problem N=1 | training truncation, last window |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for arm, c in controls.items():
        lines.append(
            f"| {arm} | {c['n']} | {c['budget']} | {c['seeds']} | {_cell(c['acc_n1'], 100)} | {_cell(c['tokens_n1'])} "
            f"| {_cell(c['train_truncation_last'], fmt='.2f')} |"
        )
    return "\n".join(lines)


def _f(x: Any, fmt: str = ".2f") -> str:
    return "-" if x is None or x != x else format(x, fmt)


def seeds_line(seeds: dict[str, Any]) -> str:
    """F1's comparisons again with seeds resampled as units (not registered): how far the seeds disagree."""

    def per(field: str, arm: str, fmt: str) -> str:
        return "/".join(format(x, fmt) for x in seeds["per_seed"][field].get(arm, []))

    def ci(key: str) -> str:
        c = seeds.get(key)
        return f"{c['diff']:+.1f} (CI {c['ci'][0]:+.1f}..{c['ci'][1]:+.1f})" if c and "diff" in c else "-"

    return (
        f"Beside the rule (not registered): per seed, accuracy BCR {per('correct', 'bcr', '.1f')}%, baseline "
        f"{per('correct', 'baseline_n1', '.1f')}%, truncation {per('correct', 'truncation_n1', '.1f')}%; tokens BCR "
        f"{per('tokens', 'bcr', '.1f')}, baseline {per('tokens', 'baseline_n1', '.1f')}, truncation "
        f"{per('tokens', 'truncation_n1', '.1f')}. With seeds resampled as units (a seed's training noise is shared by "
        f"all its problems; the rule's interval draws a problem's seeds problem by problem), BCR minus baseline: "
        f"accuracy {ci('correct_vs_baseline_n1')} pts, tokens {ci('tokens_vs_baseline_n1')}; BCR minus truncation: "
        f"accuracy {ci('correct_vs_truncation_n1')} pts, tokens {ci('tokens_vs_truncation_n1')}."
    )


def finding_lines(findings: dict[str, Any]) -> list[str]:
    """One line per finding: its verdict, then the numbers it rests on."""
    f1, f2, f3, f4, f5 = (findings[k] for k in ("F1", "F2", "F3", "F4", "F5"))
    out = []
    if "diff_pts" in f1:
        vt, vb = f1.get("tokens_vs_truncation"), f1["tokens_vs_baseline"]
        out.append(
            f"- **F1, accuracy kept and tokens cut at N=1: {f1['verdict']}.** BCR minus baseline accuracy "
            f"{f1['diff_pts']:+.1f} pts (90% CI {f1['ci_pts'][0]:+.1f}..{f1['ci_pts'][1]:+.1f}; "
            f"BCR {100 * f1['acc_bcr']:.1f}%, baseline {100 * f1['acc_baseline']:.1f}%); tokens per problem "
            f"{vb['diff']:+.1f} (CI {vb['ci'][0]:+.1f}..{vb['ci'][1]:+.1f})"
            + (
                f"; against the truncation control {vt['diff']:+.1f} (CI {vt['ci'][0]:+.1f}..{vt['ci'][1]:+.1f}): "
                f"{f1['reading']}."
                if vt
                else "; no truncation control evaluated."
            )
        )
        seeds = f1.get("seeds_resampled")
        if seeds:
            out.append("  " + seeds_line(seeds))
    else:
        out.append(f"- **F1: {f1['verdict']}.** {f1.get('why', '')}")
    out.append(
        f"- **F2, tokens per correct problem non-increasing over N: {f2['verdict']}.** BCR "
        f"{' -> '.join(_f(x, '.1f') for x in f2['bcr_tokens_per_correct_problem'])} at N = {f2['n']}; baseline "
        f"{' -> '.join(_f(x, '.1f') for x in f2['baseline_tokens_per_correct_problem'])}."
    )
    if "inert_falls" in f3:
        out.append(
            f"- **F3, inert categories fall, useful re-checks stay: {f3['verdict']}.** Falls base -> BCR: "
            + ", ".join(f"{c} {_f(v, '.0%')}" for c, v in f3["inert_falls"].items())
            + f"; re-checks on long chains {_f(f3['useful_recheck_long_fall'], '.0%')}; accuracy kept: "
            f"{f3['accuracy_kept']}."
        )
    else:
        out.append(f"- **F3: {f3['verdict']}.** {f3.get('why', '')}")
    out.append(
        f"- **F4, N=1 tokens non-decreasing in B: {f4['verdict']}.** Budgets {f4['budgets']}: tokens "
        f"{', '.join(_f(x, '.1f') for x in f4['tokens_per_problem_n1'])} (seeds {f4['seeds']})."
    )
    out.append(
        f"- **F5, explicit length penalties collapse: {f5['verdict']}.** "
        + (
            "; ".join(
                f"{k}: {p['runs']} run(s), collapsed in {p['collapsed_seeds']}, groups varying "
                f"{_f(p.get('share_varying_groups'), '.0%')}"
                for k, p in f5["penalties"].items()
            )
            or "no penalty run"
        )
        + f"; BCR gates met: {f5['bcr_gates_met']}."
    )
    return out


def figures(root: Path) -> list[Path]:
    """figures/training_curves.png (each arm's per-step reward, accuracy, tokens per problem and truncation, mean
    over its seeds) and figures/task_scaling.png (accuracy and tokens per problem over N, base and BCR, BCR's seed
    range as bars), from the folder's run metrics and evaluation summaries; none when nothing was trained."""
    runs = read_runs(root)
    by_arm = metrics_by_arm(runs, ARMS)
    if not by_arm:
        return []
    figs = root / "figures"
    figs.mkdir(exist_ok=True)
    made = [plot_training(by_arm, figs / "training_curves.png")]
    scaling: dict[str, dict[int, tuple[float, float, float, float]]] = {}
    labels = {"base": ["base"], "BCR": [r["name"] for r in runs if arm_of(r) == "bcr"]}
    for label, names in labels.items():
        sums = [summary(root, name) for name in names]
        ns = sorted(set.intersection(*(set(x) for x in sums))) if sums else []
        if ns:
            accs = {n: [100 * x[n]["acc"] for x in sums] for n in ns}
            toks = {n: sum(x[n]["tokens_per_problem"] for x in sums) / len(sums) for n in ns}
            scaling[label] = {n: (sum(accs[n]) / len(accs[n]), toks[n], min(accs[n]), max(accs[n])) for n in ns}
    if scaling:
        made.append(plot_scaling(scaling, figs / "task_scaling.png"))
    return made


def _path_block() -> str:
    """The earlier main parts and pilots, from the committed snapshot (`python -m recipe_bcr.miniature.paper.history`):
    a report written again keeps its path section."""
    snapshot = history.ROOT / history.SNAPSHOT
    if not snapshot.exists():
        return f"{history.HEADING}\n\nNo snapshot at {history.SNAPSHOT}: `python -m recipe_bcr.miniature.paper.history --write`."
    return history.render(json.loads(snapshot.read_text(encoding="utf-8")))


def write(root: Path, result: dict[str, Any], made_by: str) -> Path:
    """findings.json and report.md under `root`; returns the report's path."""
    root = Path(root)
    _write(root / "findings.json", json.dumps(finite(result), indent=1, allow_nan=False) + "\n")
    plots = "\n".join(f"![{p.stem.replace('_', ' ')}](figures/{p.name})" for p in figures(root))
    pre = result["preconditions"]
    status = (
        "Every verdict below is judged by the registered rules."
        if result["interpretable"]
        else "**Not interpretable**: " + "; ".join(result["diagnosis"]) + "."
    )
    gates = gates_table(result["gates"]) if result["gates"] else "No BCR run in this folder."
    b = result["budget"]
    budget = f"B = {b['B']} (Algorithm 3 at lambda {b['lambda']})" if b else "B not chosen"
    allowed = "; trained despite missed preconditions" if result["allow_missed_preconditions"] else ""
    problems = ", ".join(f"{k} {v}" for k, v in result["eval_problems"].items()) or "none"
    text = f"""# BCR in miniature, second run (hydra_configs/paper.yaml)

Made by `{made_by}`. Registration {_registered(result["registration"])}; launched {result["launched_at"]}; the base
measured {pre["launched_at"]} against registration {_registered(pre["registration"])}.
Budget {budget}; {result["train_steps"]} GRPO steps per run (registered: at most {result["train_steps_registered"]});
overrides: {", ".join(result["overrides"]) or "none"}{allowed}.
{f"Stopped: {result['stopped']}." if result["stopped"] else ""}

{status}

## Findings

{chr(10).join(finding_lines(result["findings"]))}

## The base's preconditions

{regime_table(pre["rows"])}

## Training-dynamics gates per BCR seed

{gates}

## BCR and its controls

{controls_table(result["controls"]) if result["controls"] else "No run of BCR or a control in this folder."}

Distinct problems evaluated at N=1 per arm: {problems}.

{plots}

{history.BEGIN}
{_path_block()}
{history.END}
"""
    _write(root / "report.md", text)
    return root / "report.md"
