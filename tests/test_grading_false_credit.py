"""Issue 36, false credit: the decimal rule holds wherever a decimal stands (a fraction whose numerator is a decimal
a millionth off is not the fraction), and a trigonometric function raised to -1 is its inverse (`\\tan^{-1} x` is
arctan x, never 1/tan x), while `\\cos^2 x` stays `(\\cos x)^2`."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

RNG_SEED = 3636


def _fractions(count: int) -> list[tuple[int, int]]:
    rng = random.Random(RNG_SEED)
    out = []
    while len(out) < count:
        p, q = rng.randrange(1, 400), rng.choice([3, 7, 9, 11, 13, 17, 21, 27, 37, 49])
        if math.gcd(p, q) == 1:
            out.append((p, q))
    return out


def test_a_decimal_numerator_a_millionth_off_is_not_the_fraction(verifier):
    for p, q in _fractions(60):
        gold = f"\\frac{{{p}}}{{{q}}}"
        for off in ("000001", "0000001", "00001"):
            for num in (f"{p}.{off}", f"{p - 1}.{'9' * len(off)}"):
                for pred in (
                    f"\\frac{{{num}}}{{{q}}}",
                    f"{num}/{q}",
                    f"\\frac{{1}}{{{q}}} \\cdot {num}",
                    f"{num} \\div {q}",
                    f"\\frac{{{num}}}{{{q}}} + 0",
                    f"{num} \\cdot \\frac{{1}}{{{q}}}",
                ):
                    assert not verifier.check(pred, gold).correct, (pred, gold)


def test_a_decimal_in_a_denominator_or_power_is_its_own_value(verifier):
    for p, q in _fractions(30):
        gold = f"\\frac{{{p}}}{{{q}}}"
        assert not verifier.check(f"\\frac{{{p}}}{{{q}.000001}}", gold).correct
        assert not verifier.check(f"\\frac{{{p}}}{{{q}}}^{{1.000001}}", gold).correct
        assert not verifier.check(f"\\sqrt{{{p}.000001}}", f"\\sqrt{{{p}}}").correct


def test_honest_decimals_inside_expressions_are_still_credited(verifier):
    for p, q in _fractions(30):
        gold = f"\\frac{{{p}}}{{{q}}}"
        value = Fraction(p, q)
        assert verifier.check(f"\\frac{{{p}.0}}{{{q}}}", gold).correct  # the decimal is exactly p
        assert verifier.check(f"\\frac{{{2 * p}}}{{{2 * q}.0}}", gold).correct
        rounded = f"{float(value):.9f}"
        assert verifier.check(rounded, gold).correct  # a whole-value decimal: its rounding
        assert verifier.check(f"\\frac{{{rounded}}}{{1}}", gold).correct  # over one it is that decimal
        assert verifier.check(f"{rounded} \\cdot 1", gold).correct
    assert verifier.check("0.5 + 0.25", "\\frac{3}{4}").correct
    assert verifier.check("2 \\times 0.25", "\\frac{1}{2}").correct


INVERSES = {"sin": math.asin, "cos": math.acos, "tan": math.atan}
SPECIAL = {  # exact inverse values: argument -> gold
    "sin": [
        ("\\frac{1}{2}", "\\frac{\\pi}{6}"),
        ("\\frac{\\sqrt{3}}{2}", "\\frac{\\pi}{3}"),
        ("1", "\\frac{\\pi}{2}"),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{\\pi}{4}"),
    ],
    "cos": [
        ("\\frac{1}{2}", "\\frac{\\pi}{3}"),
        ("0", "\\frac{\\pi}{2}"),
        ("-1", "\\pi"),
        ("\\frac{\\sqrt{3}}{2}", "\\frac{\\pi}{6}"),
    ],
    "tan": [
        ("1", "\\frac{\\pi}{4}"),
        ("\\sqrt{3}", "\\frac{\\pi}{3}"),
        ("\\frac{1}{\\sqrt{3}}", "\\frac{\\pi}{6}"),
        ("-1", "-\\frac{\\pi}{4}"),
    ],
}


@pytest.mark.parametrize("name", sorted(INVERSES))
def test_a_trigonometric_function_to_the_minus_one_is_its_inverse(verifier, name):
    for arg, gold in SPECIAL[name]:
        for pred in (
            f"\\{name}^{{-1}}({arg})",
            f"\\{name}^{{-1}} {arg}" if arg[0] != "-" else f"\\{name}^{{-1}}({arg})",
            f"\\{name}^{{-1}}\\left({arg}\\right)",
        ):
            assert verifier.check(pred, gold).correct, (pred, gold)
            assert verifier.check(pred, f"\\arc{name}({arg})").correct, pred
            assert not verifier.check(pred, f"\\frac{{1}}{{\\{name}({arg})}}").correct, pred


@pytest.mark.parametrize("name", sorted(INVERSES))
def test_the_reciprocal_reading_is_never_paid(verifier, name):
    rng = random.Random(RNG_SEED)
    for _ in range(20):
        k = rng.randrange(2, 9)
        arg = f"\\frac{{1}}{{{k}}}"
        pred = f"\\{name}^{{-1}}\\left({arg}\\right)"
        reciprocal = 1 / {"sin": math.sin, "cos": math.cos, "tan": math.tan}[name](1 / k)
        assert not verifier.check(pred, f"\\frac{{1}}{{\\{name}({arg})}}").correct, pred
        assert not verifier.check(pred, f"{reciprocal:.12f}").correct, pred
        assert verifier.check(pred, f"{INVERSES[name](1 / k):.12f}").correct, pred
        assert verifier.check(f"\\{name}^{{-1}} x", f"\\arc{name} x").correct
        assert not verifier.check(f"\\{name}^{{-1}} x", f"\\frac{{1}}{{\\{name} x}}").correct


def test_a_square_of_a_trigonometric_function_stays_a_power(verifier):
    for name in ("sin", "cos", "tan"):
        for k in range(2, 6):
            assert verifier.check(f"\\{name}^{k} x", f"(\\{name} x)^{k}").correct
            assert verifier.check(f"\\{name}^{{{k}}}(x)", f"\\left(\\{name}(x)\\right)^{{{k}}}").correct
            assert not verifier.check(f"\\{name}^{k} x", f"\\{name}(x^{k})").correct
    assert verifier.check("\\sin^{2}\\frac{\\pi}{4}", "\\frac{1}{2}").correct
