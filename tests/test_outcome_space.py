"""The outcome-space check (recipe_bcr/miniature/paper/outcome_space.py) and the design checks beside it
(design_checks.py): every verdict of every proposed rule is reachable under designed synthetic arms, a rule whose
"reproduced" is fixed away by the design is reported as such, and the offline preconditions compute what they say."""

import copy
import json

import numpy as np
import pytest

from recipe_bcr.miniature.paper import outcome_space as space
from recipe_bcr.miniature.paper.design_checks import (
    ChainCosts,
    allocator_share,
    chain_costs,
    evaluated_questions,
    group_overhead,
    overlaps,
    smallest_budget,
)
from recipe_bcr.miniature.paper.rules import (
    bootstrap_diff,
    format_window,
    plateaued,
    slope_interval,
    t_quantile,
    window_slope,
)

# the registration at test sizes: fewer problems and resamples, so that a designed arm judges in milliseconds
SMALL = space.load_config()
SMALL["seeds"] = [0, 1, 2]
SMALL["eval"]["problems"] = 300
SMALL["findings"]["bootstrap"]["resamples"] = 400

DESIGNED = space.DESIGNED


@pytest.mark.parametrize("fid,cell,expected", DESIGNED, ids=[f"{f}-{v}-{i}" for i, (f, _, v) in enumerate(DESIGNED)])
def test_every_verdict_of_every_rule_is_reachable_under_designed_arms(fid, cell, expected):
    assert space.simulate(fid, cell, SMALL, reps=2, seed=0) == {expected: 2}


def test_the_designed_arms_reach_all_four_verdicts_of_every_rule():
    reached = {(f, v) for f, _, v in DESIGNED}
    assert {f for f, _ in reached} == set(space.SIMULATE)
    assert all(sum(1 for f2, _ in reached if f2 == f) == 4 for f in space.SIMULATE)


def _second_f1(cfg: dict) -> dict:
    """The second registration's F1 (pooled interval, a 95% ceiling, no range on the trained baseline)."""
    out = copy.deepcopy(cfg)
    out["findings"]["F1"] = {"acc_margin_pts": -3.0, "ceiling": 0.95}
    return out


def test_a_rule_without_a_reproduced_region_is_reported_as_such():
    grid = {"F1": {"baseline_acc": [0.97], "delta_pts": [-1.5, 0.0, 1.5, 2.5], "seed_sd_pts": [0.5]}}
    reps = {"F1": 2}
    broken = space.outcome_space(_second_f1(SMALL) | {"findings": {**_second_f1(SMALL)["findings"]}}, 0, reps, grid)
    assert "reproduced" not in broken["rules"]["F1"]["reachable"]
    assert space.region(broken, "F1", "baseline_acc") == {0.97: 0.0}
    # the same check on the proposed rule off the ceiling finds the region
    grid["F1"]["baseline_acc"] = [0.86]
    fixed = space.outcome_space(SMALL, 0, reps, grid)
    assert space.region(fixed, "F1", "baseline_acc")[0.86] > 0


def test_rule_shapes_it_does_not_simulate_are_named_not_guessed():
    cfg = _second_f1(SMALL)
    cfg["findings"] = {k: cfg["findings"][k] for k in ("bootstrap", "F1")}
    cfg["findings"]["F3"] = {"inert": ["filler"], "useful": "recheck"}
    grid = {"F1": {"baseline_acc": [0.86], "delta_pts": [0.0], "seed_sd_pts": [0.5]}}
    out = space.outcome_space(cfg, 0, {"F1": 1}, grid)
    assert set(out["rules"]) == {"F1", "F3"}
    assert "useful_gain_min" in out["rules"]["F3"]["why"]
    assert "useful_gain_min" in space.table(out)


def test_the_vectorised_pooled_interval_is_bootstrap_diff():
    rng = np.random.default_rng(1)
    a, b = ((rng.random((3, 200)) < p).astype(float) for p in (0.8, 0.7))
    boot = {"resamples": 1000, "level": 0.9, "seed": 3}
    ours = space._pooled_bootstrap(a, b, boot)
    theirs = bootstrap_diff(
        {i: list(a[:, i]) for i in range(200)}, {i: list(b[:, i]) for i in range(200)}, 1000, 0.9, 3
    )
    assert ours[0] == pytest.approx(theirs[0])
    assert ours[1:] == pytest.approx(theirs[1:], abs=0.01)


def test_t_quantiles_match_the_tables():
    assert t_quantile(0.90, 2) == pytest.approx(2.920, abs=1e-3)
    assert t_quantile(0.90, 13) == pytest.approx(1.771, abs=1e-3)
    assert t_quantile(0.95, 1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(0.95, 4) == pytest.approx(2.776, abs=1e-3)


def test_slope_interval_recovers_a_line_and_brackets_its_noise():
    s, lo, hi = slope_interval([1, 2, 3, 4, 5], [[2, 2], [4, 4], [6, 6], [8, 8], [10, 10]], 0.9)
    assert (s, lo, hi) == pytest.approx((2.0, 2.0, 2.0))
    s, lo, hi = slope_interval([1, 2, 3], [[0, 3, -3], [1, 4, -2], [2, 5, -1]], 0.9)
    assert s == pytest.approx(1.0) and lo < 1.0 < hi
    # 9 points, slope 1, residual sd sqrt(54/7) = 2.78: half-width t(0.9, 7) x 2.78 / sqrt(6) = 2.15
    assert hi - s == pytest.approx(1.895 * (54 / 7 / 6) ** 0.5, abs=1e-3)


def test_the_check_is_deterministic_and_the_cli_writes_json_and_a_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(space, "GRID", {f: {k: v[:1] for k, v in g.items()} for f, g in space.GRID.items()})
    small = tmp_path / "small.yaml"
    small.write_text(json.dumps(SMALL))  # JSON is YAML
    out = tmp_path / "space.json"
    assert space.main(["--config", str(small), "--out", str(out), "--reps", "1"]) == 0
    first = json.loads(out.read_text())
    assert space.main(["--config", str(small), "--out", str(out), "--reps", "1"]) == 0
    assert json.loads(out.read_text()) == first
    assert set(first["rules"]) == set(space.SIMULATE)
    assert "| F1 |" in capsys.readouterr().out


COSTS = {o: ChainCosts(bare=20.0 + 15 * o, recheck=15.0 * o, restatement=6.0 + 2 * o) for o in range(1, 7)}


def test_allocator_share_is_all_with_room_none_without_and_less_with_the_restatement():
    assert allocator_share(COSTS, 2000, 3, 5)["share"] == 1.0
    assert allocator_share(COSTS, 100, 3, 5)["share"] == 0.0
    mid = allocator_share(COSTS, 330, 3, 5)
    assert 0 < allocator_share(COSTS, 330, 3, 5, keep_restatement=True)["share"] < mid["share"] < 1
    assert mid["wanted_per_long_problem"] == pytest.approx((75 + 90) / 2)


def test_allocator_fits_whole_rechecks_and_weighs_the_base_rate():
    one = {5: ChainCosts(bare=50.0, recheck=40.0, restatement=0.0)}
    # a single long chain: room 100 - 50 - 1 = 49 holds its 40-token re-check whole, room 80 - 51 = 29 none of it
    assert allocator_share(one, 100, 1, 5)["share"] == 1.0
    assert allocator_share(one, 80, 1, 5)["share"] == 0.0
    two = allocator_share(one, 50 * 2 + 2 + 1 + 40, 2, 5, recheck_rate=0.5)  # room for one re-check of two
    # wanted per long problem 0.5 x 40; kept: both wanted (1/4) -> 40 of 80, one wanted (1/2) -> all of it
    assert two["share"] == pytest.approx((0.25 * 40 + 0.5 * 40) / (0.25 * 80 + 0.5 * 40))
    assert smallest_budget(one, 1, 5, 0.8) == 91


def test_the_committed_toys_costs_and_the_audits_allocator_figures():
    from tokenizers import Tokenizer

    from recipe_bcr.miniature.toy.model import RESOURCES, load_specs

    tok = Tokenizer.from_file(str(RESOURCES / "toy_model_compete" / "tokenizer.json"))

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    costs = chain_costs(load_specs(["config=toy_compete"])[0], count, samples=8)
    assert [costs[o].recheck for o in range(1, 7)] == [8, 19, 32, 47, 64, 83]
    assert [costs[o].bare + 1 for o in range(1, 7)] == [27, 38, 51, 66, 83, 102]  # + EOS: the audit's shortest traces
    kw = {"overhead": group_overhead(count)}
    assert allocator_share(costs, 309, 3, 5, **kw)["kept_per_long_problem"] == pytest.approx(41.458, abs=1e-3)
    assert allocator_share(costs, 309, 3, 5, keep_restatement=True, **kw)["kept_per_long_problem"] == pytest.approx(
        21.139, abs=1e-3
    )


def test_overlaps_name_each_source_its_union_and_the_evaluations_own_repeats():
    evaluation = [("e0", "What is 1 + 2?"), ("e1", "What is 3 - 1?"), ("e2", "What is  1 + 2?"), ("e3", "What is 9?")]
    found = overlaps(evaluation, {"train": ["What is 1 + 2?"], "warm": ["What is 3 - 1?", "What is 5 + 1?"]})
    assert found["by_source"]["train"] == {"count": 2, "ids": ["e0", "e2"]}
    assert found["by_source"]["warm"] == {"count": 1, "ids": ["e1"]}
    assert found["any"] == {"count": 3, "ids": ["e0", "e1", "e2"]}
    assert (found["problems"], found["distinct_questions"]) == (4, 3)
    assert overlaps(evaluation[3:], {"train": ["What is 1 + 2?"]})["any"]["count"] == 0


def test_overlap_of_a_folder_without_its_base_samples_is_refused_with_where_they_are(tmp_path, capsys):
    """The second registration's runs and evaluations left the tree: `--overlap` on a folder without eval/base names
    the commit that holds them before costing anything."""
    from recipe_bcr.miniature.paper.design_checks import main
    from recipe_bcr.miniature.paper.history import V2_MAIN

    (tmp_path / "findings.json").write_text("{}")
    with pytest.raises(SystemExit) as e:
        main(["--overlap", str(tmp_path)])
    out = capsys.readouterr()
    assert e.value.code == 2 and f"git archive {V2_MAIN[:7]} benchmarks/paper" in out.err and out.out == ""


def test_evaluated_questions_reads_the_last_question_of_each_n1_prompt():
    rec = {
        "n": 1,
        "prompt": [{"content": "Solve. Example: What is 1 + 1?"}, {"content": "### Problem 1\nWhat is 4 + 3 - 2?"}],
        "problems": [{"id": "Toy-7"}],
    }
    assert evaluated_questions([rec, {**rec, "n": 3}]) == [("Toy-7", "What is 4 + 3 - 2?")]


def _rows(values, key="bcr/acc"):
    return [{"step": s + 1, key: v} for s, v in enumerate(values)]


def test_the_steps_rule_reads_the_last_windows_slope_of_every_run():
    rising = _rows([0.5 + 0.002 * s for s in range(40)])  # +0.2 points a step
    flat = _rows([0.8 + 0.01 * (s % 2) for s in range(40)])
    assert window_slope(rising, "bcr/acc", 20) == pytest.approx(0.2)
    assert abs(window_slope(flat, "bcr/acc", 20)) < 0.1
    assert plateaued([flat, flat], "bcr/acc", 20, 0.1) and not plateaued([flat, rising], "bcr/acc", 20, 0.1)
    assert not plateaued([flat[:10]], "bcr/acc", 20, 0.1)  # too short to read: not a plateau


def test_the_format_gate_reads_a_window_that_one_step_cannot_flip():
    rows = _rows([0.0] * 10 + [0.91] * 19 + [0.88], key="bcr/fmt")
    gate = format_window(rows, 20, 0.90)
    assert gate["met"] and gate["mean_last_window"] == pytest.approx((19 * 0.91 + 0.88) / 20)
    assert not format_window(rows[:15], 20, 0.90)["met"]


def test_the_gap_ceiling_counts_the_problems_a_gap_touches():
    from dataclasses import replace

    from recipe_bcr.miniature.paper.design_checks import facts, gap_ceiling, gap_pairs
    from recipe_bcr.miniature.toy.model import load_specs

    spec = load_specs(["config=toy_gaps"])[0]
    assert facts((7, [("-", 3), ("+", 4)])) == {"7 - 3", "4 + 4"}
    ceiling = gap_ceiling(spec, 300, 0)
    assert ceiling["gaps"] == sorted(spec.knowledge_gaps) and 0.8 < ceiling["evaluation"] < 0.95
    assert sum(n for n, _ in ceiling["by_ops"].values()) == 300
    assert gap_ceiling(replace(spec, knowledge_gaps=()), 300, 0)["evaluation"] == 1.0
    assert gap_ceiling(spec, 300, 0, gaps=[*spec.knowledge_gaps, "4 + 4"])["evaluation"] < ceiling["evaluation"]
    pairs = gap_pairs(spec, 300, 0, 0.2, top=3)
    assert all(abs(share - 0.2) <= abs(pairs[-1][0] - 0.2) for share, _ in pairs)
    assert all("0" not in f.split()[0] and f.split()[0] != "9" for _, pair in pairs for f in pair)


def test_the_registered_fit_rule_puts_b_where_the_amended_toy_keeps_its_useful_rechecks():
    """toy_gaps_fill's reason to exist (its config): the budget rule of paper_v3, simulated on supervised samples,
    picks a B at which a perfect allocator keeps >= 80% of the useful re-check tokens on long chains even at 90% of
    that B (the base writes a little shorter than its supervision); toy_gaps' B, at 90%, keeps ~0.66, as its base's
    measured 0.671 at B 382 did."""
    from recipe_bcr.miniature.paper.design_checks import supervised_fit_rule, toy_counter
    from recipe_bcr.miniature.toy.model import load_specs
    from recipe_bcr.miniature.toy.preconditions import load_preregistration

    pre = load_preregistration(name="paper_v3")["preconditions"]
    fit = {}
    for toy in ("toy_gaps", "toy_gaps_fill"):
        spec, _, settings = load_specs([f"config={toy}"])
        fit[toy] = supervised_fit_rule(spec, toy_counter(settings["shipped"]), pre, 5, groups=600)  # its base's tokens
    assert fit["toy_gaps"]["share_at_90pct"] < 0.75 < 0.85 < fit["toy_gaps_fill"]["share_at_90pct"]
    assert fit["toy_gaps_fill"]["budget"] > fit["toy_gaps"]["budget"] + 80  # the filler lifted the shortest samples
    for f in fit.values():  # the rule's own choice: reachable fit nearest its target, any-route share within bound
        assert abs(f["reachable_fit_n3"] - pre["fit_target"]) < 0.05 and f["any_fit_n3"] <= 0.5


def test_the_designed_table_says_which_verdicts_a_registration_reaches_and_which_it_misses():
    rows = space.designed(SMALL)
    assert space.designed_table(rows).count("| 4/4 |") == len(space.SIMULATE)
    blind = copy.deepcopy(SMALL)
    blind["findings"]["F1"]["seeds_min"] = 99  # fewer seeds than the rule asks: F1 can only say "not testable" ...
    text = space.designed_table(space.designed(blind))
    f1 = next(line for line in text.splitlines() if line.startswith("| F1 |"))
    assert "missed: reproduced, not reproduced" in f1 and f1.endswith("| 2/4 |")  # ... or "not interpretable"


def test_every_verdict_of_every_rule_is_reachable_at_the_registered_sizes():
    """What the registration commit shows: at paper_v3.yaml's own seeds, problems and resamples, one designed arm per
    verdict reaches it, for every rule."""
    rows = space.designed(space.load_config())
    assert space.designed_table(rows).count("| 4/4 |") == len(space.SIMULATE)
    assert all(r["built_for"] in r["counts"] for r in rows)


def test_the_third_registrations_format_gate_reads_the_last_window():
    """paper_v3.yaml has no `format_by`: a run whose format passed 0.90 early and then sagged (a step-based gate
    met it) misses; one that holds 0.95 over its last 20 steps meets it."""
    from recipe_bcr.miniature.paper.rules import gates

    v3 = space.load_config()["gates"]
    v2 = {**v3, "format_by": 50}

    def run(fmt):
        return [
            {"step": s + 1, "bcr/fmt": f, "bcr/truncation_rate": 0.8 if s < 20 else 0.1, "critic/score/mean": s}
            | {"bcr/acc_pos1": 0.9, "bcr/acc_pos3": 0.8}
            for s, f in enumerate(fmt)
        ]

    sagged = run([0.5] * 10 + [0.95] * 20 + [0.85] * 30)
    held = run([0.5] * 20 + [0.95] * 40)
    assert gates(sagged, 3, v2)["format"]["met"] and not gates(sagged, 3, v3)["format"]["met"]
    assert gates(held, 3, v3)["format"]["met"] and gates(held, 3, v3)["all_met"]
    assert gates(held, 3, v3)["format"]["mean_last_window"] == pytest.approx(0.95)


def test_the_third_registrations_truncation_gate_starts_at_the_bases_own_rollouts():
    """paper_v3.yaml's `truncation_first_steps: 1`: a run whose truncation falls from 0.8 to 0 within its first
    20 steps (the steps pilot's) meets the gate, which the window's mean (paper.yaml's start) misses; a run that
    never truncated much misses it either way."""
    from recipe_bcr.miniature.paper.rules import gates

    v3 = space.load_config()["gates"]
    window = {k: v for k, v in v3.items() if k != "truncation_first_steps"}

    def run(trunc):
        return [
            {"step": s + 1, "bcr/truncation_rate": t, "bcr/fmt": 0.95, "critic/score/mean": s}
            | {"bcr/acc_pos1": 0.9, "bcr/acc_pos3": 0.8}
            for s, t in enumerate(trunc)
        ]

    fast = run([0.8 - 0.08 * s for s in range(10)] + [0.0] * 140)
    flat = run([0.3] + [0.0] * 149)
    assert v3["truncation_first_steps"] == 1
    assert gates(fast, 3, v3)["truncation"] == {"first": pytest.approx(0.8), "last": 0.0, "met": True}
    assert (
        gates(fast, 3, window)["truncation"]["first"] == pytest.approx(0.22)
        and not gates(fast, 3, window)["truncation"]["met"]
    )
    assert not gates(flat, 3, v3)["truncation"]["met"]
