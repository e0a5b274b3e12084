import numpy as np
import pytest

from recipe_bcr.data.grouping import cover_groups, quality, stratified_groups


@pytest.fixture(scope="module")
def difficulty():
    return np.random.default_rng(1).gamma(2.0, 1.5, 5000)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_groups_are_balanced_and_mixed(difficulty, n):
    groups = stratified_groups(difficulty, n, 800, seed=7)
    assert groups.shape == (800, n)
    assert len(np.unique(groups)) == groups.size  # no problem used twice
    q = quality(difficulty, groups, seed=7)
    assert q.spread_ratio < 0.5  # far tighter group means than a random grouping
    assert abs(q.position_difficulty_corr) < 0.1
    # one problem from each difficulty stratum: every group has an easy and a hard member
    chosen = np.sort(difficulty[groups.ravel()])
    cut_easy, cut_hard = chosen[800 - 1], chosen[-800]
    assert (difficulty[groups].min(axis=1) <= cut_easy).all()
    assert (difficulty[groups].max(axis=1) >= cut_hard).all()
    # heavy tail: the one-per-stratum design bounds the spread from below; we land close to it
    assert q.floor_std * (1 - 1e-9) <= q.group_mean_std <= 1.25 * q.floor_std


def _strata_bounds(d, groups):
    """Lowest and highest value of every stratum (the chosen problems sorted, cut into N blocks of K)."""
    k, n = groups.shape
    cuts = np.sort(d[groups.ravel()]).reshape(n, k)
    return cuts[:, 0], cuts[:, -1]


@pytest.mark.parametrize("dist", ["uniform_mean", "normal"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_continuous_difficulty_reaches_a_twentieth_of_random(dist, n):
    """N >= 3: <= 0.05x random. N = 2 has one optimum (strata paired oppositely), which it must hit."""
    rng = np.random.default_rng(11)
    d = rng.uniform(7500, 22500, (4000, 3)).mean(axis=1) if dist == "uniform_mean" else rng.normal(10, 2, 4000)
    groups = stratified_groups(d, n, 700, seed=5)
    q = quality(d, groups, seed=5)
    if n == 2:
        assert q.group_mean_std == pytest.approx(q.floor_std, rel=1e-9)
    else:
        assert q.spread_ratio <= 0.05, q
    assert q.granularity == 0.0
    # still exactly one problem per stratum
    lo, hi = _strata_bounds(d, groups)
    vals = np.sort(d[groups], axis=1)  # the j-th smallest member of a group lies in stratum j
    assert ((vals >= lo) & (vals <= hi)).all()


@pytest.mark.parametrize("n", [3, 4, 5])
def test_coarse_scores_reach_the_floor_their_step_allows(n):
    d = np.random.default_rng(3).choice(np.arange(1.0, 10.0, 0.5), 4000)
    q = quality(d, stratified_groups(d, n, 700, seed=2), seed=2)
    assert q.granularity == 0.5
    assert 0 < q.floor_std * (1 - 1e-9) <= q.group_mean_std <= 1.05 * q.floor_std
    assert q.floor_ratio == pytest.approx(q.floor_std / q.random_group_mean_std)


def test_group_order_is_random_and_not_by_stratum():
    d = np.random.default_rng(4).normal(0, 1, 3000)
    groups = stratified_groups(d, 4, 600, seed=1)
    hardest_position = np.argmax(d[groups], axis=1)
    counts = np.bincount(hardest_position, minlength=4)
    assert counts.min() > 600 / 4 * 0.7  # every position holds the hardest member about equally often


def test_deterministic_and_seed_sensitive(difficulty):
    a = stratified_groups(difficulty, 3, 500, seed=3)
    assert np.array_equal(a, stratified_groups(difficulty, 3, 500, seed=3))
    assert not np.array_equal(a, stratified_groups(difficulty, 3, 500, seed=4))


def test_k_shrinks_when_data_is_short():
    assert stratified_groups(np.arange(10.0), 3, 100, seed=0).shape == (3, 3)


def test_nan_difficulty_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        stratified_groups(np.array([1.0, np.nan, 2.0]), 1, 2, seed=0)


@pytest.mark.parametrize("m,n", [(30, 1), (30, 4), (40, 3), (7, 5), (3, 5)])
def test_cover_groups_scores_every_problem_once(m, n):
    idx, scored = cover_groups(m, n, seed=0)
    assert idx.shape == scored.shape == (-(-m // n), n)
    assert sorted(idx[scored].tolist()) == list(range(m))
    assert set(idx.ravel().tolist()) == set(range(m))
