"""Issue 36, the judgement calls, settled (docs/grading.md, "Judgement calls, settled"): `n\\%` against a gold that
is no percent is n or n/100; an angle in degrees against one in radians is the same angle; a number in English
words is that number; a unicode vulgar fraction is that fraction."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

RNG_SEED = 3606


def test_a_percent_against_a_plain_gold_is_n_or_n_over_100(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(40):
        n = rng.randrange(1, 400)
        q = Fraction(n, 100)
        for pred in (f"{n}\\%", f"{n}%", f"{n} \\text{{ percent}}", f"{n}\\text{{\\%}}"):
            assert verifier.check(pred, str(n)).correct, pred
            assert verifier.check(pred, f"\\frac{{{q.numerator}}}{{{q.denominator}}}").correct, pred
            assert verifier.check(pred, str(float(q))).correct, pred
            assert not verifier.check(pred, str(n + 1)).correct, pred
            assert not verifier.check(pred, f"\\frac{{{q.numerator + 1}}}{{{q.denominator}}}").correct, pred
            assert not verifier.check(pred, str(n * 100)).correct, pred  # never n times 100
            assert not verifier.check(pred, f"{n / 1000}").correct, pred
        assert verifier.check(str(n), f"{n}\\%").correct
        assert verifier.check(f"\\frac{{{q.numerator}}}{{{q.denominator}}}", f"{n}\\%").correct


ANGLES = [
    (30, "\\frac{\\pi}{6}"),
    (45, "\\frac{\\pi}{4}"),
    (60, "\\frac{\\pi}{3}"),
    (90, "\\frac{\\pi}{2}"),
    (120, "\\frac{2\\pi}{3}"),
    (135, "\\frac{3\\pi}{4}"),
    (150, "\\frac{5\\pi}{6}"),
    (180, "\\pi"),
    (270, "\\frac{3\\pi}{2}"),
    (360, "2\\pi"),
    (15, "\\frac{\\pi}{12}"),
    (-90, "-\\frac{\\pi}{2}"),
    (720, "4\\pi"),
    (210, "\\frac{7}{6}\\pi"),
]


@pytest.mark.parametrize("degrees,radians", ANGLES)
def test_degrees_against_radians_are_the_same_angle(verifier, degrees, radians):
    for deg in (f"{degrees}^\\circ", f"{degrees}^{{\\circ}}", f"{degrees}°", f"{degrees}\\degree"):
        assert verifier.check(deg, radians).correct, (deg, radians)
        assert verifier.check(radians, deg).correct, (radians, deg)
        assert verifier.check(deg, str(degrees)).correct  # a gold that dropped its degree sign
        assert not verifier.check(deg, f"{radians} + \\pi").correct
        assert not verifier.check(deg, f"\\frac{{\\pi}}{{{abs(degrees) + 1}}}").correct
    assert not verifier.check(radians, str(degrees)).correct  # a bare number is no angle in degrees
    assert not verifier.check(str(degrees), radians).correct


WORDS = {
    0: "zero",
    1: "one",
    7: "seven",
    12: "twelve",
    19: "nineteen",
    20: "twenty",
    21: "twenty-one",
    45: "forty five",
    99: "ninety-nine",
    100: "one hundred",
    105: "one hundred and five",
    342: "three hundred forty-two",
    1000: "one thousand",
    2024: "two thousand twenty-four",
    15000: "fifteen thousand",
    3000000: "three million",
    -4: "negative four",
    1200: "twelve hundred",
}


@pytest.mark.parametrize("value,words", sorted(WORDS.items()))
def test_a_number_in_words_is_that_number(verifier, value, words):
    for pred in (
        f"\\text{{{words}}}",
        f"\\text{{{words.capitalize()}}}",
        f"\\textbf{{{words}}}",
        f"\\text{{ {words} }}",
    ):
        assert verifier.check(pred, str(value)).correct, pred
        assert not verifier.check(pred, str(value + 1)).correct, pred
    assert verifier.check(str(value), f"\\text{{{words}}}").correct


@pytest.mark.parametrize(
    "words",
    [
        "one or two",
        "five apples",
        "twenty twenty",
        "hundred",
        "one one",
        "thousand million",
        "fivety",
        "a few",
        "seven and eight",
    ],
)
def test_words_that_are_no_single_number_are_not_one(verifier, words):
    for value in (0, 1, 2, 5, 7, 8, 20, 40, 100, 2020, 1000000000):
        assert not verifier.check(f"\\text{{{words}}}", str(value)).correct, (words, value)


VULGAR = {
    "½": Fraction(1, 2),
    "⅓": Fraction(1, 3),
    "⅔": Fraction(2, 3),
    "¼": Fraction(1, 4),
    "¾": Fraction(3, 4),
    "⅕": Fraction(1, 5),
    "⅛": Fraction(1, 8),
    "⅞": Fraction(7, 8),
    "⅙": Fraction(1, 6),
    "⅚": Fraction(5, 6),
}


@pytest.mark.parametrize("char", sorted(VULGAR))
def test_a_unicode_vulgar_fraction_is_that_fraction(verifier, char):
    q = VULGAR[char]
    frac = f"\\frac{{{q.numerator}}}{{{q.denominator}}}"
    assert verifier.check(char, frac).correct and verifier.check(frac, char).correct
    assert verifier.check(f"-{char}", f"-{frac}").correct
    assert not verifier.check(char, f"\\frac{{{q.numerator + 1}}}{{{q.denominator}}}").correct
    for whole in (1, 2, 7, 12):
        mixed = whole + q
        assert verifier.check(f"{whole}{char}", f"\\frac{{{mixed.numerator}}}{{{mixed.denominator}}}").correct
        assert verifier.check(f"{whole} {char}", f"{whole}\\frac{{{q.numerator}}}{{{q.denominator}}}").correct
        assert not verifier.check(f"{whole}{char}", str(whole)).correct
    assert verifier.check(f"{char}x", f"{frac} x").correct
