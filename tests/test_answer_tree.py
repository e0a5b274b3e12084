"""Issue 17: the reward reads the whole answer. Each rule with wrong cases a policy could write and the
honest mirror (the correct answer in the same form), which must keep its credit."""

from __future__ import annotations

import sys

import pytest

from recipe_bcr.grading.answers.gate import gives_answer, read_answer, render, restatement_key
from recipe_bcr.grading.answers.tree import parse


def _right(verifier, gold, pred):
    return verifier.check(pred, gold).correct


# -- one parse: a part the tree cannot account for makes the answer wrong ---------------------------
@pytest.mark.parametrize(
    "gold,pred",
    [
        ("5", "5 6"),  # two numbers side by side are neither 56 nor 30
        ("56", "5 6"),
        ("30", "5 6"),
        ("5", "5 ?"),
        ("5", "\\unknowncommand 5"),
        ("5", "\\phantom{3}5"),
        ("1024", "2^10"),  # TeX reads 2^1 then 0
        ("2^{10}", "2^10"),
        ("\\frac{1}{23}", "\\frac123"),  # \frac{1}{2}3: neither 1/23 nor 3/2
        ("\\frac{3}{2}", "\\frac123"),
        ("5", "\\begin{cases} 5 \\end{cases}"),
        ("5", "5}"),
        ("5", "{5"),
        ("12", "1２"),
    ],
)
def test_what_the_tree_cannot_read_earns_nothing(verifier, gold, pred):
    assert not _right(verifier, gold, pred)


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("\\frac{1}{2}", "\\frac12"),
        ("\\frac{1}{2}", "\\tfrac{1}{2}"),
        ("2\\sqrt{2}", "2\\sqrt2"),
        ("\\sqrt{2}x", "\\sqrt2x"),
        ("2^{10}", "2^{10}"),
        ("1024", "2^{10}"),
        ("10080", "10{,}080"),
        ("1000", "1 000"),
        ("10080", "x = 10,080"),
        ("(12, 102)", "(12,102)"),  # inside brackets a plain comma separates elements
        ("(10080, 1)", "(10{,}080, 1)"),
        ("\\frac{5}{2}", "2\\frac{1}{2}"),  # a mixed number renders as one
        ("\\frac{2\\pi}{3}", "2\\frac{\\pi}{3}"),  # a product, not a mixed number
    ],
)
def test_single_token_arguments_and_honest_spellings_score(verifier, gold, pred):
    assert _right(verifier, gold, pred)


# -- the decimal rule at every node --------------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred",
    [
        ("\\frac{\\pi}{3}", "0.3333333\\pi"),  # inside a product a decimal is only its own value
        ("\\frac{1}{3}", "\\frac{0.6666667}{2}"),
        ("\\frac{1}{3}", "\\sqrt{0.1111111}"),
        ("\\frac{1}{3}", "{{0.3333334}}"),
        ("\\ln 2", "\\ln 2.0000001"),
        ("2^{1/3}", "2^{0.3333333}"),
        ("(\\frac{1}{3}, 1)", "(0.3333334, 1)"),
        ("\\{\\frac{1}{3}, 1\\}", "\\{1, 0.3334\\}"),
        ("\\begin{pmatrix} \\frac{1}{3} \\\\ 1 \\end{pmatrix}", "\\begin{pmatrix} 0.3333334 \\\\ 1 \\end{pmatrix}"),
        ("[\\frac{1}{3}, 1]", "[0.33, 1]"),
        ("1500001", "1.5 \\times 10^{6}"),
        ("\\frac{1}{3}", "3.334 \\times 10^{-1}"),
    ],
)
def test_the_decimal_rule_holds_wherever_the_decimal_sits(verifier, gold, pred):
    assert not _right(verifier, gold, pred)


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("\\frac{\\pi}{2}", "0.5\\pi"),  # an exact decimal inside an operation is its exact value
        ("\\frac{1}{2}", "\\sqrt{0.25}"),
        ("\\frac{1}{3}", "{0.3333333}"),
        ("(\\frac{1}{3}, 1)", "(0.3333333, 1)"),
        ("\\begin{pmatrix} \\frac{1}{3} \\\\ 1 \\end{pmatrix}", "\\begin{pmatrix} 0.3333333 \\\\ 1 \\end{pmatrix}"),
        ("1500000", "1.5 \\times 10^{6}"),
        ("\\frac{1}{3}", "3.333333 \\times 10^{-1}"),
        ("\\ln 2", "0.6931472"),
        ("\\sqrt{2}", "1.4142136"),
    ],
)
def test_decimals_that_stand_for_the_value_score(verifier, gold, pred):
    assert _right(verifier, gold, pred)


# -- exact values are equal only exactly ---------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("12345678901234567890123", "12345678901234567891000", False),  # equal as floats
        ("2^{100}", "1267650600228229401496703205377", False),
        ("2^{100}", "1267650600228229401496703205376", True),
        ("\\frac{1}{2004!}", "\\frac{1}{2006!}", False),
        ("1 + 10^{-40}", "1", False),
        ("\\sqrt{8}", "2\\sqrt{2}", True),
        ("\\pi", "\\frac{355}{113}", False),
        ("(x+3)^2", "x^2+6x+9", True),  # polynomials: an exact expansion, in process
        ("(x+3)^2", "x^2+6x+9.0000001", False),
        ("(a+b)^3", "a^3+3a^2b+3ab^2+b^3", True),
        ("e^{-100}", "0", False),
        ("5", "7^{7^{7^{7}}}", False),  # refuted without computing the tower
        ("10^{10^{10^{9}}}", "10^{10^{10^{10}}}", False),  # one base: equal only with equal exponents
        ("10^{10^{10^{9}}}", "10^{10^{10^{9}}}", True),
    ],
)
def test_exact_values_compare_exactly(verifier, gold, pred, correct):
    assert _right(verifier, gold, pred) is correct


def test_polynomials_are_settled_in_process(verifier):
    assert verifier.fast("x^2+6x+9", "(x+3)^2").correct
    assert not verifier.fast("x^2+6x+10", "(x+3)^2").correct
    assert verifier.fast("f(x+1)", "fx+f") is None or not verifier.fast("f(x+1)", "fx+f").correct


# -- words ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred",
    [
        ("4", "4 \\text{, possibly 5}"),
        ("3", "3 \\text{ billion}"),
        ("3000000000", "3 \\text{ billion}"),
        ("5", "5 \\text{ at least}"),
        ("5", "\\text{not } 5"),
        ("5", "5 \\text{ or more}"),
        ("\\text{Evelyn}", "\\text{Devon}"),
        ("\\text{(C)}", "\\text{(D)}"),
        ("2 \\text{ euros}", "2 \\text{ euros, or 3}"),
        ("2 \\text{ euros}", "3 \\text{ euros}"),
        ("3 \\text{ billion}", "3"),  # a magnitude word the gold carries changes its value
        ("3 \\text{ billion}", "3 \\text{ million}"),
        ("\\weird{5}", "5 \\unknown"),  # an unreadable gold does not open the door to an unreadable answer
    ],
)
def test_words_the_gold_does_not_carry_are_wrong(verifier, gold, pred):
    assert not _right(verifier, gold, pred)


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("5", "5 \\text{ cm}"),
        ("5", "5\\text{ cm}^2"),
        ("125", "125 miles"),
        ("5 \\text{ cm}", "5"),
        ("30", "30^\\circ"),
        ("\\text{Evelyn}", "Evelyn"),
        ("\\text{(C)}", "C"),
        ("\\text{yes}", "\\text{Yes}"),
        ("3, 5", "3 \\text{ and } 5"),
        ("2 \\text{ euros}", "2"),  # words the gold carries may be kept or dropped
        ("2 \\text{ euros}", "2 \\text{ Euros}"),
        ("3 \\text{ billion}", "3 \\text{ billion}"),
        ("2, 3, \\text{ and } 4", "2, 3, 4"),
    ],
)
def test_units_and_prose_golds_still_score(verifier, gold, pred):
    assert _right(verifier, gold, pred)


# -- notation means what it renders as -----------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("10", "1010_2", True),
        ("1010", "1010_2", False),
        ("5", "12_2", False),  # 2 is no binary digit
        ("x^2", "(x^2)'", False),  # a prime after an expression is its derivative
        ("2x", "(x^2)'", None),  # refused or right, never the underived value
        ("2x", "f'(x) = 2x", True),  # a prime on a name is part of the name
        ("15", "5!!", True),
        ("120", "5!!", False),
        ("15", "(5!)!", False),
        ("6", "3!!!", False),  # a triple factorial is neither (3!!)! nor 3!
        ("-2", "\\sqrt[3]{-8}", True),
        ("2", "\\sqrt[3]{-8}", False),
        ("-2", "(-8)^{1/3}", True),
    ],
)
def test_notation_means_what_it_renders_as(verifier, gold, pred, correct):
    got = _right(verifier, gold, pred)
    assert got is correct or (correct is None and got in (True, False))


# -- structure -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("(1, 2)", "\\{1, 2\\}", False),
        ("\\{1, 2\\}", "(1, 2)", False),
        ("\\{1, 2\\}", "\\{2, 1\\}", True),
        ("(1, 2)", "(2, 1)", False),
        ("(1, 2)", "(1, 2)", True),
        ("[1, 2]", "(1, 2)", False),
        ("5", "\\{5\\}", True),
        ("5", "\\{\\{5\\}\\}", False),  # a set holding a set is not that set
        ("\\{5\\}", "\\{\\{5\\}\\}", False),
        ("(5, 6)", "(\\{5\\}, 6)", False),  # unwrapped only at the answer's one level
        ("1, 1, 2", "1, 2", False),  # multiplicity is kept
        ("1, 1, 2", "2, 1, 1", True),
        ("\\pm 2", "-2, 2", True),
        ("\\pm 2", "2", False),
    ],
)
def test_structure_is_kept(verifier, gold, pred, correct):
    assert _right(verifier, gold, pred) is correct


# -- relations and equations ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("2a - b = 3", "3", False),
        ("2a - b = 3", "2a - b", False),
        ("t \\le 4", "4", False),
        ("t \\le 4", "t \\leq 4", True),
        ("2a - b = 3", "2a - b = 3", True),
        ("x + y = 1", "1", False),
        ("k = 1", "1", True),  # a label's value is the answer
        ("k = 1", "k = 1", True),
        ("k = 1", "k = 2", False),
    ],
)
def test_a_relation_gold_is_matched_as_that_relation(verifier, gold, pred, correct):
    assert _right(verifier, gold, pred) is correct


# -- format credit means an answer was given -------------------------------------------------------
@pytest.mark.parametrize(
    "answer,gold,given",
    [
        ("\\text{as computed}", "5", False),
        ("\\text{pending}", "5", False),
        ("x", "5", False),  # a label's own name
        ("abc", "5", False),  # a run of letters
        ("\\text{see above}", "2x", False),
        ("7", "5", True),  # wrong, but an answer
        ("x", "x", True),
        ("2x", "x", True),
        ("\\text{Evelyn}", "\\text{Devon}", True),  # a prose gold: prose is an answer
        (None, "5", False),
    ],
)
def test_format_credit_needs_an_answer(answer, gold, given):
    assert gives_answer(answer, gold) is given


def test_a_stand_in_box_earns_no_format_credit(verifier):
    from recipe_bcr.grading.reward import score_completion

    stand_in = "### Problem 1\nAnswer1: \\boxed{\\text{as computed}}\n"
    honest = "### Problem 1\nAnswer1: \\boxed{5}\n"
    assert score_completion(stand_in, ["5"], verifier).breakdown["fmt"] == 0.0
    assert score_completion(honest, ["5"], verifier).breakdown["fmt"] == 1.0


# -- restating is not hedging --------------------------------------------------------------------
@pytest.mark.parametrize(
    "first,second,same",
    [("2^{3}", "8", True), ("y = 4", "4", True), ("\\frac{6}{2}", "3", True), ("3", "5", False), ("y = 4", "5", False)],
)
def test_restating_is_not_hedging(verifier, first, second, same):
    from recipe_bcr.grading.parse.extract import extract_group

    text = f"### Problem 1\nAnswer1: \\boxed{{{first}}}\nso Answer1: \\boxed{{{second}}}\n"
    answers = extract_group(text, 1).answers
    assert (answers[0] is not None) is same
    assert (restatement_key(first) == restatement_key(second)) is same


# -- what reaches the symbolic check -------------------------------------------------------------
def test_the_symbolic_check_reads_the_trees_rendering():
    """Every literal as its exact value, and one spelling per meaning: never the answer's own text."""
    assert render(parse("0.25\\pi + x")) == "\\frac{1}{4} \\cdot \\pi + x"
    assert render(parse("918\\frac{1}{2}\\sqrt{2}")) == "\\frac{1837}{2} \\cdot \\sqrt{2}"  # a mixed number
    assert render(parse("1010_2 \\sqrt{2}")) == "10 \\cdot \\sqrt{2}"  # a base subscript
    assert render(parse("1.5 \\times 10^{6} \\pi")) == "1500000 \\cdot \\pi"
    assert render(parse("0.\\overline{3}\\pi")) == "\\frac{1}{3} \\cdot \\pi"
    assert render(parse("f(x+1)")) == "f\\left(x + 1\\right)"  # a bracket stays beside what it follows
    assert render(parse("{2 \\over 3}")) == render(parse("\\frac{2}{3}"))
    assert render(parse("3+4\\mathrm{i}")) == render(parse("3+4\\imath")) == render(parse("3+4i"))
    assert render(parse("\\operatorname{arcsin}(x)")) == render(parse("\\arcsin(x)"))
    assert render(parse("5 \\mathrm{~cm}")) == "5"


@pytest.mark.parametrize(
    "gold,pred,correct",
    [
        ("10\\sqrt{2}", "1010_2 \\sqrt{2}", True),
        ("1010\\sqrt{2}", "1010_2 \\sqrt{2}", False),
        ("\\frac{5}{2}\\sqrt{2}", "2\\frac{1}{2}\\sqrt{2}", True),
        ("\\sqrt{2}", "2\\frac{1}{2}\\sqrt{2}", False),  # not read as 2 * 1/2
    ],
)
def test_the_symbolic_check_reads_what_the_tree_read(verifier, gold, pred, correct):
    assert _right(verifier, gold, pred) is correct


# -- linear scans --------------------------------------------------------------------------------
ADVERSARIAL = {
    "open brackets": lambda n: "(" * n,
    "nested braces": lambda n: "{" * n + "5" + "}" * n,
    "thousands groups": lambda n: "1" + ",000" * n,
    "single-digit arguments": lambda n: "\\frac12" * n,
    "mixed-number tries": lambda n: "3\\frac{x}12" * n,
    "unclosed text": lambda n: "\\text{" * n,
    "spaces": lambda n: "5" + " " * n + "6",
    "words": lambda n: "and " * n,
    "long sum": lambda n: "+".join(["x"] * n),
    "ISO brackets": lambda n: "]1, 2[ \\cup " * n + "]1, 2[",
    "repeating dots": lambda n: "0." + "\\dot{1}2" * n + "\\dot{3}",
    "fractions of units": lambda n: "5 " + "\\frac{\\text{m}}{" * n,
    "units side by side": lambda n: "5 " + "\\mathrm{~m}" * n,
    "micro before letters": lambda n: "5 \\mu " + "m" * n,
}


def _lines_run(text: str) -> int:
    """Python lines executed to read `text` (tokens and tree): a count of work, not a time."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        parse(text)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_reading_is_linear(name):
    """Doubling an adversarial input at most about doubles the work (a quadratic scan would quadruple it)."""
    make = ADVERSARIAL[name]
    small, large = _lines_run(make(2000)), _lines_run(make(4000))
    assert large <= 2.2 * small + 200


def test_nothing_deep_raises():
    assert parse("(" * 100_000 + "5" + ")" * 100_000) is None
    assert read_answer("\\frac" * 50_000) is None
