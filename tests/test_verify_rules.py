"""The verification rules of issue 10, each with cases of our own and the honest forms that must keep scoring.

Every wrong case below is one a policy can write to be paid for a wrong or hedged answer; every
right case is the honest spelling next to it, which must not be caught by the same rule.
"""

from __future__ import annotations

import time

import pytest

# -- hedges: two candidates joined by a connective or a relation are neither ------------------------
HEDGES = [
    ("5", "3 \\lor 5"),
    ("5", "3 \\vee 5"),
    ("3", "3 \\land 5"),
    ("5", "3 \\wedge 5"),
    ("5", "3 \\oplus 5"),
    ("5", "3 \\Rightarrow 5"),
    ("5", "x = 3 \\implies x = 5"),
    ("5", "3 \\to 5"),
    ("5", "3 \\iff 5"),
    ("5", "3 \\mid 5"),
    ("5", "3 \\approx 5"),
    ("3", "3 \\approx 5"),
    ("5", "3 \\\\ 5"),
    ("5", "\\substack{3 \\\\ 5}"),
    ("5", "\\begin{cases} 3 \\\\ 5 \\end{cases}"),
    ("5", "\\neq 5"),
    ("5", "\\ne 5"),
    ("5", "\\ge 5"),
    ("5", "\\geq 5"),
    ("5", "> 5"),
    ("5", "x \\leq 5"),
    ("5", "\\approx 5"),
    ("5", "\\sim 5"),
    ("5", "3 \\cup 5"),
    ("5", "\\pm 5"),
    ("5", "3 \\text{ or } 5"),
    ("5", "3$ or $5"),
    ("5", "\\boxed{3} \\boxed{5}"),
    ("\\frac{1}{2}", "\\frac{1}{3} \\lor \\frac{1}{2}"),
    ("3", "(3 \\approx 5)"),
    ("5", "\\{3 \\lor 5\\}"),
    ("5", "x=5 \\text{ or } x=3"),
    ("5", "\\overset{3}{5}"),
    ("5", "3 | 5"),
    ("5", "5 \\pm 0"),
]

HEDGE_MIRRORS = [  # the same connectives where the gold answer itself uses them
    ("x \\ge 5", "x \\geq 5"),
    ("x \\neq 3", "x \\ne 3"),
    ("x != 3", "x \\neq 3"),
    ("\\pm 2", "\\pm 2"),
    ("(-\\infty, 1) \\cup (2, \\infty)", "(-\\infty,1)\\cup(2,\\infty)"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{\\sqrt{3}}{3} \\approx 0.577"),
    ("\\sqrt{2}", "\\sqrt{2} \\approx 1.41421"),
    ("3, 5", "3 \\text{ or } 5"),
    ("\\{1,2\\}", "x = 1 \\text{ or } x = 2"),
    ("\\frac{1}{4}", "\\mathbb{P}(X > 2) = \\frac14"),  # a relation inside the label is no hedge
    ("5", "\\max(3, 5)"),
    ("5", "= 5"),
    ("\\infty", "∞"),
    ("2\\pi", "2π"),
    ("5", "\\color{red}{5}"),
]


@pytest.mark.parametrize("gold,pred", HEDGES)
def test_hedges_earn_nothing(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold,pred", HEDGE_MIRRORS)
def test_connectives_the_gold_uses_still_score(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


def test_an_approximation_after_approx_must_be_a_rounding_of_the_answer(verifier):
    assert not verifier.check("\\frac{\\sqrt{3}}{3} \\approx 0.7", "\\frac{\\sqrt{3}}{3}").correct
    assert not verifier.check("\\frac{\\sqrt{3}}{3} \\approx 0.578", "\\frac{\\sqrt{3}}{3}").correct  # 0.57735...
    assert not verifier.check("\\frac{1}{3} \\approx 0.34", "\\frac{1}{3}").correct
    assert verifier.check("\\frac{1}{3} \\approx 0.33", "\\frac{1}{3}").correct
    assert verifier.check("\\frac{\\sqrt{3}}{3} \\approx 0.58", "\\frac{\\sqrt{3}}{3}").correct


# -- wrappers: the value inside is held to the exact-number rules ----------------------------------
WRAPPED_WRONG = [
    ("\\frac{1}{2^{40}}", "P(A) = 0"),
    ("\\frac{1}{2^{40}}", "x = 0.0"),
    ("10^{-9}", "\\{0\\}"),
    ("10^{-9}", "(0)"),
    ("\\frac{1}{2004!}", "p = \\frac{1}{2006!}"),
    ("100!", "f(x) = 99!"),
    ("e^{-100}", "P(E) = e^{-101}"),
    ("0.1^{20}", "x = 0.1^{21}"),
    ("1000001", "x = 1000000.0"),
    ("1000001", "\\{1000000.0\\}"),
    ("\\frac{1}{3000}", "P = 0.000333"),
    ("(1, 10^{-9})", "(1, 0)"),
    ("(1, 10^{-9})", "(x, y) = (1, 0)"),
    ("\\{10^{-9}, 1\\}", "\\{0, 1\\}"),
    ("\\begin{pmatrix} 10^{-9} \\\\ 1 \\end{pmatrix}", "\\begin{pmatrix} 0 \\\\ 1 \\end{pmatrix}"),
    ("1", "x + y = 1"),
    ("6", "2x = 6"),
    ("5", "x = 3 = 5"),
    ("5", "x = 5 = 3"),
    ("x = 1", "x = 1.0000001"),
    ("1500001", "1.5 \\times 10^{6}"),
    ("\\frac{1}{2^{30}}", "P\\left(A\\right)=0"),
    ("10^{-9}", "\\left\\{ 0 \\right\\}"),
]

WRAPPED_RIGHT = [
    ("5", "x = 5"),
    ("\\frac{1}{2^{40}}", "P(A) = \\frac{1}{2^{40}}"),
    ("\\frac{1}{2^{40}}", "P(A) = 2^{-40}"),
    ("3", "f(2) = 3"),
    ("2", "f^{-1}(3) = 2"),
    ("12", "|AB| = 12"),
    ("30", "\\angle A = 30^\\circ"),
    ("5", "\\{5\\}"),
    ("5", "(5)"),
    ("1000001", "n = 1000001"),
    ("1000001", "x = 1000001.0"),
    ("\\frac{1}{3}", "p = 0.3333333"),
    ("6", "x = \\frac{12}{2} = 6"),
    ("(1, 2)", "(x, y) = (1, 2)"),
    ("(1, 10^{-9})", "(1, 0.000000001)"),
    ("2^n", "a_n = 2^n"),
    ("x = 1", "x = 1"),
    ("1", "x = 1"),
    ("1500000", "1.5 \\times 10^{6}"),
    ("1267650600228229401496703205376", "2^{100}"),
    ("10080", "x = 10,\\!080"),  # a thousands separator is no list
    ("11111111100", "n = 11,\\! 111,\\! 111,\\! 100"),
]


@pytest.mark.parametrize("gold,pred", WRAPPED_WRONG)
def test_wrappers_do_not_bypass_the_number_rules(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold,pred", WRAPPED_RIGHT)
def test_honest_wrappers_keep_scoring(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


# -- a decimal point does not make an exact gold approximate ---------------------------------------
@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("1000001", "1000000.0", False),
        ("1000001", "1.000000e6", False),
        ("123456789", "123456788.9999", False),
        ("0.25", "0.2500001", False),
        ("\\frac{3}{8}", "0.3750001", False),
        ("1000001", "1000001.0", True),
        ("123456789", "1.23456789e8", True),
        ("\\frac{3}{8}", "0.375", True),
        ("\\frac{1}{3}", "0.3333333", True),
        ("\\frac{2}{3}", "0.6666667", True),
        ("\\frac{2}{3}", "0.6666666", True),
        ("\\frac{2}{3}", "0.6666665", False),  # neither the rounding nor the cut at its last digit
        ("\\frac{1}{3}", "0.3333334", False),
        ("-\\frac{2}{3}", "-0.6666667", True),
        ("-\\frac{2}{3}", "-0.6666666", True),
        ("\\sqrt{2}", "1.4142136", True),
        ("\\sqrt{2}", "1.4142135", True),
        ("\\sqrt{2}", "1.4142137", False),
    ],
)
def test_a_decimal_stands_for_an_exact_value_only_as_its_rounding(verifier, gold, pred, correct):
    assert verifier.check(pred, gold).correct is correct


# -- text tricks --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pred",
    ["1\u200b2", "\u200b12", "12\u200d", "1\u20602", "1\u03362", "12\u0338", "\ufeff12", "1\u00ad2", "١٢", "１２"],
)
def test_invisible_marks_and_foreign_digits_inside_a_number_earn_nothing(verifier, pred):
    assert not verifier.check(pred, "12").correct


@pytest.mark.parametrize("pred", ["12", " 12 ", "12.", "\\mathbf{12}", "1\\,2", "12\u00a0"])
def test_plain_spellings_of_a_number_still_score(verifier, pred):
    assert verifier.check(pred, "12").correct == (pred != "1\\,2")


# -- correct answers that were refused -----------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred",
    [
        ("\\infty", "+\\infty"),
        ("\\infty", "+ \\infty"),
        ("-\\infty", "-\\infty"),
        ("(0, \\infty)", "(0, +\\infty)"),
        ("1 + 10^{-12}", "1.000000000001"),
        ("10^{-12}", "0.000000000001"),
        ("10^{-12}", "1e-12"),
        ("-1", "e^{i\\pi}"),
        ("-1", "e^{\\pi i}"),
        ("1", "e^{2\\pi i}"),
        ("-1", "i^2"),
        ("e^{i\\pi/3}", "0.5+0.8660254i"),
        ("\\sqrt{2}", "√2"),
    ],
)
def test_correct_answers_are_not_refused(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("\\infty", "-\\infty"),
        ("-\\infty", "+\\infty"),
        ("1 + 10^{-12}", "1.00000000001"),
        ("-1", "e^{i\\pi/2}"),
        ("1", "i"),
        ("e^{i\\pi/3}", "0.5+0.8i"),
    ],
)
def test_their_mirrors_are_still_wrong(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct


# -- nothing a policy writes runs unbounded work in the calling thread ----------------------------
@pytest.mark.timing
@pytest.mark.parametrize(
    "pred",
    [
        "1e100000000",
        "1e-100000000",
        "9.99e999999",
        "x = 1e100000000",
        "\\{1e100000000\\}",
        "1" * 1500 + "e" + "9" * 400,
        "0.\\overline{" + "3" * 1500 + "}",
    ],
)
def test_huge_numbers_are_refused_in_bounded_time(verifier, pred, monkeypatch):
    """Refused by the in-process reading, without computing the number: no symbolic check, and a
    bounded amount of this thread's CPU time (which other load on the machine does not change)."""
    symbolic = []
    monkeypatch.setattr(verifier.pool, "check_timed", lambda *a, **k: symbolic.append(a) or ("false", 0.0))
    cpu = time.thread_time()
    assert not verifier.check(pred, "5").correct
    assert time.thread_time() - cpu < 1.0
    assert symbolic == []
