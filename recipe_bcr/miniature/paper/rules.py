"""The second miniature's verdict rules: pure functions over a run's per-step metrics and per-problem evaluation
records (hydra_configs/paper.yaml `gates` and `findings`), unit-tested on synthetic numbers before any run they
judge."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

# --- The second miniature's training-dynamics gates and finding rules (hydra_configs/paper.yaml `gates`, `findings`):
# pure functions over a run's per-step metrics and per-problem evaluation records, unit-tested on synthetic numbers
# before any run they judge. A verdict is exactly one of VERDICTS: a finding read off a base that misses a
# precondition, or off a BCR seed that misses a gate, is "not interpretable" whatever its numbers; one that could
# not have failed is "not testable".
VERDICTS = ("reproduced", "not reproduced", "not testable", "not interpretable")


def kendall_tau(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Kendall's tau-b (ties in either series count for neither side); NaN below two points."""
    n = len(xs)
    conc = disc = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    denom = ((conc + disc + tx) * (conc + disc + ty)) ** 0.5
    return (conc - disc) / denom if denom else float("nan")


def _series(rows: Sequence[dict[str, Any]], key: str) -> list[tuple[int, float]]:
    return [(int(r["step"]), float(r[key])) for r in sorted(rows, key=lambda r: r["step"]) if key in r]


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def gates(rows: Sequence[dict[str, Any]], n: int, g: dict[str, Any]) -> dict[str, Any]:
    """The dynamics gates of one BCR seed (paper.yaml `gates`): each with its measured numbers and whether it is met.
    A run too short for two windows, or without a key, misses the gate that needs it (NaN is never met). Without a
    `format_by` step (paper_v3.yaml) the format gate reads the mean over the last window (`format_window`). With
    `truncation_first_steps` (paper_v3.yaml) truncation's start is the mean over that many first steps (1: the base's
    own rollouts, before any update), so a run whose truncation falls inside the first window still shows its fall."""
    w = int(g["window"])
    trunc = [v for _, v in _series(rows, "bcr/truncation_rate")]
    first_t, last_t = _mean(trunc[: int(g.get("truncation_first_steps", w))]), _mean(trunc[-w:])
    fmt = _series(rows, "bcr/fmt")
    windows = [(fmt[k + 4][0], _mean([v for _, v in fmt[k : k + 5]])) for k in range(len(fmt) - 4)]
    reached = next((step for step, m in windows if m >= g["format_min"]), None)
    pos1 = _mean([v for _, v in _series(rows, "bcr/acc_pos1")][-w:])
    posn = _mean([v for _, v in _series(rows, f"bcr/acc_pos{n}")][-w:])
    reward = _series(rows, "critic/score/mean")
    tau = kendall_tau([s for s, _ in reward], [v for _, v in reward])
    out = {
        "truncation": {
            "first": first_t,
            "last": last_t,
            "met": len(trunc) >= 2 * w
            and last_t <= g["truncation_last_max"]
            and first_t - last_t >= g["truncation_drop_min"],
        },
        "format": {
            "step_reached": reached,
            "max_5_step_mean": max((m for _, m in windows), default=float("nan")),
            "met": reached is not None and reached <= g["format_by"],
        }
        if "format_by" in g
        else {  # the third registration's: the last window's mean
            "step_reached": reached,
            "max_5_step_mean": max((m for _, m in windows), default=float("nan")),
            **format_window(rows, w, g["format_min"]),
        },
        "last_position": {"acc_pos1": pos1, f"acc_pos{n}": posn, "met": posn >= g["last_position_ratio"] * pos1},
        "reward_trend": {"kendall_tau": tau, "met": tau >= g["reward_tau_min"]},
    }
    out["all_met"] = all(v["met"] for v in out.values())
    return out


def bootstrap_diff(
    a: dict[Any, list[float]], b: dict[Any, list[float]], resamples: int, level: float, seed: int
) -> tuple[float, float, float]:
    """(mean(a) - mean(b), CI low, CI high): a and b map a problem id to its values over seeds; problems are
    resampled (shared ids paired), then each problem's seeds."""
    ids = sorted(set(a) & set(b))
    if not ids:
        raise ValueError("bootstrap_diff: the two arms share no evaluated problem")
    rng = random.Random(seed)

    def mean_of(arm: dict[Any, list[float]], pick: list) -> float:
        vals = [v for i in pick for v in (rng.choice(arm[i]) for _ in arm[i])]
        return _mean(vals)

    point = _mean([v for i in ids for v in a[i]]) - _mean([v for i in ids for v in b[i]])
    diffs = sorted(
        mean_of(a, pick) - mean_of(b, pick) for pick in ([rng.choice(ids) for _ in ids] for _ in range(resamples))
    )
    lo = diffs[int((1 - level) / 2 * (resamples - 1))]
    hi = diffs[int((1 + level) / 2 * (resamples - 1))]
    return point, lo, hi


def seed_bootstrap_diff(
    a: Sequence[dict[Any, float]], b: Sequence[dict[Any, float]], resamples: int, level: float, seed: int
) -> tuple[float, float, float]:
    """(mean(a) - mean(b), CI low, CI high): a and b hold one map problem id -> value per seed. Each arm's seeds
    are resampled first, then the problems (shared ids paired). A seed's training noise is shared by all its
    problems, so resampling seeds as units keeps it, where `bootstrap_diff` (a problem's seeds drawn problem by
    problem) averages it away: with seeds that disagree by tens of points, this interval is the honest one."""
    import numpy as np

    ids = sorted(set.intersection(*(set(m) for m in (*a, *b))))
    if not ids:
        raise ValueError("seed_bootstrap_diff: the two arms share no problem evaluated by every seed")
    va, vb = (np.array([[m[i] for i in ids] for m in arm], dtype=float) for arm in (a, b))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ids), (resamples, 1, len(ids)))

    def means(v: "np.ndarray") -> "np.ndarray":
        return v[rng.integers(0, len(v), (resamples, len(v), 1)), picks].mean(axis=(1, 2))

    diffs = np.sort(means(va) - means(vb))
    lo = diffs[int((1 - level) / 2 * (resamples - 1))]
    hi = diffs[int((1 + level) / 2 * (resamples - 1))]
    return float(va.mean() - vb.mean()), float(lo), float(hi)


def verdict(ok: bool | None, interpretable: bool, testable: bool = True) -> str:
    """The four-word vocabulary: not interpretable (a precondition or gate missed) > not testable > the rule."""
    if not interpretable:
        return "not interpretable"
    if not testable or ok is None:
        return "not testable"
    return "reproduced" if ok else "not reproduced"


def f1_accuracy(
    bcr: dict[Any, list[float]], baseline: dict[Any, list[float]], rule: dict[str, Any], boot: dict[str, Any]
) -> dict[str, Any]:
    """F1's accuracy half: BCR minus the never-binding baseline at N=1, by an absolute margin on the lower bound of
    the bootstrap CI; not testable when both arms are above the ceiling."""
    d, lo, hi = bootstrap_diff(bcr, baseline, int(boot["resamples"]), float(boot["level"]), int(boot["seed"]))
    acc_b = _mean([v for vs in bcr.values() for v in vs])
    acc_0 = _mean([v for vs in baseline.values() for v in vs])
    testable = not (acc_b > rule["ceiling"] and acc_0 > rule["ceiling"])
    return {
        "diff_pts": 100 * d,
        "ci_pts": [100 * lo, 100 * hi],
        "acc_bcr": acc_b,
        "acc_baseline": acc_0,
        "testable": testable,
        "ok": 100 * lo >= rule["acc_margin_pts"],
    }


def monotone(values: Sequence[float], slack: float, increasing: bool) -> bool:
    """Non-decreasing (increasing=True) or non-increasing series, within `slack`."""
    pairs = list(zip(values, values[1:]))
    return all((y >= x - slack) if increasing else (y <= x + slack) for x, y in pairs)


def f5_testable(group_lengths: Sequence[Sequence[float]], budget: int, rule: dict[str, Any]) -> dict[str, Any]:
    """Can an explicit length penalty act at all? Only if rollout lengths vary within GRPO groups: the share of
    groups (first 10 steps) whose length std is at least `testable_std_frac` x B."""
    spread = [statistics.pstdev(g) >= rule["testable_std_frac"] * budget for g in group_lengths if len(g) > 1]
    share = _mean([float(s) for s in spread])
    return {"share_varying_groups": share, "testable": share >= rule["testable_group_share"]}


def collapsed(rows: Sequence[dict[str, Any]], bcr_length: float, rule: dict[str, Any], window: int) -> bool:
    """A penalty run collapses (paper.yaml `findings.F5`): training accuracy over the last window at most
    collapse_acc_ratio x the first window's, or mean response length below collapse_len_ratio x BCR's while
    training accuracy falls by at least collapse_acc_drop."""
    acc = [v for _, v in _series(rows, "bcr/acc")]
    length = [v for _, v in _series(rows, "response_length/mean")]
    first, last = _mean(acc[:window]), _mean(acc[-window:])
    short = _mean(length[-window:]) < rule["collapse_len_ratio"] * bcr_length
    return bool(last <= rule["collapse_acc_ratio"] * first or (short and first - last >= rule["collapse_acc_drop"]))


# --- The third registration's finding rules (docs/registration_v3.md; its YAML's `findings` block), added beside the
# second's, which stay as they were: the committed run is judged by those. Pure functions over per-seed numbers, so
# the outcome-space check (paper/outcome_space.py) runs the very rules a registration names on synthetic arms.


def _seed_means(seeds: Sequence[dict[Any, float]]) -> list[float]:
    return [_mean(list(m.values())) for m in seeds]


def f1_noninferiority(
    bcr: Sequence[dict[Any, float]],
    baseline: Sequence[dict[Any, float]],
    bcr_tokens: Sequence[dict[Any, float]],
    baseline_tokens: Sequence[dict[Any, float]],
    rule: dict[str, Any],
    boot: dict[str, Any],
) -> dict[str, Any]:
    """F1 with seeds as units: BCR's N=1 accuracy minus the trained baseline's, its `seed_bootstrap_diff` lower bound
    >= acc_margin_pts, and BCR's tokens per problem below the baseline's (upper bound < 0). The margin means
    something only off the ceiling, so the trained baseline's accuracy (its seeds' mean) inside
    `baseline_acc_range` is a precondition (missed: not interpretable); fewer than `seeds_min` seeds: not testable."""
    args = (int(boot["resamples"]), float(boot["level"]), int(boot["seed"]))
    lo_acc, hi_acc = rule["baseline_acc_range"]
    acc_0 = _mean(_seed_means(baseline))
    out: dict[str, Any] = {
        "seeds": [len(bcr), len(baseline)],
        "acc_baseline": acc_0,
        "acc_bcr": _mean(_seed_means(bcr)),
        "precondition_met": lo_acc <= acc_0 <= hi_acc,
        "testable": min(len(bcr), len(baseline)) >= int(rule["seeds_min"]),
    }
    if not out["testable"]:
        return {**out, "ok": None}
    d, lo, hi = seed_bootstrap_diff(bcr, baseline, *args)
    td, tlo, thi = seed_bootstrap_diff(bcr_tokens, baseline_tokens, *args)
    acc_ok = 100 * lo >= float(rule["acc_margin_pts"])
    return {
        **out,
        "diff_pts": 100 * d,
        "ci_pts": [100 * lo, 100 * hi],
        "tokens_diff": td,
        "tokens_ci": [tlo, thi],
        "accuracy_ok": acc_ok,
        "tokens_ok": thi < 0,
        "ok": bool(acc_ok and thi < 0),
    }


def f2_scaling(
    bcr_tokens: dict[int, Sequence[dict[Any, float]]],
    bcr_correct: dict[int, Sequence[dict[Any, float]]],
    baseline_correct: dict[int, Sequence[dict[Any, float]]],
    rule: dict[str, Any],
    boot: dict[str, Any],
) -> dict[str, Any]:
    """F2, the paper's comparison over N = 1..max (every map: N -> per seed, problem id -> value): BCR's tokens per
    problem fall in N (seed means non-increasing within monotone_slack_tokens, and tokens(N max) - tokens(N=1)
    below 0 with seeds as units) and BCR's accuracy degrades more gracefully than the baseline's (the CI of
    drop(BCR) - drop(baseline), drop = acc(N=1) - acc(N max) per problem, lies below 0). Not testable when an N
    is missing or the baseline does not degrade (its own drop's lower bound <= 0: nothing to be more graceful than)."""
    args = (int(boot["resamples"]), float(boot["level"]), int(boot["seed"]))
    ns = [int(n) for n in rule["n"]]
    have = all(
        n in m and len(m[n]) >= int(rule["seeds_min"]) for m in (bcr_tokens, bcr_correct, baseline_correct) for n in ns
    )
    if not have:
        return {"n": ns, "testable": False, "ok": None, "why": "an arm lacks an N of the registered range"}
    first, last = ns[0], ns[-1]
    series = [_mean(_seed_means(bcr_tokens[n])) for n in ns]

    def drops(arm: dict[int, Sequence[dict[Any, float]]]) -> list[dict[Any, float]]:
        return [{i: a[i] - b[i] for i in set(a) & set(b)} for a, b in zip(arm[first], arm[last])]

    _, tlo, thi = seed_bootstrap_diff(bcr_tokens[last], bcr_tokens[first], *args)
    _, blo, bhi = seed_bootstrap_diff(baseline_correct[first], baseline_correct[last], *args)
    dd, dlo, dhi = seed_bootstrap_diff(drops(bcr_correct), drops(baseline_correct), *args)
    tokens_ok = monotone(series, float(rule["monotone_slack_tokens"]), increasing=False) and thi < 0
    return {
        "n": ns,
        "bcr_tokens_per_problem": series,
        "tokens_last_minus_first_ci": [tlo, thi],
        "baseline_drop_ci_pts": [100 * blo, 100 * bhi],
        "drop_diff_pts": 100 * dd,
        "drop_diff_ci_pts": [100 * dlo, 100 * dhi],
        "tokens_ok": tokens_ok,
        "graceful_ok": dhi < 0,
        "testable": blo > 0,
        "ok": bool(tokens_ok and dhi < 0) if blo > 0 else None,
    }


def f3_categories(
    base: dict[str, float],
    bcr: Sequence[dict[str, float]],
    pre: dict[str, float],
    accuracy_kept: bool | None,
    rule: dict[str, Any],
) -> dict[str, Any]:
    """F3 on tokens per problem by category at N=1, the base against BCR's seed mean: every `inert` category falls
    >= inert_fall_min, the `useful` one (re-check tokens on long chains) falls <= useful_fall_max, and F1's
    accuracy half holds. Its preconditions (`pre`: measured on the base, offline or by paired interventions):
    useful_gain >= useful_gain_min, every |inert effect| <= inert_effect_max, allocator share >= allocator_min;
    missed: not interpretable. A named category the base barely writes (< present_min_tokens): not testable."""
    cats = [*rule["inert"], rule["useful"]]
    mean = {c: _mean([s[c] for s in bcr]) for c in cats}
    falls = {c: 1 - mean[c] / base[c] if base[c] > 0 else float("nan") for c in cats}
    met = (
        pre["useful_gain"] >= float(rule["useful_gain_min"])
        and all(abs(pre[f"effect_{c}"]) <= float(rule["inert_effect_max"]) for c in rule["inert"])
        and pre["allocator_share"] >= float(rule["allocator_min"])
    )
    testable = all(base[c] >= float(rule["present_min_tokens"]) for c in cats) and accuracy_kept is not None
    ok = (
        all(falls[c] >= float(rule["inert_fall_min"]) for c in rule["inert"])
        and falls[rule["useful"]] <= float(rule["useful_fall_max"])
        and bool(accuracy_kept)
    )
    return {"falls": falls, "precondition_met": met, "testable": testable, "ok": ok if testable else None}


def t_quantile(level: float, df: int) -> float:
    """t with P(|T| <= t) = level for Student's T with integer `df` (Abramowitz & Stegun 26.7.3-4, by bisection):
    the interval of a mean of few seeds needs it, a normal or a bootstrap quantile being too narrow there."""
    import math

    def central(t: float) -> float:
        theta = math.atan(t / math.sqrt(df))
        c2, term, total = math.cos(theta) ** 2, 1.0, 1.0
        if df % 2 == 0:
            for k in range(2, df - 1, 2):
                term *= c2 * (k - 1) / k
                total += term
            return math.sin(theta) * total
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + (math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0))

    lo, hi = 0.0, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if central(mid) < level else (lo, mid)
    return (lo + hi) / 2


def slope_interval(xs: Sequence[float], seeds: Sequence[Sequence[float]], level: float) -> tuple[float, float, float]:
    """(least-squares slope of y on x over every (x, seed) point, CI low, CI high), `seeds[k]` holding x[k]'s
    per-seed values: each seed's run an independent unit, the interval Student's t on n - 2 degrees of freedom (a
    bootstrap over three seeds per x read a zero slope as positive 15% of the time at a 90% level: outcome_space)."""
    pts = [(float(x), float(y)) for x, ys in zip(xs, seeds) for y in ys]
    mx, my = _mean([x for x, _ in pts]), _mean([y for _, y in pts])
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
    rss = sum((y - my - slope * (x - mx)) ** 2 for x, y in pts)
    half = t_quantile(level, len(pts) - 2) * (rss / (len(pts) - 2) / sxx) ** 0.5
    return slope, slope - half, slope + half


def f4_budget(
    budgets: Sequence[float], tokens: Sequence[Sequence[float]], rule: dict[str, Any], boot: dict[str, Any]
) -> dict[str, Any]:
    """F4: N=1 tokens per problem rise with the budget (`tokens[k]`: per-seed means at budgets[k]): the CI of the
    slope (`slope_interval`, seeds as units) lies above 0. Not testable below min_budgets budgets with seeds_min seeds each."""
    kept = [(b, t) for b, t in zip(budgets, tokens) if len(t) >= int(rule["seeds_min"])]
    if len(kept) < int(rule["min_budgets"]):
        return {"budgets": [b for b, _ in kept], "testable": False, "ok": None}
    s, lo, hi = slope_interval([b for b, _ in kept], [t for _, t in kept], float(boot["level"]))
    return {"budgets": [b for b, _ in kept], "slope": s, "slope_ci": [lo, hi], "testable": True, "ok": lo > 0}


def f5_penalties(presets: dict[str, dict[str, Any]], bcr_collapsed: int, rule: dict[str, Any]) -> dict[str, Any]:
    """F5: every explicit penalty (presets: name -> {"testable", "collapsed_seeds", "seeds"}, from `f5_testable` and
    `collapsed`) collapses in >= collapse_seeds_min of its seeds while BCR collapses in none. A BCR run that
    collapses misses its gates (not interpretable); a penalty with fewer than seeds_min seeds, or whose groups
    barely vary in length (`f5_testable`), makes F5 not testable."""
    testable = bool(presets) and all(p["testable"] and p["seeds"] >= int(rule["seeds_min"]) for p in presets.values())
    ok = all(p["collapsed_seeds"] >= int(rule["collapse_seeds_min"]) for p in presets.values())
    return {"precondition_met": bcr_collapsed == 0, "testable": testable, "ok": ok if testable else None}


def window_slope(rows: Sequence[dict[str, Any]], key: str, window: int) -> float:
    """The least-squares slope of `key` per step over the last `window` steps, in points (x100) per step; NaN when
    the run is shorter than the window. The third registration's steps rule reads it on training accuracy."""
    pts = _series(rows, key)[-window:]
    if len(pts) < max(2, window):
        return float("nan")
    xs, ys = [float(s) for s, _ in pts], [100 * v for _, v in pts]
    mx, my = _mean(xs), _mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def plateaued(runs: Sequence[Sequence[dict[str, Any]]], key: str, window: int, max_slope_pts: float) -> bool:
    """The steps rule: every run's `window_slope` of `key` below `max_slope_pts` a step (a NaN slope is not below)."""
    return bool(runs) and all(window_slope(r, key, window) < max_slope_pts for r in runs)


def format_window(rows: Sequence[dict[str, Any]], window: int, minimum: float) -> dict[str, Any]:
    """The window-based format gate: the mean of bcr/fmt over the last `window` steps >= `minimum`. One step moves
    the mean by at most 1/window, so a last-bit difference in one step cannot carry a seed across the gate."""
    fmt = [v for _, v in _series(rows, "bcr/fmt")][-window:]
    mean = _mean(fmt) if len(fmt) == window else float("nan")
    return {"mean_last_window": mean, "met": mean >= minimum}
