"""The decimal rule: a decimal stands for an exact value only as that value, or (where the value has no
finite decimal expansion) as its cut or rounding at its own last digit, within rel_tol; a percent may be read
either way. Shared with the symbolic worker."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


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
    """Does a decimal with `places` digits after the point stand for `exact`? Only as `exact`, or (no finite
    decimal expansion: 1/3) as its cut or rounding at its last digit within `rel_tol`; 1000000.0 is not 1000001."""
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
    """Exact, or a decimal standing for the other side's value (decimal_matches); where one side only carries
    a percent sign, its value divided by 100 is accepted too (MATH drops it: "28%" is 28, "25%" also 0.25)."""
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
