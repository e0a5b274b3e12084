"""Difficulty-stratified grouping of problems into N-problem groups (paper, Sec. 3.1).

Algorithm, for M candidate problems with difficulties d, group size N, K groups, seed s:
  1. Select N*K problems uniformly at random (keeps the difficulty distribution); with
     fewer than N*K candidates, K shrinks to floor(M / N) and the caller reports it.
  2. Sort the selection by difficulty (ties broken randomly) and cut it into N strata of K
     consecutive problems: stratum 1 is the easiest K, stratum N the hardest K. Every group
     takes exactly one problem from every stratum, so each group mixes easy and hard.
  3. Balance (a number-partitioning problem with one member per stratum):
     a. greedy: strata are dealt from hardest to easiest; within a stratum the hardest
        remaining problem goes to the group whose running difficulty sum is lowest;
     b. local search, in rounds until the variance of the group sums stops falling:
        every stratum in turn is re-matched against the sums of the other strata
        (oppositely sorted, the best matching for that stratum alone), then pairs of
        groups (extreme sums, then random pairs) exchange the members of one or two
        strata when that narrows the pair. Every step keeps one problem per stratum and
        can only lower the variance.
  4. Shuffle the order inside every group, so position carries no difficulty signal.
All randomness comes from one numpy Generator seeded with s: same inputs, same groups.

Two things bound how equal group means can get, and `quality` reports the larger as the
floor: coarse scores (DeepMath's `difficulty` moves in steps of 0.5, so a group sum is a
multiple of the step) and, with a heavy tail, the stratum design itself (the group that
holds the hardest problem cannot sum to less than it plus the easiest of every other stratum).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

GRID = 1e-6  # difficulty resolution used to find the step of coarse scores


@dataclass(frozen=True)
class GroupQuality:
    groups: int
    n: int
    mean_difficulty: float
    group_mean_std: float
    random_group_mean_std: float
    spread_ratio: float  # group_mean_std / random_group_mean_std; < 1 is better than random
    position_difficulty_corr: float
    group_mean_min: float
    group_mean_max: float
    granularity: float  # step of the difficulty values (0.5 for DeepMath's column; ~0 if continuous)
    floor_std: float  # lowest group_mean_std any grouping with one problem per stratum could reach
    floor_ratio: float  # floor_std / random_group_mean_std: the spread_ratio that is attainable at best


def stratified_groups(difficulty: np.ndarray, n: int, k: int, seed: int) -> np.ndarray:
    """Indices into `difficulty`, shape (K', N) with K' = min(k, len // n); rows are groups."""
    d = np.asarray(difficulty, dtype=float)
    if n < 1 or k < 1:
        raise ValueError(f"n and k must be >= 1 (got n={n}, k={k})")
    if np.isnan(d).any():
        raise ValueError("difficulty contains NaN; drop or rate those problems first")
    rng = np.random.default_rng(seed)
    k = min(k, len(d) // n)
    if k == 0:
        return np.empty((0, n), dtype=np.int64)
    chosen = rng.choice(len(d), size=n * k, replace=False)
    order = np.lexsort((rng.random(len(chosen)), d[chosen]))
    strata = chosen[order].reshape(n, k)  # row j: the j-th easiest block of k problems
    groups = _balance(d, strata, rng)
    for row in groups:
        rng.shuffle(row)
    return groups


def _greedy(d: np.ndarray, strata: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Largest-into-emptiest, stratum by stratum from the hardest; column j holds stratum j."""
    n, k = strata.shape
    groups = np.empty((k, n), dtype=np.int64)
    sums = np.zeros(k)
    for j in range(n - 1, -1, -1):
        members = strata[j][np.argsort(-d[strata[j]], kind="stable")]
        targets = np.lexsort((rng.random(k), sums))  # emptiest group first, ties random
        groups[targets, j] = members
        sums[targets] += d[members]
    return groups


def _balance(d: np.ndarray, strata: np.ndarray, rng: np.random.Generator, max_rounds: int = 200) -> np.ndarray:
    """Greedy, then local search that only ever lowers the variance of the group sums."""
    groups = _greedy(d, strata, rng)
    k, n = groups.shape
    if n == 1 or k == 1:
        return groups
    swaps = np.zeros((n + n * (n - 1) // 2, n), dtype=bool)  # exchange one stratum, or two at once
    for i, members in enumerate([(j,) for j in range(n)] + list(combinations(range(n), 2))):
        swaps[i, list(members)] = True
    half = k // 2
    var = d[groups].sum(axis=1).var()
    for _ in range(max_rounds):
        for j in range(n):  # the best matching of stratum j against the other strata's sums
            rest = d[groups].sum(axis=1) - d[groups[:, j]]
            col = groups[:, j]
            groups[np.argsort(-rest, kind="stable"), j] = col[np.argsort(d[col], kind="stable")]
        for pairing in range(4):  # heaviest with lightest, then three random pairings
            vals = d[groups]
            sums = vals.sum(axis=1)
            order = np.argsort(sums, kind="stable") if pairing == 0 else rng.permutation(k)
            a, b = (order[:half], order[::-1][:half]) if pairing == 0 else (order[:half], order[half : 2 * half])
            gap = sums[a] - sums[b]
            after = np.abs(gap[:, None] - 2 * ((vals[a] - vals[b]) @ swaps.T.astype(float)))
            best = after.argmin(axis=1)
            ok = after[np.arange(half), best] < np.abs(gap) * (1 - 1e-12)
            mask = swaps[best[ok]]
            ga, gb = groups[a[ok]].copy(), groups[b[ok]].copy()
            groups[a[ok]] = np.where(mask, gb, ga)
            groups[b[ok]] = np.where(mask, ga, gb)
        new_var = d[groups].sum(axis=1).var()
        if new_var >= var * (1 - 1e-9):
            break
        var = new_var
    return groups


def granularity(values: np.ndarray) -> float:
    """The common step of the values (0.5 for scores 1.0, 1.5, ...); 0.0 for continuous values."""
    u = np.unique(np.round(np.asarray(values, dtype=float) / GRID).astype(np.int64))
    step = int(np.gcd.reduce(np.diff(u))) if len(u) > 1 else 0
    return step * GRID if step > 1 else 0.0  # a step of one grid unit: continuous values


def floor_std(d: np.ndarray, groups: np.ndarray) -> float:
    """A lower bound on the std of group means for any one-per-stratum grouping of these problems.

    The larger of two bounds: granularity (group sums lie on a lattice of the value step,
    so with a fractional mean they cannot all be equal) and the strata (a group holding
    value v of stratum j sums to at least v plus the minima of the other strata, and at
    most v plus their maxima; deviations forced that way cannot be avoided). For N = 2 it is
    exact: the two strata paired oppositely sorted.
    """
    k, n = groups.shape
    values = d[groups.ravel()]
    total = values.sum()
    step = granularity(values)
    lattice = 0.0
    if step > 0:
        offset = values.min()
        units = int(round((total - n * k * offset) / step))
        frac = (units % k) / k
        lattice = step * np.sqrt(frac * (1 - frac)) / n
    strata = np.sort(values).reshape(n, k)
    if n == 2:  # two strata: pairing them oppositely sorted is the optimum itself
        return max(lattice, float((strata[0] + strata[1][::-1]).std()) / 2)
    mu = total / k
    lows, highs = strata[:, 0], strata[:, -1]
    forced = 0.0
    for j in range(n):
        above = np.maximum(strata[j] + lows.sum() - lows[j] - mu, 0)
        below = np.maximum(mu - strata[j] - highs.sum() + highs[j], 0)
        forced = max(forced, float(np.mean(above**2 + below**2)))
    return max(lattice, np.sqrt(forced) / n)


def quality(difficulty: np.ndarray, groups: np.ndarray, seed: int) -> GroupQuality:
    """Spread of group means against a random grouping of the same problems, and position bias."""
    d = np.asarray(difficulty, dtype=float)
    k, n = groups.shape
    gd = d[groups]
    means = gd.mean(axis=1)
    rng = np.random.default_rng(seed + 1)
    random_means = d[rng.permutation(groups.ravel())].reshape(k, n).mean(axis=1)
    rand_std = float(random_means.std())
    std = float(means.std())
    positions = np.tile(np.arange(n), k)
    values = gd.ravel()
    corr = float(np.corrcoef(positions, values)[0, 1]) if n > 1 and values.std() > 0 else 0.0
    floor = floor_std(d, groups)
    return GroupQuality(
        groups=k,
        n=n,
        mean_difficulty=float(values.mean()),
        group_mean_std=std,
        random_group_mean_std=rand_std,
        spread_ratio=std / rand_std if rand_std > 0 else 0.0,
        position_difficulty_corr=corr,
        group_mean_min=float(means.min()),
        group_mean_max=float(means.max()),
        granularity=granularity(values),
        floor_std=floor,
        floor_ratio=floor / rand_std if rand_std > 0 else 0.0,
    )


def cover_groups(m: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Groups of N over M evaluation problems in which every problem is scored exactly once.

    Problems are shuffled (seeded) and cut into ceil(M / N) groups. When M is not a multiple
    of N, the last group is filled up with the first problems of the shuffled order; those
    fillers are marked unscored (they keep the prompt at N problems and the budget pressure
    real, but count only where they were first placed). Returns (indices, scored), (G, N) each.
    """
    if m < 1 or n < 1:
        raise ValueError(f"need m >= 1 and n >= 1 (got m={m}, n={n})")
    order = np.random.default_rng(seed).permutation(m)
    g = -(-m // n)
    padded = np.concatenate([order, order[: g * n - m]]) if g * n > m else order
    if g * n - m > m:  # N larger than the whole benchmark: cycle through it
        padded = np.resize(order, g * n)
    scored = np.zeros(g * n, dtype=bool)
    scored[:m] = True
    return padded.reshape(g, n), scored.reshape(g, n)
