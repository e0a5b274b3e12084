import numpy as np
import pytest

from recipe_bcr.grouping import cover_groups, quality, stratified_groups


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
