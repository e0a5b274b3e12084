"""The second miniature's dynamics gates and finding rules (recipe_bcr/miniature/paper/rules.py, gates.py) on synthetic
metrics."""

from __future__ import annotations

import json

import pytest

from recipe_bcr.miniature.paper.rules import (
    VERDICTS,
    bootstrap_diff,
    collapsed,
    f1_accuracy,
    f5_testable,
    gates,
    kendall_tau,
    monotone,
    seed_bootstrap_diff,
    verdict,
)
from recipe_bcr.miniature.toy.preconditions import load_preregistration

G = load_preregistration()["gates"]
F = load_preregistration()["findings"]


def _run(
    steps=100,
    trunc=lambda s: max(0.1, 1 - s / 40),
    fmt=lambda s: min(1.0, s / 30),
    pos3=lambda s: min(0.8, s / 50),
    reward=lambda s: 0.5 + s / 100,
):
    return [
        {
            "step": s,
            "bcr/truncation_rate": trunc(s),
            "bcr/fmt": fmt(s),
            "bcr/acc_pos1": 0.9,
            "bcr/acc_pos3": pos3(s),
            "critic/score/mean": reward(s) + (0.05 if s % 2 else -0.05),
        }
        for s in range(1, steps + 1)
    ]


def test_an_engaged_run_meets_every_gate():
    g = gates(_run(), 3, G)
    assert g["all_met"], g
    assert g["format"]["step_reached"] == 29 and g["truncation"]["last"] == pytest.approx(0.1)


@pytest.mark.parametrize(
    "change, missed",
    [
        (dict(trunc=lambda s: 1.0, fmt=lambda s: 0.0, pos3=lambda s: 0.0), {"truncation", "format", "last_position"}),
        (dict(trunc=lambda s: 0.6 - s / 1000), {"truncation"}),  # ends at 0.5: above 0.30
        (dict(trunc=lambda s: 0.35 - s / 1000), {"truncation"}),  # low, but never fell by 0.40
        (dict(fmt=lambda s: min(1.0, s / 60)), {"format"}),  # 0.90 first reached after step 50
        (dict(pos3=lambda s: 0.4), {"last_position"}),  # 0.40 < half of 0.90
        (dict(reward=lambda s: 1.0), {"reward_trend"}),  # flat (alternating noise only)
    ],
)
def test_each_gate_misses_on_its_own_failure(change, missed):
    g = gates(_run(**change), 3, G)
    assert {k for k, v in g.items() if k != "all_met" and not v["met"]} == missed and not g["all_met"]


def test_a_run_too_short_for_two_windows_misses_the_truncation_gate():
    assert not gates(_run(steps=15), 3, G)["truncation"]["met"]


def test_kendall_tau_by_hand():
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau([1, 2], [5, 5]) != kendall_tau([1, 2], [5, 5])  # no order at all: NaN


def test_bootstrap_ci_covers_no_difference_and_excludes_a_real_one():
    same = {i: [float(i % 4 != 0)] * 3 for i in range(400)}
    d, lo, hi = bootstrap_diff(same, same, 500, 0.9, 0)
    assert d == 0 and lo <= 0 <= hi
    worse = {i: [float(i % 2 != 0)] * 3 for i in range(400)}  # 50% against 75%
    d, lo, hi = bootstrap_diff(worse, same, 500, 0.9, 0)
    assert d == pytest.approx(-0.25) and hi < -0.15
    with pytest.raises(ValueError, match="share no"):
        bootstrap_diff({1: [1.0]}, {2: [1.0]}, 10, 0.9, 0)


def test_seeds_resampled_as_units_keep_a_seeds_shared_noise():
    """Two arms of equal mean whose seeds disagree by 30 points on every problem (as the committed baseline's did):
    drawing a problem's seeds problem by problem averages the disagreement away; drawing seeds as units keeps it."""
    rng = __import__("random").Random(0)
    seeds_a = [{i: float(rng.random() < acc) for i in range(500)} for acc in (0.6, 0.9, 0.9)]
    seeds_b = [{i: float(rng.random() < acc) for i in range(500)} for acc in (0.8, 0.8, 0.8)]
    pooled = [{i: [m[i] for m in arm] for i in range(500)} for arm in (seeds_a, seeds_b)]
    _, lo, hi = bootstrap_diff(*pooled, 1000, 0.9, 0)
    d, slo, shi = seed_bootstrap_diff(seeds_a, seeds_b, 1000, 0.9, 0)
    assert d == pytest.approx(
        sum(sum(m.values()) for m in seeds_a) / 1500 - sum(sum(m.values()) for m in seeds_b) / 1500
    )
    assert hi - lo < 0.07 and slo < -0.1 and shi > 0.05  # the per-seed spread (0.6 vs 0.9) is in the interval
    same = [{i: float(i % 3 != 0) for i in range(300)}] * 3
    assert seed_bootstrap_diff(same, same, 200, 0.9, 0) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="share no problem"):
        seed_bootstrap_diff([{1: 1.0}], [{2: 1.0}], 10, 0.9, 0)


def test_seeds_resampled_skips_a_comparison_no_problem_pairs(monkeypatch, tmp_path):
    """A seed whose evaluation scored nothing leaves no problem shared by every seed: that comparison says why and
    the others are still made, instead of the findings stage failing after a run's training and evaluation."""
    from recipe_bcr.miniature.paper import findings as paper_findings
    from recipe_bcr.miniature.paper.writeup import seeds_line

    maps = {"b": [{"p1": 1.0, "p2": 0.0}] * 2, "0": [{"p1": 1.0, "p2": 1.0}] * 2, "t": [{"p1": 0.0, "p2": 0.0}, {}]}
    monkeypatch.setattr(paper_findings, "per_seed", lambda root, labels, field: maps[labels[0]] if labels else [])
    out = paper_findings.seeds_resampled(
        tmp_path, {"bcr": ["b"], "baseline_n1": ["0"], "truncation_n1": ["t"]}, (50, 0.9, 0)
    )
    assert out["correct_vs_baseline_n1"]["diff"] == pytest.approx(-50.0)
    assert "why" in out["correct_vs_truncation_n1"] and "why" in out["tokens_vs_truncation_n1"]
    assert "accuracy -50.0" in seeds_line(out) and "BCR minus truncation: accuracy -" in seeds_line(out)


def test_f1_is_not_testable_at_the_ceiling_and_judged_by_the_lower_bound():
    boot = {**F["bootstrap"], "resamples": 300}  # the rule, at a test-sized resample count
    top = {i: [1.0, 1.0, 1.0] for i in range(500)}
    assert f1_accuracy(top, top, F["F1"], boot)["testable"] is False
    base = {i: [float(i % 4 != 0)] * 3 for i in range(500)}  # 75%
    close = {i: [float(i % 4 != 0 or i % 40 == 0)] * 3 for i in range(500)}  # 77.5%
    far = {i: [float(i % 2 != 0)] * 3 for i in range(500)}  # 50%
    assert f1_accuracy(close, base, F["F1"], boot)["ok"] is True
    assert f1_accuracy(far, base, F["F1"], boot)["ok"] is False


def test_verdict_words_and_their_precedence():
    assert verdict(True, interpretable=False) == "not interpretable"
    assert verdict(True, True, testable=False) == "not testable" == verdict(None, True)
    assert verdict(True, True) == "reproduced" and verdict(False, True) == "not reproduced"
    assert {verdict(o, i, t) for o in (True, False) for i in (True, False) for t in (True, False)} == set(VERDICTS)


def test_monotone_within_slack():
    assert monotone([60, 58, 58.5, 50], 1.0, increasing=False)
    assert not monotone([60, 58, 60, 50], 1.0, increasing=False)
    assert monotone([40, 45, 44.5, 60, 70], 1.0, increasing=True)


def test_the_length_penalty_ablation_is_testable_only_when_lengths_vary_within_groups():
    cut = [[129.0] * 8 for _ in range(80)]  # the first miniature: every rollout cut at B
    assert f5_testable(cut, 129, F["F5"]) == {"share_varying_groups": 0.0, "testable": False}
    varied = [[60.0, 129.0, 100.0, 129.0] for _ in range(80)]
    assert f5_testable(varied, 129, F["F5"])["testable"]


def test_collapse_is_defined_in_advance():
    falling = [{"step": s, "bcr/acc": 0.8 if s <= 10 else 0.3, "response_length/mean": 120.0} for s in range(1, 41)]
    steady = [{"step": s, "bcr/acc": 0.8, "response_length/mean": 50.0} for s in range(1, 41)]
    assert collapsed(falling, 120.0, F["F5"], 10)  # 0.3 <= 0.5 x 0.8
    assert not collapsed(steady, 120.0, F["F5"], 10)  # short, but accuracy held


def test_the_trajectory_table_averages_the_first_middle_and_last_windows(tmp_path):
    from recipe_bcr.miniature.paper.gates import trajectory_table

    run = tmp_path / "runs" / "bcr_n3_s0"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"name": "bcr_n3_s0", "group": "main", "n": 3, "single": False}))
    rows = [{"step": s, "bcr/fmt": s / 100, "bcr/acc_pos3": 1.0 if s > 95 else 0.0} for s in range(1, 101)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = trajectory_table(tmp_path, 10)
    assert "| bcr_n3_s0 | 100 | bcr/fmt | 0.055 | 0.505 | 0.955 |" in text  # steps 1-10, 46-55, 91-100
    assert "| bcr_n3_s0 | 100 | bcr/acc_pos3 | 0.000 | 0.000 | 0.500 |" in text
