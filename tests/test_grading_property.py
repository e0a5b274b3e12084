"""Issue 25, the property: for random exact values and random honest spellings of them, the verdict
against the plain gold is True; for the same spellings of the value changed by one unit in its last
place, False."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Spelling = Callable[[Fraction], str]
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _sign(v: Fraction) -> str:
    return "-" if v < 0 else ""


def _frac(v: Fraction, cmd: str = "\\frac") -> str:
    return f"{_sign(v)}{cmd}{{{abs(v.numerator)}}}{{{v.denominator}}}"


def _grouped(mark: str) -> Spelling:
    return lambda v: _sign(v) + mark.join(f"{abs(v.numerator):,}".split(","))


INTEGER_SPELLINGS: list[Spelling] = [
    lambda v: str(v.numerator),
    _grouped("\\,"),
    _grouped("{,}"),
    _grouped("~"),
    _grouped("\\!"),
    _grouped(","),
    lambda v: f"\\text{{${v.numerator}$}}",
    lambda v: _sign(v) + "".join(f"\\mathbf{{{d}}}" for d in str(abs(v.numerator))),
    lambda v: f"{v.numerator} \\text{{ cm}}",
    lambda v: f"{v.numerator}\\ \\mathrm{{m}}^2",
    lambda v: f"x = {v.numerator}",
    lambda v: f"{{{v.numerator} \\over 1}}",
    lambda v: f"{v.numerator}.0",
    lambda v: f"\\left( {v.numerator} \\right)",
    lambda v: f"\\boxed{{{v.numerator}}}",
    lambda v: f"{v.numerator}\\text{{.}}",
    lambda v: f"{v.numerator} \\text{{ cm}}^{{2}}",
    lambda v: f"{v.numerator}\\text{{\\%}}",
    lambda v: f"\\textbf{{(B)}}\\ {v.numerator}",
    lambda v: str(v.numerator).replace("-", "\u2212"),
    _grouped("\u2009"),
]
FRACTION_SPELLINGS: list[Spelling] = [
    _frac,
    lambda v: _frac(v, "\\dfrac"),
    lambda v: f"{_sign(v)}{{{abs(v.numerator)} \\over {v.denominator}}}",
    lambda v: f"{v.numerator}/{v.denominator}",
    lambda v: f"{_sign(v)}\\frac{{{2 * abs(v.numerator)}}}{{{2 * v.denominator}}}",
    lambda v: f"x = {_frac(v)}",
    lambda v: f"P(\\text{{A}}) = {_frac(v)}",
    lambda v: f"{_frac(v)} = {_sign(v)}\\frac{{{3 * abs(v.numerator)}}}{{{3 * v.denominator}}}",
    lambda v: f"\\text{{${_frac(v)}$}}",
]


def _places(v: Fraction) -> int:
    """Digits after the point that a decimal of v needs: exact when it terminates, else within 1e-6 relative."""
    for k in range(0, 40):
        if (v * 10**k).denominator == 1:
            return k
    return 8 + max(0, -math.floor(math.log10(abs(v)))) if v else 8


def _decimal(scaled: int, places: int) -> str:
    digits = str(abs(scaled)).rjust(places + 1, "0")
    return ("-" if scaled < 0 else "") + (f"{digits[:-places]}.{digits[-places:]}" if places else digits)


def _check(verifier, value: Fraction, changed: Fraction, spell: Spelling, gold: str) -> None:
    assert verifier.check(spell(value), gold).correct, (spell(value), gold)
    assert not verifier.check(spell(changed), gold).correct, (spell(changed), gold)


@_SETTINGS
@given(n=st.integers(-(10**12), 10**12), k=st.integers(0, len(INTEGER_SPELLINGS) - 1))
def test_integers(verifier, n, k):
    _check(verifier, Fraction(n), Fraction(n + 1), INTEGER_SPELLINGS[k], str(n))


@_SETTINGS
@given(p=st.integers(-(10**6), 10**6), q=st.integers(2, 10**4), k=st.integers(0, len(FRACTION_SPELLINGS) - 1))
def test_fractions(verifier, p, q, k):
    value = Fraction(p, q)
    if value.denominator == 1:
        return
    changed = Fraction(value.numerator + 1, value.denominator)
    _check(verifier, value, changed, FRACTION_SPELLINGS[k], _frac(value))


@_SETTINGS
@given(p=st.integers(-(10**6), 10**6).filter(bool), q=st.integers(2, 10**4))
def test_decimals(verifier, p, q):
    """The decimal policy: exact where the value terminates, else its rounding at its own last digit."""
    value = Fraction(p, q)
    places = _places(value)
    scaled = round(value * 10**places)
    away = 1 if value > 0 else -1  # one unit in the last place, away from zero (toward zero may be the cut)
    gold = _frac(value) if value.denominator != 1 else str(value.numerator)
    assert verifier.check(_decimal(scaled, places), gold).correct, (_decimal(scaled, places), gold)
    assert not verifier.check(_decimal(scaled + away, places), gold).correct, (_decimal(scaled + away, places), gold)
    assert verifier.check(f"{_decimal(scaled, places)} \\cdot 1", gold).correct
