"""What the tree's readers share: size limits, and the decimal rule on exact numbers.

`Number`, `numbers_match` and `decimal_matches` are the decimal rule (a decimal stands for an exact
value only as its cut or rounding at its own last digit) on values the tree has already read.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

MAX_ANSWER_CHARS = 2000  # a longer answer is no answer (and reading it would cost time on every step)
MAX_DIGITS = 1000  # an exact number is never expanded beyond this many digits (1e100000000 would take minutes)


@dataclass(frozen=True)
class Number:
    value: Fraction
    approximate: bool  # written with a decimal point or exponent
    percent: bool = False  # written with %, "percent" or "pct"
    places: int = 0  # digits after the point, less the exponent: 1.25 has 2, 1.2e3 has -2


def terminates(q: Fraction) -> bool:
    """True when `q` has a finite decimal expansion (its denominator has no prime but 2 and 5)."""
    d = q.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def decimal_matches(exact: Fraction, written: Fraction, places: int, rel_tol: float) -> bool:
    """Does a decimal written with `places` digits after the point stand for `exact`?

    Only if it is `exact`, or, when `exact` has no finite decimal expansion (1/3, 1/7), if it
    is `exact` rounded or cut at its own last digit and within `rel_tol` relative. A value
    that can be written exactly must be: 1000000.0 is not 1000001, 0.0 is not 10^{-9}."""
    if written == exact:
        return True
    if terminates(exact) or exact == 0:
        return False
    return rounds_to(exact, written, places) and abs(written - exact) <= Fraction(rel_tol) * abs(exact)


def rounds_to(exact: Fraction, written: Fraction, places: int) -> bool:
    """`written` is `exact` cut (toward zero) or rounded to nearest at its own last digit,
    `places` after the point (a tie may go either way)."""
    step = Fraction(10) ** places
    scaled = written * step
    if scaled.denominator != 1:
        return False
    return scaled.numerator in rounding_candidates(exact * step)


def rounding_candidates(x: Fraction) -> set[int]:
    """The integers `x` is cut to (toward zero) or rounded to (nearest; both on a tie)."""
    low = x.numerator // x.denominator
    frac = x - low
    cut = low if x >= 0 else (low if frac == 0 else low + 1)
    nearest = {low} if frac < Fraction(1, 2) else {low + 1} if frac > Fraction(1, 2) else {low, low + 1}
    return {cut} | nearest


def numbers_match(a: Number, b: Number, rel_tol: float) -> bool:
    """Exact, or a decimal standing for the other side's exact value (see decimal_matches).

    A percent sign may be read either way (MATH drops it: "28%" is 28; "25%" is also 0.25), so
    when exactly one side carries one, its value divided by 100 is accepted too.
    """
    if _values_match(a, b, rel_tol):
        return True
    if a.percent != b.percent:
        return _values_match(_hundredth(a), _hundredth(b), rel_tol)
    return False


def _hundredth(n: Number) -> Number:
    """A percent as the fraction it stands for (25% -> 0.25, two more places); others unchanged."""
    return Number(n.value / 100, n.approximate, False, n.places + 2) if n.percent else n


def _values_match(a: Number, b: Number, rel_tol: float) -> bool:
    if a.value == b.value:
        return True
    return (b.approximate and decimal_matches(a.value, b.value, b.places, rel_tol)) or (
        a.approximate and decimal_matches(b.value, a.value, a.places, rel_tol)
    )
