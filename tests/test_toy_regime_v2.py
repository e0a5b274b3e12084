"""The second miniature's base preconditions (recipe_bcr/miniature/toy/preconditions.py `regime_values`, `choose_budget`)
on planted base samples: each registered value is computed as paper.yaml defines it, and lambda follows the
registered rule."""

from __future__ import annotations

import pytest

from recipe_bcr.miniature.toy.preconditions import (
    REGIME_CHECKS,
    choose_budget,
    fit_shares,
    load_preregistration,
    regime_rows,
    regime_table,
    regime_values,
)


def _sec(tokens=60, steps=True, recheck=False, filler=False, narration=True, restatement=True, correct=True, ops=3):
    return {
        "tokens": tokens,
        "steps": steps,
        "recheck": recheck,
        "filler": filler,
        "narration": narration,
        "restatement": restatement,
        "correct": correct,
        "ops": ops,
    }


def _group(tokens, steps=(True, True, True), finished=True, fmt=True, correct=(True, True, True)):
    return {
        "tokens": tokens,
        "finished": finished,
        "fmt": fmt,
        "sections": [_sec(steps=s, correct=c) for s, c in zip(steps, correct)],
    }


def test_fit_counts_only_finished_formatted_samples_inside_the_budget():
    n3 = [
        _group(100),
        _group(100, steps=(True, False, True)),
        _group(100, finished=False),
        _group(100, fmt=False),
        _group(150),
    ]
    assert fit_shares(n3, 120) == (0.2, 0.4)  # one with steps everywhere, one more by a skip
    assert fit_shares(n3, 99) == (0.0, 0.0)


def test_lambda_is_the_grid_point_nearest_the_target_within_the_any_route_bound():
    # L_avg 100: B = 300 x lambda. Samples of 200..290 tokens, all with steps: fit share rises with lambda.
    n3 = [_group(200 + 10 * k) for k in range(10)]
    chosen = choose_budget(100.0, n3, [0.6, 0.7, 0.8, 0.9, 1.0], target=0.10, any_fit_max=0.5)
    assert chosen["budget"] == 210 and chosen["reachable_fit_n3"] == 0.2  # B=180: 0.0; B=210: 0.2 (|0.1| tie: larger)
    assert [r["budget"] for r in chosen["grid"]] == [180, 210, 240, 270, 300]
    # the any-route bound excludes budgets where more than half fit
    n3 = [_group(160, steps=(False, True, True))] * 8 + [_group(200)] * 2  # B=180, 210: over half fit
    chosen = choose_budget(100.0, n3, [0.5, 0.6, 0.7], target=0.2, any_fit_max=0.5)
    assert chosen["compression"] == 0.5 and chosen["any_fit_n3"] == 0.0


def _values(**kw):
    pre = load_preregistration()["preconditions"]
    n1 = (
        [{**_sec(tokens=40, recheck=False, filler=False, ops=1), "length": 41}] * 4
        + [{**_sec(tokens=120, recheck=True, filler=True, ops=6, correct=False), "length": 121}] * 4
        + [{**_sec(tokens=30, steps=False, correct=False, narration=False, restatement=False), "length": 31}] * 2
    )
    n3 = [_group(100)] * 9 + [_group(300)]
    n5 = [
        {
            "tokens": 300,
            "finished": True,
            "fmt": True,
            "sections": [_sec(correct=c) for c in (True, True, False, False, False)],
        }
    ]
    paired = [{"recheck": True, "closed": False, "filler": False}] * 3 + [
        {"recheck": True, "closed": True, "filler": True}
    ]
    return regime_values(n1, n3, n5, paired, kw.get("n_values", [1, 2, 3, 4, 5]), 5, pre)


def test_regime_values_follow_their_registered_definitions():
    got = _values()
    v, d = got["values"], got["details"]
    assert v["acc_n1"] == pytest.approx(0.4) and v["n5_acc_drop"] == pytest.approx(0.4 - 0.4)
    assert v["skip_share_n1"] == pytest.approx(0.2) and v["concise_share_n1"] == 0.0
    assert v["recheck_gain_long"] == pytest.approx(0.75) and v["filler_effect"] == 0.0
    assert d["l_short_n1"] == 40  # the shortest mode written WITH steps: no re-check, no filler
    assert v["slack_shortest_written"] == pytest.approx(1 - (3 * 40 + 5) / d["budget_n3"])
    lengths = [41] * 4 + [121] * 4 + [31] * 2
    mean = sum(lengths) / 10
    sd = (sum((x - mean) ** 2 for x in lengths) / 10) ** 0.5
    assert v["length_cv_n1"] == pytest.approx(sd / mean) and d["l_avg_n1"] == pytest.approx(mean)
    assert v["warm_start_covers_n"] == 5 and _values(n_values=[1, 2, 3])["values"]["warm_start_covers_n"] == 3
    assert d["acc_n1_by_ops"] == {"1": 1.0, "3": 0.0, "6": 0.0}
    assert d["acc_n5_by_position"] == [1.0, 1.0, 0.0, 0.0, 0.0]  # where an N=5 drop comes from


def test_rows_judge_every_registered_precondition_and_the_table_says_which_missed():
    th = load_preregistration()["preconditions"]["thresholds"]
    rows = regime_rows(_values()["values"], th)
    assert [r["name"] for r in rows] == list(REGIME_CHECKS)
    met = {r["name"]: r["met"] for r in rows}
    assert met["acc_n1"] is False and met["recheck_gain_long"] is True and met["concise_share_n1"] is False
    text = regime_table(rows)
    assert "| base N=1 accuracy (`acc_n1`) | 0.400 | in [0.65, 0.85] | **no** |" in text


def test_measure_regime_runs_end_to_end_on_the_committed_demo_model(tmp_path, monkeypatch):
    """The sampling path of `python -m recipe_bcr.miniature.toy_command --preconditions` at tiny sizes, on the demo's toy base
    (2-operation chains) with the competing task: every registered value comes back, from the registered sampling, and
    the paired continuations resume the base's own steps (long chains set to 2 operations so the base can write them).
    It samples on one torch thread whatever the caller set, and gives the caller its thread count back."""
    import torch

    from recipe_bcr.engines import base as engines_base
    from recipe_bcr.miniature.toy.model import RESOURCES, load_specs
    from recipe_bcr.miniature.toy.preconditions import measure_regime

    seen, generate_all = [], engines_base.generate_all
    monkeypatch.setattr(
        engines_base, "generate_all", lambda *a, **k: seen.append(torch.get_num_threads()) or generate_all(*a, **k)
    )
    before = torch.get_num_threads()
    torch.set_num_threads(2)

    cfg = load_preregistration(
        [
            "preconditions.problems=6",
            "preconditions.groups_n3=3",
            "preconditions.groups_n5=1",
            "preconditions.interventions=4",
            "preconditions.long_chain_ops=2",
            "preconditions.max_tokens_per_problem=40",
        ]
    )
    spec = load_specs(["config=toy_compete", "task.max_ops=2", "task.min_ops=2"])[0]
    got = measure_regime(RESOURCES / "toy_model", spec, [1, 2, 3], cfg["preconditions"], batch_size=16)
    v, d = got["values"], got["details"]
    assert set(v) == set(REGIME_CHECKS) and v["warm_start_covers_n"] == 3
    assert (d["problems_n1"], d["groups_n3"], d["groups_n5"]) == (6, 3, 1)
    assert 0 < d["paired_problems"] <= 4  # the base writes both steps of a 2-operation chain most of the time
    assert 0.0 <= v["acc_n1"] <= 1.0 and d["budget_n3"] == round(3 * d["l_avg_n1"] * d["compression"])
    assert [r["compression"] for r in d["budget_grid"]] == cfg["preconditions"]["compression_grid"]
    assert seen and set(seen) == {1} and torch.get_num_threads() == 2
    torch.set_num_threads(before)
