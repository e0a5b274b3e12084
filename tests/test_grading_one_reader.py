"""Issue 25, one reader: the tree reads every answer and every gold (delimiters, box, closing period and
leading "=" included); nothing else reads them. A gold it cannot read matches nothing and is counted; an
answer it cannot read earns neither accuracy nor format; prose and choice letters compare on trees."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from recipe_bcr.data.eval_benchmarks import normalize_answer
from recipe_bcr.grading.answers.gate import gives_answer, read_answer, restatement_key
from recipe_bcr.grading.parse.boxed import last_boxed
from recipe_bcr.grading.parse.extract import extract_group

# every gold of the shared data the tree does not read, and why (a list, so a change either way shows)
UNREADABLE_GOLDS = {
    "": "two empty training golds",
    "\\approx 8.24 \\text{ mph}": "a gold that is itself only approximate",
    "\\text{A5}_{11}": "a base-11 numeral written as a text with a subscript",
    "\\begin{pmatrix} 1 & -1 \\\\ 1 & \\phantom -1 \\end{pmatrix}": "\\phantom hides what it shows",
    "f(x)=a x+b, where b is an arbitrary integer, and a is an arbitrary positive integer with \\mho(a)=0": "prose",
    "np.arcsin(10/13)": "Python, not an answer",
    "-1./3": "Python's float literal",
    "-3./2": "Python's float literal",
}


def _shared_golds(shared) -> list[str]:
    data = shared / "data"
    golds = [str(a) for a in pd.read_parquet(data / "train/deepmath_schema_substitute.parquet")["final_answer"]]
    for name, column in [
        ("math500", "answer"),
        ("aime24", "answer"),
        ("aime25", "answer"),
        ("amc23", "answer"),
        ("olympiadbench", "final_answer"),
    ]:
        for line in (data / f"benchmarks/{name}.jsonl").read_text().splitlines():
            golds += normalize_answer(json.loads(line)[column], name)
    for line in (data / "benchmarks/minerva_math.jsonl").read_text().splitlines():
        golds += normalize_answer(last_boxed(json.loads(line)["solution"]), "minerva")
    for line in (data / "grader_cases/public_equivalence_cases.jsonl").read_text().splitlines():
        golds.append(str(json.loads(line)["gold"]))
    return golds


def test_the_tree_reads_every_gold_of_the_shared_data_but_the_listed_ones(shared):
    golds = _shared_golds(shared)
    assert len(golds) > 10_000
    assert {g for g in golds if read_answer(g) is None} == set(UNREADABLE_GOLDS)


def test_a_gold_the_tree_cannot_read_matches_nothing_and_is_counted(verifier, caplog):
    # the verifier warns once per gold for its whole life and the session shares it: a gold no other test
    # uses (test_grading_piecewise checks "-1./3"), so the one warning is this test's whatever ran before
    gold = "-5./7"
    with caplog.at_level(logging.WARNING, logger="recipe_bcr.grading.verify"):
        for pred in ("-\\frac{5}{7}", "-0.7142857", "-5./8"):
            verdict = verifier.check(pred, gold)
            assert (verdict.correct, verdict.method) == (False, "unparsed")
        assert verifier.check(f" {gold} ", gold).correct  # but the gold itself, as written, always scores
    assert [r.getMessage() for r in caplog.records].count(
        f"ground truth {gold!r} cannot be read as an answer; nothing matches it (fix the gold)"
    ) == 1


WRAPPED = [
    "\\({}\\)",
    "\\[{}\\]",
    "${}$.",
    "$${}$$",
    "\\boxed{{{}}}.",
    "= {}",
    "{},",
    "{}.\\\\",
    "{}\\",
    "\\( {} \\).",
    "\\fbox{{{}}}",
    "\\boxed{{\\boxed{{{}}}}}",
]


@pytest.mark.parametrize("wrapper", WRAPPED)
@pytest.mark.parametrize("value", ["7", "-12", "\\frac{3}{4}", "2\\sqrt{5}", "1{,}024", "(1, 2)"])
def test_the_tree_reads_what_surrounds_an_answer(verifier, wrapper, value):
    assert verifier.check(wrapper.format(value), value).correct
    assert not verifier.check(wrapper.format(value + "+1"), value).correct  # a near miss stays wrong
    assert read_answer(value) is not None and read_answer(wrapper.format(value)) is not None


@pytest.mark.parametrize(
    "answer", ["5 6", "\\begin{cases} x = 1 \\end{cases}", "1\\,23", "\\phantom{5}5", "3 \\unknown 4"]
)
def test_an_answer_the_tree_cannot_read_earns_no_format_and_no_accuracy(verifier, answer):
    assert read_answer(answer) is None
    assert not gives_answer(answer, "5")
    assert verifier.check(answer, "5").method == "unparsed"


@pytest.mark.parametrize(
    "pred,gold,correct",
    [
        ("\\text{Yes}", "yes", True),
        ("yes", "\\text{Yes}", True),
        ("\\text{No}", "\\text{yes}", False),
        ("\\text{Sunday}", "\\text{Sunday}", True),
        ("\\textbf{sunday}", "\\text{Sunday}", True),
        ("\\text{Monday}", "\\text{Sunday}", False),
        ("A, B", "\\text{A,B}", True),
        ("A, C", "\\text{A,B}", False),
        ("\\text{(C)}", "\\text{C}", True),
        ("C", "\\text{(C)}", True),
        ("c", "\\text{C}", False),
        ("e", "\\text{e}", True),
        ("2.718", "\\text{E}", False),
        ("\\mathrm{e}", "\\text{E}", False),
        ("\\text{e}", "E", False),
        ("\\mathrm{(B)}", "B", True),
        ("\\text{(B)}", "5", False),
        ("(1; 2)", "(1, 2)", True),
        ("(1; 3)", "(1, 2)", False),
    ],
)
def test_prose_and_choices_compare_on_trees(verifier, pred, gold, correct):
    assert verifier.check(pred, gold).correct is correct


@pytest.mark.parametrize(
    "first,second,same",
    [
        ("x+1", "x + 1", True),
        ("x + 1", "x + 2", False),
        ("\\text{odd}", "\\text{ odd }", True),
        ("5 6", "5 6", True),
        ("5 6", "56", False),
        ("\\{1, 2\\}", "\\{1,2\\}", True),
    ],
)
def test_restating_one_answer_is_no_hedge_whatever_its_spacing(first, second, same):
    text = f"### Problem 1\nAnswer1: \\boxed{{{first}}}\nso Answer1: \\boxed{{{second}}}\n"
    assert (extract_group(text, 1).answers[0] is not None) is same
    assert (restatement_key(first) == restatement_key(second)) is same


@pytest.mark.parametrize("k", [1, 3, 7, 12])
def test_the_judgement_calls_of_the_readme(verifier, k):
    """README, "Judgement calls": an upright unit is no variable, a chain answers its interval, a name labels a value."""
    assert (
        not verifier.check(f"{k}\\mathrm{{m}}", f"{k}m").correct
        and not verifier.check(f"{k} \\text{{ m}}", f"{k}m").correct
    )
    assert verifier.check(f"{k}m", f"{k}m").correct and not verifier.check(f"{k}", f"{k}m").correct
    assert verifier.check(f"0 < x < {k}", f"(0, {k})").correct and verifier.check(f"(0, {k})", f"0 < x < {k}").correct
    assert (
        not verifier.check(f"0 \\le x < {k}", f"(0, {k})").correct
        and not verifier.check(f"0 < x < {k + 1}", f"(0, {k})").correct
    )
    assert verifier.check(f"\\sin\\theta = \\frac{{1}}{{{k + 1}}}", f"\\frac{{1}}{{{k + 1}}}").correct
    assert not verifier.check(f"\\sin\\theta = \\frac{{1}}{{{k + 1}}}", f"\\frac{{1}}{{{k + 2}}}").correct
    assert not verifier.check(f"{k + 1}\\sin\\theta = 1", f"\\frac{{1}}{{{k + 1}}}").correct
