"""The second miniature's findings (hydra_configs/paper.yaml `findings`), judged from a paper output folder.

Reads what the paper command leaves there: base_preconditions.json, runs/<name>/run.json, metrics.jsonl and
rollouts/ (verl's dump), eval/<name>/summary.json and samples.jsonl (recipe_bcr.eval). Returns one JSON-ready dict:
the base's preconditions, the dynamics gates per BCR seed, the controls, and F1-F5, each with its numbers and
exactly one verdict of rules.VERDICTS. Interpretability comes first: a missed precondition, a BCR seed that
misses a gate, or sizes other than the registered ones (a lowered train_steps excepted) make every verdict "not
interpretable"; a finding whose data could not have failed it (or are absent) is "not testable".
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.eval.runner import iter_records, samples_path
from recipe_bcr.miniature.paper.rules import (
    bootstrap_diff,
    collapsed,
    f1_accuracy,
    f5_testable,
    gates,
    monotone,
    seed_bootstrap_diff,
    verdict,
)
from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import QUESTION, category_texts

FINDINGS = ("F1", "F2", "F3", "F4", "F5")
ARMS = ("bcr", "truncation_n1", "n2", "baseline_n1")  # BCR and its three controls (paper.yaml `controls`)
Count = Callable[[str], int]  # text -> tokens (the base's tokenizer)


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def read_runs(root: Path) -> list[dict[str, Any]]:
    """Every finished run's run.json, with its per-step metrics under "metrics"."""
    out = []
    for meta in sorted(Path(root).glob("runs/*/run.json")):
        run = json.loads(meta.read_text())
        path = meta.parent / "metrics.jsonl"
        run["metrics"] = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
        out.append(run)
    return out


def metrics_by_arm(runs: list[dict[str, Any]], arms: Sequence[str]) -> dict[str, list[list[dict[str, Any]]]]:
    """Each of `arms` (in that order) that trained: its runs' per-step metrics, one list per seed."""
    by: dict[str, list[list[dict[str, Any]]]] = {}
    for run in runs:
        if arm_of(run) in arms and run["metrics"]:
            by.setdefault(arm_of(run), []).append(run["metrics"])
    return {a: by[a] for a in arms if a in by}


def arm_of(run: dict[str, Any]) -> str:
    """A run's arm: "bcr", a control's name (its run name less the seed), or its ablation group."""
    if run["group"] == "main":
        return "bcr"
    if run["group"] == "control":
        return run["name"].rsplit("_s", 1)[0]
    return run["group"]


def summary(root: Path, label: str) -> dict[int, dict[str, Any]]:
    path = Path(root) / "eval" / label / "summary.json"
    if not path.exists():
        return {}
    return {int(r["n"]): r for r in json.loads(path.read_text()) if r["benchmark"] == "Toy"}


def records(root: Path, label: str, n: int) -> list[dict[str, Any]]:
    """An evaluation's sample records at N=n ([] when it was not evaluated)."""
    path = samples_path(Path(root) / "eval" / label)
    return [r for r in iter_records(path) if int(r["n"]) == n] if path.exists() else []


def per_seed(root: Path, labels: Sequence[str], field: str) -> list[dict[str, float]]:
    """Per label (seed), N=1 problem id -> its value: "correct" (0/1) or "tokens" (the completion's)."""
    out: list[dict[str, float]] = []
    for label in labels:
        values: dict[str, float] = {}
        for rec in records(root, label, 1):
            p = rec["problems"][0]
            if p["scored"]:
                values[p["id"]] = float(bool(p["correct"])) if field == "correct" else float(rec["generated_tokens"])
        out.append(values)
    return out


def pooled(root: Path, labels: Sequence[str], field: str) -> dict[str, list[float]]:
    """N=1 problem id -> its values over the labels (seeds)."""
    out: dict[str, list[float]] = {}
    for values in per_seed(root, labels, field):
        for pid, value in values.items():
            out.setdefault(pid, []).append(value)
    return out


def ops_of(rec: dict[str, Any]) -> int:
    """The number of operations of an N=1 record's problem, read off its prompt."""
    text = "\n".join(m["content"] for m in rec["prompt"])
    m = QUESTION.search(text)
    if not m:
        raise ValueError(f"eval record {rec.get('key')}: no toy question in its prompt")
    return len(re.findall(r" [+-] ", m.group(1)))


def category_tokens(recs: Sequence[dict[str, Any]], count: Count, long_ops: int) -> dict[str, Any]:
    """Tokens per problem of each category at N=1, and re-check tokens per long-chain problem (>= long_ops)."""
    rows = [
        {
            c: float(sum(count(t) for t in texts))
            for c, texts in category_texts(sections(rec["completion"], 1)[0]).items()
        }
        for rec in recs
    ]
    # a kind no completion writes (toy_compete has no inert re-check) gets no column
    always = ("narration", "restatement", "filler", "recheck")
    kinds = [c for c in rows[0] if c in always or any(r[c] for r in rows)] if rows else list(always)
    long_recheck = [r["recheck"] for r, rec in zip(rows, recs) if ops_of(rec) >= long_ops]
    return {
        "per_problem": {c: _mean([r[c] for r in rows]) for c in kinds},
        "recheck_long": _mean(long_recheck),
        "problems": len(recs),
        "long_problems": len(long_recheck),
    }


def _fall(before: float, after: float) -> float:
    return 1 - after / before if before > 0 else float("nan")


def seeds_resampled(root: Path, arms: dict[str, list[str]], args: tuple[int, float, int]) -> dict[str, Any]:
    """Beside F1's rule, not part of it: BCR against each N=1 arm with seeds resampled as units
    (`seed_bootstrap_diff`), accuracy in points and tokens per problem, and each arm's per-seed means."""
    out: dict[str, Any] = {"per_seed": {}}
    for field in ("correct", "tokens"):
        seeds = {arm: per_seed(root, arms.get(arm, []), field) for arm in ("bcr", "baseline_n1", "truncation_n1")}
        scale = 100 if field == "correct" else 1
        out["per_seed"][field] = {arm: [scale * _mean(list(m.values())) for m in v] for arm, v in seeds.items() if v}
        for other in ("baseline_n1", "truncation_n1"):
            if not (seeds["bcr"] and seeds[other]):
                continue
            if not set.intersection(*(set(m) for m in (*seeds["bcr"], *seeds[other]))):
                # a seed with no scored problem (or none shared) leaves nothing to pair; the rule's figures stand
                out[f"{field}_vs_{other}"] = {"why": "no N=1 problem scored in every seed of both arms"}
                continue
            d, lo, hi = seed_bootstrap_diff(seeds["bcr"], seeds[other], *args)
            out[f"{field}_vs_{other}"] = {"diff": scale * d, "ci": [scale * lo, scale * hi]}
    return out


def judge_f1(root: Path, arms: dict[str, list[str]], rule: dict[str, Any], boot: dict[str, Any]) -> dict[str, Any]:
    """Accuracy kept by an absolute margin, tokens below the baseline; tokens against the truncation control."""
    acc_b, acc_0 = pooled(root, arms.get("bcr", []), "correct"), pooled(root, arms.get("baseline_n1", []), "correct")
    if not (acc_b and acc_0 and set(acc_b) & set(acc_0)):
        return {"ok": None, "testable": False, "why": "no N=1 evaluation of both BCR and the baseline"}
    out = f1_accuracy(acc_b, acc_0, rule, boot)
    args = (int(boot["resamples"]), float(boot["level"]), int(boot["seed"]))
    tok_b = pooled(root, arms["bcr"], "tokens")
    d, lo, hi = bootstrap_diff(tok_b, pooled(root, arms["baseline_n1"], "tokens"), *args)
    out["tokens_vs_baseline"] = {"diff": d, "ci": [lo, hi]}
    out["tokens_ok"] = hi < 0
    tok_t = pooled(root, arms.get("truncation_n1", []), "tokens")
    if tok_t and set(tok_b) & set(tok_t):
        d, lo, hi = bootstrap_diff(tok_b, tok_t, *args)
        out["tokens_vs_truncation"] = {"diff": d, "ci": [lo, hi]}
        out["beyond_truncation"] = hi < 0
        out["reading"] = (
            "BCR compresses beyond what the truncation control gives"
            if hi < 0
            else "the truncation control compresses more than BCR"
            if lo > 0
            else "no difference from the truncation control: a per-problem cut accounts for BCR's tokens"
        )
    out["accuracy_ok"] = out["ok"]
    out["ok"] = bool(out["ok"] and out["tokens_ok"])
    out["seeds_resampled"] = seeds_resampled(root, arms, args)
    return out


def judge_f2(root: Path, arms: dict[str, list[str]], ns: Sequence[int], rule: dict[str, Any]) -> dict[str, Any]:
    """Tokens per correct problem (eval summary `tokens_correct_problem`) non-increasing over N, BCR's seeds
    averaged; the baseline's series beside it."""

    def series(labels: Sequence[str]) -> list[float]:
        sums = [summary(root, x) for x in labels]
        values = [[s[n].get("tokens_correct_problem") for s in sums if n in s] for n in ns]
        return [_mean([v for v in vs if v is not None]) for vs in values]

    bcr = series(arms.get("bcr", []))
    testable = bool(bcr) and all(x == x for x in bcr)
    return {
        "n": list(ns),
        "bcr_tokens_per_correct_problem": bcr,
        "baseline_tokens_per_correct_problem": series(arms.get("baseline_n1", [])),
        "testable": testable,
        "ok": monotone(bcr, float(rule["monotone_slack_tokens"]), increasing=False) if testable else None,
    }


def judge_f3(
    root: Path, arms: dict[str, list[str]], rule: dict[str, Any], long_ops: int, count: Count, acc_ok: bool | None
) -> dict[str, Any]:
    """Per category, tokens per problem at N=1, base -> BCR: inert ones fall >= inert_fall_min, re-checks on long
    chains fall <= useful_fall_max, and F1's accuracy rule holds."""
    base_recs = records(root, "base", 1)
    bcr_recs = [r for x in arms.get("bcr", []) for r in records(root, x, 1)]
    if not (base_recs and bcr_recs):
        return {"ok": None, "testable": False, "why": "no N=1 evaluation of both the base and BCR"}
    base, bcr = category_tokens(base_recs, count, long_ops), category_tokens(bcr_recs, count, long_ops)
    falls = {c: _fall(base["per_problem"][c], bcr["per_problem"][c]) for c in rule["inert"]}
    useful = _fall(base["recheck_long"], bcr["recheck_long"])
    testable = all(f == f for f in falls.values()) and useful == useful
    ok = all(f >= rule["inert_fall_min"] for f in falls.values()) and useful <= rule["useful_fall_max"] and bool(acc_ok)
    return {
        "base": base,
        "bcr": bcr,
        "inert_falls": falls,
        "useful_recheck_long_fall": useful,
        "accuracy_kept": acc_ok,
        "testable": testable,
        "ok": ok if testable else None,
    }


def judge_f4(root: Path, runs: Sequence[dict[str, Any]], rule: dict[str, Any]) -> dict[str, Any]:
    """N=1 tokens per problem non-decreasing in B over >= min_budgets evaluated budgets (BCR's runs are B's)."""
    by_budget: dict[int, list[float]] = {}
    for run in runs:
        if run["group"] in ("main", "budget"):
            s = summary(root, run["name"])
            if 1 in s:
                by_budget.setdefault(int(run["budget"]), []).append(float(s[1]["tokens_per_problem"]))
    budgets = sorted(by_budget)
    toks = [_mean(by_budget[b]) for b in budgets]
    testable = len(budgets) >= int(rule["min_budgets"])
    return {
        "budgets": budgets,
        "tokens_per_problem_n1": toks,
        "seeds": [len(by_budget[b]) for b in budgets],
        "testable": testable,
        "ok": monotone(toks, float(rule["monotone_slack_tokens"]), increasing=True) if testable else None,
    }


def group_lengths(dump_dir: Path, steps: int, count: Count) -> list[list[float]]:
    """Rollout lengths per GRPO group over the first `steps` steps of verl's dump (`response_tokens` where the
    dump has it, else the output's tokens)."""
    from recipe_bcr.miniature.toy.rollouts import group_of, read_dump

    dump = read_dump(dump_dir) if dump_dir.exists() else {}
    out = []
    for step in sorted(dump)[:steps]:
        groups: dict[Any, list[float]] = {}
        for row in dump[step]:
            length = row.get("response_tokens") or count(row["output"])
            groups.setdefault(group_of(row), []).append(float(length))
        out += list(groups.values())
    return out


def judge_f5(
    root: Path, runs: Sequence[dict[str, Any]], cfg: dict[str, Any], bcr_gates_met: bool, count: Count
) -> dict[str, Any]:
    """Each explicit length penalty collapses (rules.collapsed) in >= seeds_min seeds and BCR meets its
    gates; not testable unless rollout lengths vary within groups (f5_testable, first `gates.window` steps)."""
    rule, w = cfg["findings"]["F5"], int(cfg["gates"]["window"])
    bcr = {r["seed"]: r for r in runs if r["group"] == "main"}

    def tail_len(run: dict[str, Any]) -> float:
        return _mean([m["response_length/mean"] for m in run["metrics"] if "response_length/mean" in m][-w:])

    presets = {}
    for preset in cfg["ablations"]["reward"]:
        pen = [r for r in runs if r["group"] == "reward" and r["reward"] == preset]
        if not pen or not bcr:
            presets[preset] = {"runs": len(pen), "testable": False, "collapsed_seeds": 0}
            continue
        lengths = [g for r in pen for g in group_lengths(root / "runs" / r["name"] / "rollouts", w, count)]
        test = f5_testable(lengths, int(pen[0]["budget"]), rule)
        ref = {s: tail_len(r) for s, r in bcr.items()}
        fallback = _mean(list(ref.values()))
        falls = [collapsed(r["metrics"], ref.get(r["seed"], fallback), rule, w) for r in pen]
        presets[preset] = {"runs": len(pen), **test, "collapsed_seeds": sum(falls)}
    testable = bool(presets) and all(p["testable"] for p in presets.values())
    ok = all(p["collapsed_seeds"] >= int(rule["seeds_min"]) for p in presets.values()) and bcr_gates_met
    return {"penalties": presets, "bcr_gates_met": bcr_gates_met, "testable": testable, "ok": ok if testable else None}


def controls(root: Path, runs: Sequence[dict[str, Any]], window: int, arms: Sequence[str] = ARMS) -> dict[str, Any]:
    """BCR and each control: its runs, budget, N=1 accuracy and tokens per problem (seed mean) and training
    truncation over the last `window` steps."""
    out: dict[str, Any] = {}
    for run in runs:
        arm = arm_of(run)
        if arm not in arms:
            continue
        empty = {"runs": [], "acc_n1": [], "tokens_n1": [], "train_truncation_last": []}
        a = out.setdefault(arm, {**empty, "budget": run["budget"], "n": run["n"]})
        a["runs"].append(run["name"])
        s = summary(root, run["name"])
        if 1 in s:
            a["acc_n1"].append(s[1]["acc"])
            a["tokens_n1"].append(s[1]["tokens_per_problem"])
        trunc = [m["bcr/truncation_rate"] for m in run["metrics"] if "bcr/truncation_rate" in m][-window:]
        a["train_truncation_last"].append(_mean(trunc))
    return {arm: {**a, "seeds": len(a["runs"])} for arm, a in out.items()}


def eval_problems(root: Path, arms: dict[str, list[str]]) -> dict[str, int]:
    """Distinct problems evaluated at N=1 per arm (pooled over its seeds)."""
    return {arm: len(pooled(root, labels, "correct")) for arm, labels in arms.items()}


def diagnose(
    runs: Sequence[dict[str, Any]], cfg: dict[str, Any], pre: dict[str, Any], overrides: Sequence[str], allowed: str
) -> tuple[dict[str, list[str]], list[dict[str, Any]], list[str]]:
    """(run names by arm, each BCR seed's gates, every reason the findings are not interpretable: a missed
    precondition, a missed gate, no BCR run, sizes other than the registered ones, `allowed` overrides aside)."""
    arms: dict[str, list[str]] = {}
    for run in runs:
        arms.setdefault(arm_of(run), []).append(run["name"])
    diagnosis = [
        f"precondition {r['name']} = {r['value']:.3f}, registered {r['range']}" for r in pre["rows"] if not r["met"]
    ]
    gate_rows = [
        {"run": r["name"], "n": r["n"], "steps": len(r["metrics"]), "gates": gates(r["metrics"], r["n"], cfg["gates"])}
        for r in runs
        if r["group"] == "main"
    ]
    for g in gate_rows:
        missed = [k for k, v in g["gates"].items() if k != "all_met" and not v["met"]]
        if missed:
            diagnosis.append(f"{g['run']} misses the gate(s) {', '.join(missed)}")
    if not gate_rows:
        diagnosis.append("no BCR run: the gates cannot be read")
    sized = [o for o in overrides if not o.startswith(allowed)]
    if sized:
        diagnosis.append(f"sizes other than the registered ones ({', '.join(sized)}): not the registered experiment")
    return arms, gate_rows, diagnosis


def preconditions_record(pre: dict[str, Any]) -> dict[str, Any]:
    """findings.json's account of the base: its rows, whether all are met, and which registration measured it when."""
    return {
        "rows": pre["rows"],
        "all_met": all(r["met"] for r in pre["rows"]),
        "registration": pre.get("registration"),
        "launched_at": pre.get("launched_at"),
    }


def judge(
    root: Path,
    cfg: dict[str, Any],
    pre: dict[str, Any],
    count: Count,
    context: dict[str, Any],
) -> dict[str, Any]:
    """findings.json's content. `context`: what the command knows and the folder does not (registration,
    launched_at, overrides, allow_missed_preconditions, train_steps, budget, and "stopped" when no run was made)."""
    root = Path(root)
    runs = read_runs(root)
    arms, gate_rows, diagnosis = diagnose(runs, cfg, pre, context.get("overrides", []), "train_steps=")
    bcr_gates_met = bool(gate_rows) and all(g["gates"]["all_met"] for g in gate_rows)
    interpretable = not diagnosis
    ns = [int(n) for n in cfg["eval"]["n"]]
    f1 = judge_f1(root, arms, cfg["findings"]["F1"], cfg["findings"]["bootstrap"])
    numbers = {
        "F1": f1,
        "F2": judge_f2(root, arms, ns, cfg["findings"]["F2"]),
        "F3": judge_f3(
            root, arms, cfg["findings"]["F3"], int(cfg["preconditions"]["long_chain_ops"]), count, f1.get("accuracy_ok")
        ),
        "F4": judge_f4(root, runs, cfg["findings"]["F4"]),
        "F5": judge_f5(root, runs, cfg, bcr_gates_met, count),
    }
    findings = {
        fid: {"verdict": verdict(v.get("ok"), interpretable, bool(v.get("testable", False))), **v}
        for fid, v in numbers.items()
    }
    return {
        "registration": context["registration"],
        "launched_at": context["launched_at"],
        "overrides": list(context.get("overrides", [])),
        "allow_missed_preconditions": bool(context.get("allow_missed_preconditions", False)),
        "train_steps": context.get("train_steps"),
        "train_steps_registered": context.get("train_steps_registered"),
        "budget": context.get("budget"),
        "stopped": context.get("stopped"),
        "preconditions": preconditions_record(pre),
        "gates": gate_rows,
        "controls": controls(root, runs, int(cfg["gates"]["window"])),
        "eval_problems": eval_problems(root, {a: v for a, v in arms.items() if a in ARMS}),
        "interpretable": interpretable,
        "diagnosis": diagnosis,
        "findings": findings,
    }
