"""The toy task's construction: written steps raise accuracy, filler costs tokens and nothing
else, and every supervised completion is in the format the BCR reward credits."""

from __future__ import annotations

import random

import pytest

from recipe_bcr.grading.reward import score_completion
from recipe_bcr.miniature.toy.model import load_specs
from recipe_bcr.miniature.toy.profile import profile, sections
from recipe_bcr.miniature.toy.task import (
    FILLERS,
    RECHECK,
    chain,
    essential,
    make_groups,
    make_problem,
    read_section,
    restated,
    steps_text,
    target_completion,
    target_section,
)


@pytest.fixture(scope="module", params=["toy", "toy_verbose"])
def spec(request):
    """Both toy regimes: hydra_configs/toy.yaml (the demo's) and toy_verbose.yaml (the paper-like one)."""
    return load_specs([f"config={request.param}"])[0]


def test_problems_are_chains_whose_steps_reach_the_answer(spec):
    rng = random.Random(0)
    for k in range(500):
        p = make_problem(rng, spec, k)
        start, ops = chain(p)
        assert spec.min_ops <= len(ops) <= spec.max_ops and p.difficulty == len(ops)
        value = start
        for op, d in ops:
            value = value + d if op == "+" else value - d
            assert 0 <= value <= spec.max_value and 1 <= d <= spec.max_operand
        text, reached = steps_text(p)
        assert reached == value == int(p.answers[0])
        assert read_section(text) == (len(ops), 0)


def test_a_slip_in_one_step_carries_to_the_answer(spec):
    p = make_problem(random.Random(3), spec, 0)
    _, gold = steps_text(p)
    text, reached = steps_text(p, slip_at=0, slip=1)
    assert reached == gold + 1 and read_section(text)[0] == len(chain(p)[1])


def test_supervised_accuracy_follows_steps_not_filler(spec):
    """Over many supervised sections: right after written steps about 1 - step_error_rate of the
    time, after a skip about guess_accuracy; filler or not, the same accuracy."""
    rng = random.Random(1)
    seen = {"steps": [], "skip": [], "filler": [], "plain": []}
    eligible = 0  # problems the task may skip: all, or those starting at `skip_start`
    for k in range(6000):
        p = make_problem(rng, spec, k)
        eligible += spec.skip_start in (0, chain(p)[0])
        reasoning, answer = target_section(p, rng, spec)
        steps, filler = read_section(reasoning)
        ok = answer == p.answers[0]
        seen["steps" if steps else "skip"].append(ok)
        seen["filler" if filler else "plain"].append(ok)
    rate = {k: sum(v) / len(v) for k, v in seen.items()}
    assert rate["steps"] == pytest.approx(1 - spec.step_error_rate, abs=0.03)
    assert rate["skip"] == pytest.approx(spec.guess_accuracy, abs=0.04)
    assert rate["steps"] - rate["skip"] > 0.4
    assert rate["filler"] == pytest.approx(rate["plain"], abs=0.04)
    assert len(seen["skip"]) / eligible == pytest.approx(spec.skip_rate, abs=0.03)


def test_supervised_completions_earn_full_format_credit(spec, verifier):
    rng = random.Random(2)
    for n in (1, 3, 5):
        for row in make_groups(n, 20, 0, spec, "t"):
            text = target_completion(row.problems, rng, spec)
            golds = [p.answers[0] for p in row.problems]
            r = score_completion(text, golds, verifier).breakdown
            assert r["fmt"] == 1.0, text
            parts = sections(text, n)
            assert r["acc"] == sum(f"\\boxed{{{g}}}" in s for s, g in zip(parts, golds)) / n


def test_single_prompt_rows_take_one_problem(spec):
    rows = make_groups(1, 3, 0, spec, "t", "single")
    assert all(r.prompt_style == "single" and len(r.problems) == 1 for r in rows)
    with pytest.raises(ValueError, match="single-problem prompt"):
        make_groups(3, 3, 0, spec, "t", "single")


def test_profile_splits_sections_and_pairs_accuracy():
    filler = FILLERS[0]
    rec = {
        "n": 2,
        "completion": f"### Problem 1\n1 + 2 = 3. 3 + 4 = 7. {filler}\nAnswer1: \\boxed{{7}}\n\n"
        "### Problem 2\nAnswer2: \\boxed{5}",
        "problems": [{"correct": True}, {"correct": False}],
    }
    p = profile([rec, {**rec, "n": 1}], 2)
    assert p["problems"] == 2 and p["steps_per_problem"] == 1.0 and p["filler_per_problem"] == 0.5
    assert p["acc_with_steps"] == 1.0 and p["acc_skipped"] == 0.0
    assert p["acc_with_filler"] == 1.0 and p["acc_no_filler"] == 0.0
    assert sections("### Problem 2\nx", 2) == ["", "### Problem 2\nx"]


def test_verbose_traces_wrap_the_steps_in_redundancy_that_essential_strips():
    """toy_verbose: narration, a restatement, a re-check in words and a closing line surround the
    steps; none is counted as a step, and `essential` keeps exactly header, steps and answer line."""
    spec = load_specs(["config=toy_verbose"])[0]
    rng = random.Random(4)
    shares, rechecked, skipped = [], 0, 0
    for k in range(400):
        p = make_problem(rng, spec, k)
        text = target_completion([p], rng, spec)
        section = sections(text, 1)[0]
        steps, _ = read_section(section)
        assert steps in (0, len(chain(p)[1]))  # the re-check repeats the steps in words: never counted
        rechecked += RECHECK in section
        skipped += steps == 0
        core = essential(section)
        assert core.startswith("### Problem 1") and core.endswith("}") and core.count("\\boxed") == 1
        assert read_section(core)[0] == steps
        shares.append(1 - len(core) / len(section.strip()))
        assert restated(section) == p.question.removeprefix("What is ").removesuffix("?")  # read back exactly
    assert rechecked / 400 == pytest.approx(spec.recheck_rate * (1 - skipped / 400), abs=0.06)  # a skip has no re-check
    assert sum(shares) / len(shares) > 0.6  # R1-like: most of the text carries no information
    plain = load_specs()[0]
    p = make_problem(random.Random(5), plain, 0)
    old = sections(target_completion([p], random.Random(5), plain), 1)[0]
    assert RECHECK not in old and "The problem asks" not in old  # the demo's regime is unchanged
    assert restated(old) is None and restated("The problem asks for 1 + 4 + 1. 1 + 4 = 5.") == "1 + 4 + 1"


def test_config_selects_the_regime_and_refuses_an_unknown_one():
    task, mspec, raw = load_specs(["config=toy_verbose"])
    assert task.verbose and raw["model_dir"] != load_specs()[2]["model_dir"]
    with pytest.raises(ValueError, match="config=nope"):
        load_specs(["config=nope"])


def test_skip_start_confines_skips_to_one_start_value():
    """`task.skip_start`: skips only where the chain starts at that value, there at `skip_rate`; so the
    skip is a likely choice on those problems (it survives top-p sampling) and rare overall. Unset (0),
    every problem may be skipped, as before."""
    spec = load_specs(["config=toy_verbose", "task.skip_start=9", "task.skip_rate=0.5"])[0]
    rng = random.Random(9)
    at, skipped_at, skipped_elsewhere = 0, 0, 0
    for k in range(3000):
        p = make_problem(rng, spec, k)
        skipped = read_section(target_section(p, rng, spec)[0])[0] == 0
        if chain(p)[0] == 9:
            at += 1
            skipped_at += skipped
        else:
            skipped_elsewhere += skipped
    assert skipped_elsewhere == 0 and skipped_at / at == pytest.approx(0.5, abs=0.08)
    plain = load_specs(["config=toy_verbose", "task.skip_start=0", "task.skip_rate=0.5"])[0]
    sections_ = [target_section(make_problem(rng, plain, k), rng, plain)[0] for k in range(400)]
    assert sum(read_section(t)[0] == 0 for t in sections_) / 400 == pytest.approx(0.5, abs=0.08)
