"""Issue 53, class 3: regions of the real line. One set of reals written in any of its notations is one answer: ISO
brackets, infinity in words or as a sign, blackboard letters, a half-line as a subscript, a difference of sets, an
inequality of an absolute value, set-builder notation over the integers, `x \\in` a union, "or" between inequalities.
A different set is never the answer, and an answer identical to its gold always scores."""

from __future__ import annotations

import pytest

SAME = [
    # ISO 80000-2 brackets: a bracket turned outward leaves its endpoint out
    ("[2, \\infty)", "[2, \\infty["),
    ("[2, \\infty)", "[2, +\\infty["),
    ("(2, 5)", "]2, 5["),
    ("(2, 5]", "]2, 5]"),
    ("[2, 5)", "[2, 5["),
    ("(-\\infty, 3]", "]-\\infty, 3]"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "]-\\infty, 1[ \\cup ]2, +\\infty["),
    # infinity in words, the signs alone
    ("[2, \\infty)", "[2, \\text{infinity})"),
    ("(-\\infty, 3)", "(-\\text{infinity}, 3)"),
    ("[0, \\infty)", "[0, infinity)"),
    ("[2, \\infty)", "[2, \\text{+infinity})"),
    ("(-\\infty, 2]", "(\\text{-inf}, 2]"),
    ("\\emptyset", "\\O"),
    ("\\emptyset", "Ø"),
    ("(-\\infty, \\infty)", "x \\in \\mathbb{R}"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "(-∞,1)∪(2,∞)"),
    ("\\infty", "∞"),
    ("-\\infty", "-∞"),
    ("+∞", "\\infty"),
    ("\\emptyset", "∅"),
    ("∅", "\\varnothing"),
    ("∅", "\\{\\}"),
    # the reals and their halves
    ("ℝ", "(-\\infty, \\infty)"),
    ("\\mathbb{R}", "ℝ"),
    ("\\mathbb{R}_{\\ge 0}", "[0, \\infty)"),
    ("\\mathbb{R}_{\\geq 0}", "x \\ge 0"),
    ("\\mathbb{R}_{>0}", "(0, \\infty)"),
    ("(-\\infty, 2]", "\\mathbb{R}_{\\le 2}"),
    # a set difference of intervals
    ("\\mathbb{R} \\setminus [1, 2]", "(-\\infty, 1) \\cup (2, \\infty)"),
    ("\\mathbb{R} \\setminus (1, 2)", "(-\\infty, 1] \\cup [2, \\infty)"),
    ("(-\\infty, 1) \\cup (1, \\infty)", "\\mathbb{R} \\setminus \\{1\\}"),
    ("[0, 1) \\cup (1, 5]", "[0, 5] \\setminus \\{1\\}"),
    ("(-\\infty, 1) \\cup (1, \\infty)", "\\mathbb{R} - \\{1\\}"),
    ("(-\\infty, 1) \\cup (1, \\infty)", "\\mathbb{R} \\backslash \\{1\\}"),
    ("(-\\infty, 0) \\cup (3, \\infty)", "\\mathbb{R} - [0, 3]"),
    # inequalities of an absolute value
    ("(1, 5)", "|x - 3| < 2"),
    ("|x-3|<2", "(1, 5)"),
    ("[1, 5]", "|x - 3| \\le 2"),
    ("|x| > 2", "x < -2 \\text{ or } x > 2"),
    ("(-\\infty, -2] \\cup [2, \\infty)", "|x| \\ge 2"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "|2x - 3| > 1"),
    ("(0, 2)", "2 > |2x - 2|"),
    ("\\left(-\\frac{1}{2}, \\frac{3}{2}\\right)", "|2x - 1| < 2"),
    # set-builder over the integers
    ("\\{x \\in \\mathbb{Z} : 1 \\le x \\le 4\\}", "\\{1, 2, 3, 4\\}"),
    ("\\{1, 2, 3, 4\\}", "\\{x \\in \\mathbb{Z} \\mid 1 \\le x \\le 4\\}"),
    ("\\{x \\in \\mathbb{Z} : 1 < x < 4\\}", "\\{2, 3\\}"),
    ("\\{n \\in \\mathbb{Z} : |n| \\le 1\\}", "\\{-1, 0, 1\\}"),
    ("\\{x \\in \\mathbb{N} : 2 \\le x < 5\\}", "\\{2, 3, 4\\}"),
    # x in a union, and a union against "or"
    ("(-\\infty, 1) \\cup (2, \\infty)", "x \\in (-\\infty, 1) \\cup (2, \\infty)"),
    ("[0, 1] \\cup [3, 4]", "x \\in [0, 1] \\cup [3, 4]"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "x < 1 \\text{ or } x > 2"),
    ("x \\le 0 \\text{ or } x \\ge 3", "(-\\infty, 0] \\cup [3, \\infty)"),
]

DIFFERENT = [
    ("(2, 5)", "]2, 5]"),
    ("[2, 5]", "]2, 5["),
    ("[2, \\infty)", "]2, \\infty["),
    ("\\infty", "-\\infty"),
    ("\\infty", "-∞"),
    ("\\emptyset", "0"),
    ("∅", "\\{0\\}"),
    ("\\mathbb{R}", "[0, \\infty)"),
    ("\\mathbb{R}_{\\ge 0}", "(0, \\infty)"),
    ("\\mathbb{R}_{>0}", "[0, \\infty)"),
    ("\\mathbb{R} \\setminus (1, 2)", "(-\\infty, 1) \\cup (2, \\infty)"),
    ("\\mathbb{R} \\setminus [1, 2]", "(-\\infty, 1] \\cup [2, \\infty)"),
    ("|x - 3| < 2", "(1, 6)"),
    ("(1, 5)", "|x - 3| \\le 2"),
    ("|x| > 2", "x < -2 \\text{ or } x \\ge 2"),
    ("\\{x \\in \\mathbb{Z} : 1 \\le x \\le 4\\}", "\\{1, 2, 3\\}"),
    ("\\{x \\in \\mathbb{Z} : 1 \\le x \\le 4\\}", "[1, 4]"),
    ("\\{x \\in \\mathbb{N} : x < 3\\}", "\\{1, 2\\}"),  # whether N holds 0 is a convention: no credit either way
    ("(-\\infty, 1) \\cup (2, \\infty)", "x \\in (-\\infty, 1] \\cup (2, \\infty)"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "x < 1 \\text{ or } x \\ge 2"),
    ("[2, \\infty)", "[2, \\infty[ \\text{ or } [3, \\infty["),  # a hedge stays a hedge
    ("(1, 5)", "(1, 5) \\text{ or } (1, 6)"),
    ("(-\\infty, 1) \\cup (1, \\infty)", "\\mathbb{R} - \\{2\\}"),
    ("(-2, -2)", "(1, 2) - (3, 4)"),  # a minus between pairs is a subtraction of vectors, not of sets
    ("(-\\infty, \\infty)", "x \\in [0, \\infty)"),
]

IDENTICAL = ["+\\infty", "+∞", "-∞", "∞", "∅", "ℝ", "[2, ∞[", "]2, 5[", "\\mathbb{R}_{\\ge 0}", "|x| > 2"]


@pytest.mark.parametrize("gold,pred", SAME)
def test_one_region_in_two_notations_is_one_answer(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold,pred", DIFFERENT)
def test_a_different_region_or_a_hedge_never_scores(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold", IDENTICAL)
def test_an_answer_identical_to_its_gold_scores(verifier, gold):
    assert verifier.check(gold, gold).correct
    assert verifier.check(gold, gold).method == "string"


@pytest.mark.parametrize("text", ["[2, ∞[", "]2, 5[", "∅", "ℝ", "\\mathbb{R}_{\\ge 0}", "0.\\dot{1}\\dot{2}"])
def test_the_tree_reads_the_notation(text):
    """Read, not only matched as the same string: the tree accounts for every character."""
    from recipe_bcr.grading.answers.gate import read_answer

    assert read_answer(text) is not None


@pytest.mark.parametrize("answer", ["∞", "+∞", "-∞", "∅", "\\infty", "\\emptyset"])
def test_a_symbol_alone_in_a_box_is_an_answer_and_scores_against_its_own_gold(answer):
    """`∞` or `∅` alone in a box is not an empty box: an answer identical to its gold always scores, through the
    extraction (whose emptiness test sees math characters as it sees their commands) and the comparison."""
    from reward_fns.bcr import compute_score

    completion = f"### Problem 1\nwork\nAnswer 1: \\boxed{{{answer}}}"
    assert compute_score("x", completion, [answer])["acc"] == 1.0
    assert compute_score("x", completion, ["5"])["acc"] == 0.0
