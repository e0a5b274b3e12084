"""Issue 25, choice letters: `\\text{(B)}`, `\\textbf{(B)}`, `\\mathrm{(B)}`, `(B)` answer the gold `B` (accuracy
and format); another letter does not, and a choice letter is never Euler's number (`E` is not `e`)."""

from __future__ import annotations

import pytest

from recipe_bcr.grading.reward import score_completion

SPELLINGS = [
    "{}",
    "({})",
    "\\text{{({})}}",
    "\\textbf{{({})}}",
    "\\mathrm{{({})}}",
    "\\text{{{}}}",
    "\\textbf{{ ( {} ) }}",
]


@pytest.mark.parametrize("gold_form", ["{}", "\\text{{({})}}", "({})", "\\textbf{{{}}}"])
def test_choice_letters(verifier, gold_form):
    for letter in "ABCDE":
        gold = gold_form.format(letter)
        for form in SPELLINGS:
            assert verifier.check(form.format(letter), gold).correct, (form, gold)
            other = "ABCDE"[("ABCDE".index(letter) + 1) % 5]
            assert not verifier.check(form.format(other), gold).correct, (form, gold)
            assert not verifier.check(form.format(letter.lower()), gold).correct, (form, gold)


def test_a_choice_is_not_eulers_number(verifier):
    for gold in ("E", "\\text{(E)}", "(E)", "\\textbf{(E)}"):
        for pred in ("e", "\\mathrm{e}", "\\text{e}", "(e)"):
            assert not verifier.check(pred, gold).correct, (pred, gold)


def test_a_spelled_choice_earns_accuracy_and_format(verifier):
    for form in SPELLINGS:
        text = f"### Problem 1\nAnswer1: \\boxed{{{form.format('B')}}}\n"
        assert score_completion(text, ["B"], verifier).breakdown["score"] == 3.0, form
        assert score_completion(text, ["C"], verifier).breakdown["acc"] == 0.0, form


def test_a_choice_with_its_value_answers_the_letter_or_the_value(verifier):
    """The contest answer line `\\textbf{(B)}\\ 32`: the letter against a letter gold, the value against a value."""
    for k, form in enumerate(
        ("\\textbf{{({})}}\\ {}", "\\textbf{{({}) }}{}", "\\text{{({})}} {}", "\\mathrm{{({})}}~{}")
    ):
        for n in range(1, 40, 3):
            letter, other = "ABCDE"[(n + k) % 5], "ABCDE"[(n + k + 1) % 5]
            for value, near in ((str(n), str(n + 1)), (f"\\frac{{{n}}}{{7}}", f"\\frac{{{n + 1}}}{{7}}")):
                pred = form.format(letter, value)
                assert verifier.check(pred, letter).correct, pred
                assert verifier.check(pred, value).correct, pred
                assert verifier.check(value, pred).correct, pred
                assert verifier.check(letter, pred).correct, pred
                assert not verifier.check(pred, other).correct, pred
                assert not verifier.check(pred, near).correct, pred
                assert not verifier.check(form.format(other, value), letter).correct, pred
                assert not verifier.check(near, pred).correct, pred
    text = "### Problem 1\nAnswer1: \\boxed{\\textbf{(B)}\\ 32}\n"
    assert score_completion(text, ["B"], verifier).breakdown["score"] == 3.0
    assert score_completion(text, ["C"], verifier).breakdown["acc"] == 0.0


def test_two_choices_are_a_hedge(verifier):
    for pred in (
        "\\text{(A)}\\text{(B)}",
        "\\text{(A)} \\text{ or } \\text{(B)}",
        "\\textbf{(A)}\\ 3 \\text{ or } \\textbf{(B)}\\ 4",
    ):
        assert not verifier.check(pred, "A").correct, pred
