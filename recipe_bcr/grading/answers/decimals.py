"""The decimal rule: a decimal stands for an exact value only as that value, or (where the value has no
finite decimal expansion) as its cut or rounding at its own last digit, within rel_tol; a percent may be read
either way. Shared with the symbolic worker."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.value import exact


def decimal_hint(node: Node) -> list[int | bool] | None:
    """[numerator, denominator, is a decimal, places] of a value the tree reads as one number (the
    symbolic check then skips its parse and holds a decimal to the decimal rule); None otherwise."""
    dec = decimal_value(node)
    if dec is not None:
        return [dec.value.numerator, dec.value.denominator, True, dec.places]
    value = exact(node) if node.kind in ARITHMETIC else None
    return None if value is None else [value.numerator, value.denominator, False, 0]


def decimal_literal(node: Node) -> Number | None:
    """A whole value that is one decimal literal (maybe negated, with degrees): its exact reading."""
    sign = 1
    while node.kind in ("neg", "degree"):
        if node.kind == "neg":
            sign = -sign
        node = node.children[0]
    if node.kind == "num" and node.places is not None and node.value is not None:
        return Number(sign * node.value, True, False, node.places)
    return None


ARITHMETIC = frozenset(("num", "neg", "add", "mul", "div"))


def decimal_value(node: Node) -> Number | None:
    """A whole value written in decimals: a decimal literal, or sums and products of decimals and exact
    numbers whose value is a finite decimal (`0.3333333 \\cdot 1` is the decimal 0.3333333)."""
    literal = decimal_literal(node)
    if literal is not None or node.kind not in ARITHMETIC:
        return literal
    kinds = {n.kind for n in node.walk()}
    if not kinds <= ARITHMETIC or not any(n.kind == "num" and n.places is not None for n in node.walk()):
        return None
    if not _keeps_last_digit(node):
        return None  # \frac{2.000001}{3}: each decimal stands for its own value, and 2.000001 is not 2
    value = exact(node)
    if value is None:
        return None
    places = next((k for k in range(61) if (value * 10**k).denominator == 1), None)
    return None if places is None else Number(value, True, False, places)


def has_decimal(node: Node) -> bool:
    return any(n.kind == "num" and n.places is not None for n in node.walk())


def _keeps_last_digit(node: Node) -> bool:
    """Arithmetic after which a decimal still rounds at a digit it wrote: sums, products with integers,
    quotients by powers of ten (`\\frac{2.000001}{3}` is 0.666667 only by chance)."""
    k, ch = node.kind, node.children
    if k == "num":
        return True
    if k in ("neg", "add"):
        return all(_keeps_last_digit(c) for c in ch)
    if k == "mul":
        return all(_keeps_last_digit(c) if has_decimal(c) else is_integer_value(c) for c in ch)
    if k == "div":
        den = None if has_decimal(ch[1]) else exact(ch[1])
        return _keeps_last_digit(ch[0]) and den is not None and den > 0 and _power_of_ten(den)
    return False


def is_integer_value(node: Node) -> bool:
    v = exact(node)
    return v is not None and v.denominator == 1


def _power_of_ten(v: Fraction) -> bool:
    if v.denominator != 1:
        return False
    n = v.numerator
    while n % 10 == 0:
        n //= 10
    return n == 1


def percent(node: Node) -> Number | None:
    """A percent, maybe negated (`-5\\%` is -(5%): a negative percent is read as a percent too)."""
    sign = 1
    while node.kind == "neg":
        sign, node = -sign, node.children[0]
    if node.kind == "percent":
        v = exact(node.children[0])
        lit = decimal_literal(node.children[0])
        if v is not None:
            return Number(sign * v, lit is not None, True, lit.places if lit else 0)
    return None


def as_number(node: Node) -> Number | None:
    dec = decimal_literal(node)
    if dec is not None:
        return dec
    v = exact(node)
    return None if v is None else Number(v, False)


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
