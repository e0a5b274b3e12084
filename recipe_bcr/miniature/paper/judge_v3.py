"""The third registration's findings (hydra_configs/paper_v3.yaml `findings`, issue 52), judged from a paper output
folder by the rules of rules.py it names, seeds as the units of every interval.

Reads what the paper command leaves (the second registration's readers in findings.py): base_preconditions.json,
runs/<name>/run.json and metrics.jsonl (pilot runs left out), the penalty runs' rollouts of the first `gates.window`
steps (F5), eval/<label>/ at every N. Interpretability comes first: a missed base precondition, a BCR seed that misses
a gate, or sizes other than the registered ones make every verdict "not interpretable"; a rule's own precondition
(F1's trained baseline in range, F3's interventions and allocator share, F5's BCR not collapsing) makes that finding
alone "not interpretable".
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from recipe_bcr.grading.verify import Verifier
from recipe_bcr.miniature.paper.findings import (
    Count,
    _mean,
    category_tokens,
    controls,
    diagnose,
    group_lengths,
    ops_of,
    preconditions_record,
    read_runs,
    records,
)
from recipe_bcr.miniature.paper.rules import (
    collapsed,
    f1_noninferiority,
    f2_scaling,
    f3_categories,
    f4_budget,
    f5_penalties,
    f5_testable,
    seed_bootstrap_diff,
    verdict,
    window_slope,
)
from recipe_bcr.miniature.paper.section_faults import faults, header_accuracy
from recipe_bcr.miniature.toy.rollouts import dump_files

ARMS = ("bcr", "baseline_n1", "truncation_n1", "oracle_cap_n1", "n2")


def per_problem(root: Path, label: str, n: int, field: str) -> dict[str, float]:
    """One evaluation at N=n: problem id -> correct (0/1), or the group's tokens shared evenly by its problems."""
    out: dict[str, float] = {}
    for rec in records(root, label, n):
        for p in rec["problems"]:
            if p["scored"]:
                out[p["id"]] = float(bool(p["correct"])) if field == "correct" else rec["generated_tokens"] / n
    return out


def seeds(root: Path, labels: Sequence[str], n: int, field: str) -> list[dict[str, float]]:
    """Per seed (label) of an arm: its per_problem map at N=n; seeds not evaluated at n are left out."""
    return [m for m in (per_problem(root, x, n, field) for x in labels) if m]


def by_chain(root: Path, labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """N=1 accuracy and tokens per problem by chain length over an arm's seeds: where accuracy and tokens went."""
    by: dict[int, list[tuple[float, float]]] = {}
    for label in labels:
        for rec in records(root, label, 1):
            p = rec["problems"][0]
            if p["scored"]:
                by.setdefault(ops_of(rec), []).append((float(bool(p["correct"])), float(rec["generated_tokens"])))
    return {
        str(k): {"acc": _mean([a for a, _ in v]), "tokens": _mean([t for _, t in v])} for k, v in sorted(by.items())
    }


def over_n(
    root: Path, labels: Sequence[str], ns: Sequence[int], verifier: Verifier
) -> dict[str, dict[str, list[float]]]:
    """Per N: each evaluated seed's accuracy and tokens per problem, the arm's curve over N with seeds as units, and
    its accuracy with every answer read under its own section's header (`acc_by_header`: not a registered number)."""
    return {
        str(n): {
            "acc": [_mean(list(m.values())) for m in seeds(root, labels, n, "correct")],
            "tokens": [_mean(list(m.values())) for m in seeds(root, labels, n, "tokens")],
            "acc_by_header": [
                x for x in (header_accuracy(records(root, label, n), verifier) for label in labels) if x is not None
            ],
        }
        for n in ns
    }


def final_slopes(runs: list[dict[str, Any]], rule: dict[str, Any]) -> dict[str, Any]:
    """Each main-part run's slope of the steps rule's key over its last `window` steps (points a step), beside the
    rule's bound: whether the arms were still learning when training stopped."""
    out: dict[str, Any] = {"key": rule["key"], "window": int(rule["window"]), "bound_pts": rule["max_slope_pts"]}
    for r in runs:
        if r["group"] in ("main", "control"):
            out.setdefault("runs", {})[r["name"]] = window_slope(r["metrics"], rule["key"], int(rule["window"]))
    return out


def by_position(root: Path, labels: Sequence[str], ns: Sequence[int]) -> dict[str, list[dict[str, float]]]:
    """Per N, per section of the prompt (1..N), over the arm's seeds: accuracy, the share left with no answer at
    all, and the shares of sections with an answer label for another problem or a restated question not their own
    (`section_faults.faults`), so a fall beyond the trained N reads as later answers wrong, unread or never written."""
    keys = ("acc", "no_answer", "other_label", "wrong_question")
    out: dict[str, list[dict[str, float]]] = {}
    for n in ns:
        cells: list[dict[str, list[float]]] = [{k: [] for k in keys} for _ in range(n)]
        for label in labels:
            for rec in records(root, label, n):
                for cell, p, fault in zip(cells, rec["problems"], faults(rec)):
                    if p["scored"]:
                        cell["acc"].append(float(bool(p["correct"])))
                        cell["no_answer"].append(float(p["answer"] is None))
                        cell["other_label"].append(float(fault["other_label"]))
                        cell["wrong_question"].append(float(fault["wrong_question"]))
        if cells[0]["acc"]:
            out[str(n)] = [{k: _mean(cell[k]) for k in keys} for cell in cells]
    return out


def text_kinds(root: Path, labels: Sequence[str], count: Count, long_ops: int) -> list[dict[str, float]]:
    """Per evaluated seed of an arm: tokens per problem at N=1 by kind of text (useful = re-check on long chains)."""
    out = []
    for label in labels:
        recs = records(root, label, 1)
        if recs:
            got = category_tokens(recs, count, long_ops)
            out.append(
                {**got["per_problem"], "inert_recheck": got["per_problem"].get("inert_recheck", 0.0)}
                | {"useful_recheck_long": got["recheck_long"]}
            )
    return out


def judge_f5(root: Path, runs: list[dict[str, Any]], cfg: dict[str, Any], count: Count) -> dict[str, Any]:
    """Each penalty's seeds that collapse (rules.collapsed against BCR's length of the same seed), whether its rollout
    lengths vary within groups at all (f5_testable, first window), and BCR's own collapses."""
    rule, w = cfg["findings"]["F5"], int(cfg["gates"]["window"])
    bcr = {r["seed"]: r for r in runs if r["group"] == "main"}

    def tail_len(run: dict[str, Any]) -> float:
        return _mean([m["response_length/mean"] for m in run["metrics"] if "response_length/mean" in m][-w:])

    ref = {s: tail_len(r) for s, r in bcr.items()}
    presets = {}
    for preset in cfg["ablations"]["reward"]:
        pen = [r for r in runs if r["group"] == "reward" and r["reward"] == preset]
        for r in pen:  # a dump lost with a machine would read as lengths that never vary: not testable, silently
            dump = root / "runs" / r["name"] / "rollouts"
            if missing := sorted(set(range(1, w + 1)) - set(dump_files(dump))):
                raise ValueError(
                    f"{dump} lacks the rollouts of step(s) {missing[0]}..{missing[-1]} that F5 reads (the first {w}): "
                    f"commit them with the run (`gzip -kn {dump}/<step>.jsonl`), or train {r['name']} again"
                )
        lengths = [g for r in pen for g in group_lengths(root / "runs" / r["name"] / "rollouts", w, count)]
        test = f5_testable(lengths, int(pen[0]["budget"]), rule) if pen else {"testable": False}
        fallback = _mean(list(ref.values()))
        falls = [collapsed(r["metrics"], ref.get(r["seed"], fallback), rule, w) for r in pen]
        presets[preset] = {**test, "seeds": len(pen), "collapsed_seeds": sum(falls)}
    bcr_collapsed = sum(collapsed(r["metrics"], ref[s], rule, w) for s, r in bcr.items())
    return {"penalties": presets, "bcr_collapsed": bcr_collapsed, **f5_penalties(presets, bcr_collapsed, rule)}


def against_controls(root: Path, arms: dict[str, list[str]], boot: dict[str, Any]) -> dict[str, Any]:
    """BCR against each N=1 control at N=1, seeds as units: accuracy (points) and tokens per problem; the uniform
    and the oracle cap side by side tell budget sharing from reallocation."""
    args = (int(boot["resamples"]), float(boot["level"]), int(boot["seed"]))
    out: dict[str, Any] = {}
    for arm in ("baseline_n1", "truncation_n1", "oracle_cap_n1"):
        row: dict[str, Any] = {}
        for field, scale in (("correct", 100.0), ("tokens", 1.0)):
            a, b = seeds(root, arms.get("bcr", []), 1, field), seeds(root, arms.get(arm, []), 1, field)
            if len(a) >= 2 and len(b) >= 2:
                d, lo, hi = seed_bootstrap_diff(a, b, *args)
                row[field] = {"diff": scale * d, "ci": [scale * lo, scale * hi]}
        out[arm] = row
    return out


def judge(root: Path, cfg: dict[str, Any], pre: dict[str, Any], count: Count, context: dict[str, Any]) -> dict:
    """findings.json's content under the third registration (`context`: registration, launched_at, overrides,
    steps, budget, stopped)."""
    root = Path(root)
    runs = [r for r in read_runs(root) if r["group"] != "pilot"]
    arms, gate_rows, diagnosis = diagnose(runs, cfg, pre, context.get("overrides", []), "registration=")
    interpretable = not diagnosis
    f, boot, ns = cfg["findings"], cfg["findings"]["bootstrap"], [int(n) for n in cfg["findings"]["F2"]["n"]]
    bcr, base = arms.get("bcr", []), arms.get("baseline_n1", [])
    f1 = f1_noninferiority(
        seeds(root, bcr, 1, "correct"), seeds(root, base, 1, "correct"),
        seeds(root, bcr, 1, "tokens"), seeds(root, base, 1, "tokens"), f["F1"], boot,
    )  # fmt: skip
    f2 = f2_scaling(
        {n: seeds(root, bcr, n, "tokens") for n in ns},
        {n: seeds(root, bcr, n, "correct") for n in ns},
        {n: seeds(root, base, n, "correct") for n in ns},
        f["F2"],
        boot,
    )
    values = {**{r["name"]: r["value"] for r in pre["rows"]}, **(pre.get("interventions") or {}).get("values", {})}
    evaluated = {"base": ["base"], **{a: arms[a] for a in ARMS if arms.get(a)}}  # the base: where training began
    long_ops = int(cfg["preconditions"]["long_chain_ops"])
    kinds = {a: text_kinds(root, labels, count, long_ops) for a, labels in evaluated.items()}
    bcr_cats = kinds.get("bcr", [])
    f3_ready = bool(bcr_cats) and bool(kinds["base"]) and all(k in values for k in ("useful_gain", "allocator_share"))
    f3 = (
        f3_categories(kinds["base"][0], bcr_cats, values, f1.get("accuracy_ok"), f["F3"])
        if f3_ready
        else {"testable": False, "ok": None, "why": "no N=1 evaluation of BCR, or no intervention measured"}
    )
    by_budget: dict[int, list[float]] = {}
    for run in runs:
        if run["group"] in ("main", "budget"):
            toks = per_problem(root, run["name"], 1, "tokens")
            if toks:
                by_budget.setdefault(int(run["budget"]), []).append(_mean(list(toks.values())))
    budgets = sorted(by_budget)
    f4 = f4_budget(budgets, [by_budget[b] for b in budgets], f["F4"], boot)
    f5 = judge_f5(root, runs, cfg, count)
    with closing(Verifier(workers=1)) as verifier:
        over_n_all = {a: over_n(root, labels, ns, verifier) for a, labels in evaluated.items()}
    numbers = {"F1": f1, "F2": f2, "F3": f3, "F4": f4, "F5": f5}
    findings = {
        fid: {
            "verdict": verdict(
                v.get("ok"), interpretable and v.get("precondition_met", True) is not False, bool(v.get("testable"))
            ),
            **v,
        }
        for fid, v in numbers.items()
    }
    return {
        "registration": context["registration"],
        "launched_at": context["launched_at"],
        "overrides": list(context.get("overrides", [])),
        "steps": context.get("train_steps"),
        "budget": context.get("budget"),
        "oracle_caps": context.get("oracle_caps"),
        "stopped": context.get("stopped"),
        "preconditions": {
            **preconditions_record(pre),
            "overlap": (pre.get("details") or {}).get("offline", {}).get("overlap"),
        },
        "gates": gate_rows,
        "gates_rule": dict(cfg["gates"]),
        "controls": controls(root, runs, int(cfg["gates"]["window"]), ARMS),
        "against_controls": against_controls(root, arms, boot),
        "by_chain_n1": {a: by_chain(root, labels) for a, labels in evaluated.items()},
        "text_kinds_n1": {a: {k: _mean([x[k] for x in ks]) for k in ks[0]} for a, ks in kinds.items() if ks},
        "final_slopes": final_slopes(runs, cfg["steps"]),
        "over_n": over_n_all,
        "by_position": {a: by_position(root, labels, ns) for a, labels in evaluated.items()},
        "interpretable": interpretable,
        "diagnosis": diagnosis,
        "findings": findings,
    }
