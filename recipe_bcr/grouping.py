"""Difficulty-stratified grouping of problems into N-problem groups (paper, Sec. 3.1).

Algorithm, for M candidate problems with difficulties d, group size N, K groups, seed s:
  1. Select N*K problems uniformly at random (keeps the difficulty distribution); with
     fewer than N*K candidates, K shrinks to floor(M / N) and the caller reports it.
  2. Sort the selection by difficulty (ties broken randomly) and cut it into N strata of K
     consecutive problems: stratum 1 is the easiest K, stratum N the hardest K. Every group
     takes exactly one problem from every stratum, so each group mixes easy and hard.
  3. Balance: strata are dealt from hardest to easiest; within a stratum the hardest
     remaining problem goes to the group whose running difficulty sum is lowest
     (largest-into-emptiest). Group means end up close to the global mean.
  4. Shuffle the order inside every group, so position carries no difficulty signal.
All randomness comes from one numpy Generator seeded with s: same inputs, same groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
    groups = np.empty((k, n), dtype=np.int64)
    sums = np.zeros(k)
    for j in range(n - 1, -1, -1):
        members = strata[j][np.argsort(-d[strata[j]], kind="stable")]
        targets = np.lexsort((rng.random(k), sums))  # emptiest group first, ties random
        groups[targets, j] = members
        sums[targets] += d[members]
    for row in groups:
        rng.shuffle(row)
    return groups


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
