"""Issue 25, restatement chains: `\\frac{1}{3} = 0.\\overline{3}` and `P(\\text{win}) = \\frac{1}{3}` state one
value, every part of which must be the gold's; a chain with one wrong part, or an equation in unknowns,
states nothing."""

from __future__ import annotations

import random
from fractions import Fraction


def _repeating(q: Fraction) -> str | None:
    """q as `0.\\overline{d}` when its decimal expansion is purely periodic with period 1."""
    nine = q * 9
    return f"0.\\overline{{{nine.numerator}}}" if nine.denominator == 1 and 0 < nine < 9 else None


def test_chains_of_closed_values(verifier):
    rng = random.Random(11)
    for _ in range(40):
        p, q = rng.randrange(1, 40), rng.randrange(2, 40)
        frac, other = f"\\frac{{{p}}}{{{q}}}", f"\\frac{{{p + 1}}}{{{q}}}"
        for pred in (
            f"{frac} = \\frac{{{2 * p}}}{{{2 * q}}}",
            f"P(\\text{{win}}) = {frac}",
            f"x = {frac} = \\frac{{{3 * p}}}{{{3 * q}}}",
            f"\\text{{Probability}} = {frac}",
            f"P(A \\cap B) = {frac}",
        ):
            assert verifier.check(pred, frac).correct, pred
            assert not verifier.check(pred, other).correct, pred
        assert not verifier.check(f"{frac} = {other}", frac).correct  # one wrong part
    for d in range(1, 9):
        assert verifier.check(f"\\frac{{{d}}}{{9}} = {_repeating(Fraction(d, 9))}", f"\\frac{{{d}}}{{9}}").correct
        assert not verifier.check(f"\\frac{{{d}}}{{9}} = 0.\\overline{{{d + 1}}}", f"\\frac{{{d}}}{{9}}").correct


def test_equations_in_unknowns_state_nothing(verifier):
    assert not verifier.check("2x = 6", "6").correct
    assert not verifier.check("x + y = 1", "1").correct
    assert not verifier.check("4 = 5", "5").correct


def test_prose_beside_a_label_is_still_prose(verifier):
    assert not verifier.check("P(\\text{win}) = \\frac{1}{3} \\text{ roughly}", "\\frac{1}{3}").correct
    assert not verifier.check("\\frac{1}{3} \\text{ or so}", "\\frac{1}{3}").correct


def test_the_same_power_written_with_braces(verifier):
    for k in range(2, 12):
        assert verifier.check(f"x^{{{k}}}", f"x^{k}" if k < 10 else f"x^{{{k}}}").correct
        assert not verifier.check(f"x^{{{k + 1}}}", f"x^{{{k}}}").correct
