"""The competing toy regime (hydra_configs/toy_compete.yaml, issue 35): problems of varied length, steps that slip
more on long chains, a re-check that repairs beside filler that changes nothing, a skip route on every problem,
optional narration and restatement, and supervised groups of N = 1..5 in the format the reward credits."""

from __future__ import annotations

import dataclasses
import random
import re
import statistics
from collections import defaultdict

import pytest

from recipe_bcr.grading.reward import score_completion
from recipe_bcr.grading.verify import default_verifier
from recipe_bcr.miniature.toy.model import load_specs
from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import (
    _STEP,
    CHECK,
    FILLERS,
    REMAINDER,
    benchmark_problems,
    categories,
    category_texts,
    chain,
    compete_section,
    gap_value,
    heldout,
    make_groups,
    make_problem,
    read_section,
    target_completion,
    target_section,
    written_steps,
)


@pytest.fixture(scope="module")
def spec():
    return load_specs(["config=toy_compete"])[0]


@pytest.fixture(scope="module")
def supervised(spec):
    """6,000 supervised sections: (problem, section text, answer, categories)."""
    rng = random.Random(35)
    out = []
    for k in range(6000):
        p = make_problem(rng, spec, k)
        text, answer = target_section(p, rng, spec)
        out.append((p, text, answer, categories(text)))
    return out


def test_problem_length_varies(spec, supervised):
    ops = [len(chain(p)[1]) for p, *_ in supervised]
    assert set(ops) == set(range(spec.min_ops, spec.max_ops + 1))
    lengths = [len(t) for _, t, _, c in supervised]
    assert statistics.pstdev(lengths) / statistics.fmean(lengths) >= 0.3


def test_recheck_repairs_long_chains_and_filler_changes_nothing(spec, supervised):
    acc = defaultdict(list)
    for p, _, answer, c in supervised:
        if not c["steps"]:
            continue
        ok = answer == p.answers[0]
        if len(chain(p)[1]) >= 5:
            acc["check" if c["recheck"] else "plain"].append(ok)
        if not c["recheck"]:
            acc["filler" if c["filler"] else "no_filler"].append(ok)
    rate = {k: statistics.fmean(v) for k, v in acc.items()}
    assert rate["check"] - rate["plain"] >= 0.15, rate
    assert abs(rate["filler"] - rate["no_filler"]) <= 0.05, rate


def test_a_recheck_recomputes_from_the_question_so_it_repairs_a_slip(spec):
    p = next(q for q in (make_problem(random.Random(k), spec, 0) for k in range(100)) if len(chain(q)[1]) >= 4)
    slipped, wrong = written_steps(p, random.Random(0), spec, slip_rate=1.0)
    checked, right = written_steps(p, random.Random(0), spec, slip_rate=0.0, check=True)
    assert wrong != int(p.answers[0]) and right == int(p.answers[0])
    assert read_section(slipped)[0] == len(chain(p)[1]) and read_section(checked)[0] == 0  # "is": not a step


def test_skipping_is_reachable_on_every_kind_of_problem(spec, supervised):
    by_ops = defaultdict(list)
    for p, _, _, c in supervised:
        by_ops[len(chain(p)[1])].append(not c["steps"])
    share = {k: statistics.fmean(v) for k, v in by_ops.items()}
    assert all(0.03 <= v <= 0.15 for v in share.values()), share


def test_concise_modes_are_present_but_rare(supervised):
    concise = statistics.fmean(c["steps"] and not c["narration"] and not c["restatement"] for *_, c in supervised)
    narrated = statistics.fmean(c["narration"] for *_, c in supervised)
    assert 0.005 <= concise <= 0.05 and 0.75 <= narrated <= 0.95


def test_sections_keep_their_order(supervised):
    """narration, restatement, steps, filler, re-check, closing: the re-check comes after the filler."""
    for _, text, _, c in supervised[:500]:
        if c["recheck"] and c["filler"]:
            assert text.index(CHECK) > max(text.find(f) for f in ("Wait", "Hmm", "Let me read") if f in text)
        assert text.rstrip().endswith(".") and "So the final answer is" in text


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_the_warm_start_covers_n_1_to_5_in_the_credited_format(n):
    spec, mspec, _ = load_specs(["config=toy_compete"])
    assert n in mspec.n_values
    rng = random.Random(n)
    verifier = default_verifier()
    for row in make_groups(n, 30, 0, spec, "test"):
        text = target_completion(row.problems, rng, spec)
        assert len([s for s in sections(text, n) if s]) == n
        parts = score_completion(text, [p.answers[0] for p in row.problems], verifier)
        assert parts.breakdown["fmt"] == 1.0


def test_remainders_put_each_operation_on_the_line_before_its_step(spec):
    """With remainders (what lets a 3-layer model copy a long chain), every step but the first copies its operation
    from the "Now ..." line just before it, which restates the rest of the chain from the running value (a slip
    carried on); the lines are neither steps nor re-checks, and without remainders none is written."""
    assert spec.remainders
    rng = random.Random(3)
    seen = 0
    for k in range(300):
        p = make_problem(rng, spec, k)
        start, ops = chain(p)
        text, answer = written_steps(p, rng, spec, slip_rate=0.3)
        steps = re.findall(r"(-?\d+) ([+-]) (\d+) = (-?\d+)\.", text)
        rests = re.findall(rf"{REMAINDER} (-?\d+)((?: [+-] \d+)+)\.", text)
        assert len(steps) == len(ops) and len(rests) == len(ops) - 1
        for j, (value, rest) in enumerate(rests):
            assert value == steps[j][3] and rest == "".join(f" {o} {d}" for o, d in ops[j + 1 :])
            assert steps[j + 1][:3] == (value, *rest.split()[:2])
        assert int(steps[-1][3]) == answer and read_section(text)[0] == len(ops)
        assert not categories(text)["recheck"]
        seen += any(int(s[3]) != (int(s[0]) + int(s[2]) if s[1] == "+" else int(s[0]) - int(s[2])) for s in steps)
    assert seen  # slips happened and were carried on
    plain = load_specs(["config=toy_compete", "task.remainders=false"])[0]
    assert REMAINDER not in written_steps(make_problem(random.Random(0), plain, 0), random.Random(0), plain, 0.0)[0]


def test_a_rechecks_text_runs_from_check_to_its_last_step_with_its_remainder_lines(spec, supervised):
    """F3 counts re-check tokens from category_texts: the whole re-check (its remainder lines too), nothing of the
    steps, filler or closing line."""
    checked = 0
    for p, text, _, c in supervised[:400]:
        pieces = category_texts(text)
        if not c["recheck"]:
            assert pieces["recheck"] == []
            continue
        (span,) = pieces["recheck"]
        assert span.startswith(CHECK) and (REMAINDER in span) == (len(chain(p)[1]) > 1)
        assert not _STEP.search(span) and not any(f in span for f in FILLERS)
        assert text[text.index(span) + len(span) :].strip().startswith("So the final answer is")
        checked += 1
    assert checked >= 200


def test_knowledge_gaps_are_written_one_off_and_never_slip_onto_the_truth():
    """toy_gaps' errors GRPO cannot sample away: a gap fact is written wrong in every step and re-check, and its slips
    avoid the true value; other facts are as before."""
    spec = load_specs(["config=toy_gaps"])[0]
    rng = random.Random(0)
    written = {}
    for k in range(3000):
        p = make_problem(rng, spec, k)
        text, _ = written_steps(p, rng, spec, slip_rate=0.5, check=bool(k % 2))
        for a, op, d, r in re.findall(r"(\d+) ([+-]) (\d+) (?:=|is) (-?\d+)\.", text):
            written.setdefault(f"{a} {op} {d}", set()).add(int(r))
    for fact in spec.knowledge_gaps:
        a, op, d = fact.split()
        truth = int(a) + int(d) if op == "+" else int(a) - int(d)
        assert truth not in written[fact] and gap_value(fact, spec) in written[fact], (fact, written[fact])
    assert 8 in written["5 + 3"]  # not a gap: its truth is written


def test_an_inert_recheck_restates_the_steps_result_and_the_answer_does_not_follow_it():
    spec = load_specs(["config=toy_gaps"])[0]
    rng = random.Random(1)
    seen = 0
    for k in range(2000):
        p = make_problem(rng, spec, k)
        text, answer = compete_section(p, rng, spec)
        pieces = category_texts(text)["inert_recheck"]
        if not pieces:
            continue
        seen += 1
        steps_result = re.findall(r"= (-?\d+)\.", text)[-1]
        assert pieces == [f"Reading it again: {p.question[8:-1]} gives {steps_result}."]
        if CHECK not in text:
            assert answer == steps_result
    assert 0.6 < seen / 2000 < 0.8  # 80% of the ~92% written-out sections


def test_the_evaluation_is_disjoint_from_every_training_and_warm_start_group():
    spec = load_specs(["config=toy_gaps"])[0]
    evaluation = [p.question for p in benchmark_problems(1000, 0, spec)]
    assert len(set(evaluation)) == 1000 and all(heldout(q, spec) for q in evaluation)
    trained = {p.question for n in (1, 3, 5) for g in make_groups(n, 400, 0, spec, "train") for p in g.problems}
    assert not trained & set(evaluation) and not any(heldout(q, spec) for q in trained)
    plain = load_specs(["config=toy_compete"])[0]  # no held-out share: the earlier toys' draws, repeats and all
    rng = random.Random("0:benchmark")
    assert benchmark_problems(50, 0, plain) == [make_problem(rng, plain, k) for k in range(50)]


def test_too_many_heldout_questions_is_refused():
    spec = load_specs(["config=toy_gaps", "task.max_ops=1", "task.heldout_share=0.1"])[0]
    with pytest.raises(ValueError, match="distinct after .* draws, 200 wanted"):
        benchmark_problems(200, 0, spec)


@pytest.mark.parametrize("gap", ["9 + 4", "3 * 2", "3+2"])
def test_a_knowledge_gap_outside_the_table_is_refused(gap):
    with pytest.raises(ValueError, match="not a fact of the table"):
        load_specs(["config=toy_gaps", f"task.knowledge_gaps=[{gap!r}]"])


def test_a_toy_config_amends_the_toys_its_defaults_name(tmp_path, monkeypatch):
    """toy_gaps_fill is toy_gaps with more filler and its own model folders (Hydra's `defaults` spelling); overrides
    still come last; a config naming itself or a missing toy is refused with the file."""
    from importlib import resources

    from recipe_bcr.miniature.toy.model import cache_key

    base, fill = load_specs(["config=toy_gaps"]), load_specs(["config=toy_gaps_fill"])
    assert fill[0] == dataclasses.replace(base[0], max_filler=28) and fill[1] == base[1]
    assert (fill[2]["model_dir"], fill[2]["shipped"]) != (base[2]["model_dir"], base[2]["shipped"])
    assert cache_key(*fill[:2]) != cache_key(*base[:2])
    assert load_specs(["config=toy_gaps_fill", "task.max_filler=3"])[0].max_filler == 3
    deep = load_specs(["config=toy_gaps_fill_deep"])  # two levels of defaults: toy_gaps_fill's task, one more layer
    assert deep[0] == fill[0] and deep[1] == dataclasses.replace(fill[1], layers=4)
    assert load_specs(["config=toy_gaps_fill20"])[0] == dataclasses.replace(base[0], max_filler=20)
    folders = {s[2]["model_dir"] for s in (base, fill, deep)} | {s[2]["shipped"] for s in (base, fill, deep)}
    assert len(folders) == 6  # no two toys share a cache or a committed folder
    folder = tmp_path / "hydra_configs"
    folder.mkdir()
    (folder / "toy_loop.yaml").write_text("defaults: [toy_loop, _self_]\n")
    (folder / "toy_orphan.yaml").write_text("defaults: [toy_nowhere]\n")
    (folder / "toy_flat.yaml").write_text("defaults: toy_gaps\n")
    monkeypatch.setattr(resources, "files", lambda package: folder)
    with pytest.raises(ValueError, match=r"toy_loop.yaml refers to itself"):
        load_specs(["config=toy_loop"])
    with pytest.raises(ValueError, match=r"toy_nowhere.yaml does not exist"):
        load_specs(["config=toy_orphan"])
    with pytest.raises(ValueError, match=r"toy_flat.yaml defaults: want a list"):
        load_specs(["config=toy_flat"])
