"""Two single values (infinities, angles, percents, decimals, rationals, powers, 50-digit refutations, exact
polynomials); and the decimal rule, which the symbolic worker shares."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.poly import same_polynomial
from recipe_bcr.grading.answers.value import (
    approximate,
    as_mp,
    exact,
    real_and_imaginary,
    refute,
    refutes,
    scaled_fraction,
    tower_floor,
    unknowns,
)

Decision = bool | None


def decide_scalars(pairs: list[tuple[Node, Node, bool]], rel_tol: float) -> list[Decision]:
    """Each pair of single values (answer, gold, claimed only approximately) judged."""
    return [decide_scalar(pred, gold, rel_tol, approx) for pred, gold, approx in pairs]


def decide_scalar(pred: Node, gold: Node, rel_tol: float, approx: bool) -> Decision:
    p_inf, g_inf = pred.infinite, gold.infinite
    if p_inf or g_inf:
        return p_inf == g_inf  # infinities by identity
    angle = _angle(pred, gold)
    if angle is not None:
        return angle
    p_pct, g_pct = percent(pred), percent(gold)
    if p_pct is not None or g_pct is not None:
        p_num = p_pct or as_number(pred)
        g_num = g_pct or as_number(gold)
        if p_num is None or g_num is None:
            return None
        return numbers_match(g_num, p_num, rel_tol)
    p_dec, g_dec = decimal_value(pred), decimal_value(gold)
    p_exact, g_exact = exact(pred), exact(gold)
    if p_dec is not None or g_dec is not None:
        return _decimal(pred, gold, p_dec, g_dec, rel_tol, approx)
    if _complex_decimals(pred) and not _complex_decimals(gold):
        return _complex(pred, gold, rel_tol)
    if p_exact is not None and g_exact is not None:
        return p_exact == g_exact
    same_base = _same_base_powers(pred, gold)
    if same_base is not None:
        return same_base
    refuted = refute(pred, gold)
    return refuted if refuted is not None else same_polynomial(pred, gold)


def _angle(pred: Node, gold: Node) -> Decision:
    """Degrees against an exact multiple of pi: one angle; None unless exactly one side is in degrees."""
    p_deg, g_deg = _degrees(pred), _degrees(gold)
    if (p_deg is None) == (g_deg is None):
        return None
    degrees, other = (p_deg, gold) if p_deg is not None else (g_deg, pred)
    turns = _pi_multiple(other)
    return None if turns is None else degrees == 180 * turns


def _degrees(node: Node) -> Fraction | None:
    """The exact number of degrees of `x^\\circ`, maybe negated; None for anything else."""
    sign, node = node.unsigned
    while node.kind == "unit":
        node = node.children[0]
    value = exact(node.children[0]) if node.kind == "degree" else None
    return None if value is None else sign * value


def _pi_multiple(node: Node) -> Fraction | None:
    """q when `node` is exactly q times pi; None otherwise."""
    k, ch = node.kind, node.children
    if k == "const" and node.text == "pi":
        return Fraction(1)
    if k == "neg":
        q = _pi_multiple(ch[0])
        return None if q is None else -q
    if k == "mul":
        multiples = [c for c in ch if exact(c) is None]
        coef = [exact(c) for c in ch if exact(c) is not None]
        q = _pi_multiple(multiples[0]) if len(multiples) == 1 else None
        return None if q is None else q * math.prod(coef, start=Fraction(1))  # type: ignore[arg-type]
    if k == "div":
        q, den = _pi_multiple(ch[0]), exact(ch[1])
        return None if q is None or not den else q / den
    return None


def _same_base_powers(pred: Node, gold: Node) -> Decision:
    """a^b against a^c for one base a > 1 and positive towers: equal exactly when b = c."""
    if pred.kind != "pow" or gold.kind != "pow":
        return None
    base_p, base_g = exact(pred.children[0]), exact(gold.children[0])
    if base_p is None or base_p != base_g or base_p <= 1:
        return None
    if tower_floor(pred.children[1]) is None or tower_floor(gold.children[1]) is None:
        return None  # exponents that are not positive towers: the symbolic check
    return decide_scalar(pred.children[1], gold.children[1], 0.0, False)


def _decimal(
    pred: Node, gold: Node, p_dec: Number | None, g_dec: Number | None, rel_tol: float, approx: bool
) -> Decision:
    """One side is a decimal literal: it must be the other side's value, its cut or its rounding."""
    if p_dec is not None and g_dec is not None:
        return numbers_match(g_dec, p_dec, rel_tol)
    dec, other = (p_dec, gold) if p_dec is not None else (g_dec, pred)
    assert dec is not None
    if (other_exact := exact(other)) is not None:
        if approx:
            return rounds_to(other_exact, dec.value, dec.places)
        return numbers_match(Number(other_exact, False), dec, rel_tol)
    if unknowns(other) - {"e", "i"}:
        return False  # a number never equals an expression in unknowns
    value = approximate(other, True)
    if value is None or real_and_imaginary(value[0])[1] != 0:
        return None if value is None else False
    return _rounds(dec, value[0], rel_tol, approx)


def _rounds(dec: Number, exact_value: object, rel_tol: float, approx: bool) -> bool:
    """`dec` is the 50-digit value's cut or rounding at its own last digit (and within rel_tol)."""
    if abs(dec.places) > 30:
        return False
    scaled = scaled_fraction(exact_value, dec.places)
    written = dec.value * Fraction(10) ** dec.places
    if written.denominator != 1 or written.numerator not in rounding_candidates(scaled):
        return False
    return approx or abs(as_mp(dec.value) - exact_value) <= rel_tol * abs(exact_value)


def _complex_decimals(node: Node) -> bool:
    """a + bi with a decimal part: `0.5+0.8660254i`."""
    return has_decimal(node) and unknowns(node) == {"i"}


def _complex(pred: Node, gold: Node, rel_tol: float) -> Decision:
    """Each decimal part of a + bi held to the decimal rule against the gold's part."""
    parts = _complex_parts(pred)
    value = approximate(gold, True)
    if parts is None or value is None:
        return None
    for (dec, exact_part), target in zip(parts, real_and_imaginary(value[0])):
        if dec is not None:
            if not _rounds(dec, target, rel_tol, False):
                return False
        elif exact_part is None or refutes((as_mp(exact_part), 0), (target, 0)):
            return False if exact_part is not None else None
        elif as_mp(exact_part) != target:
            return None
    return True


def _complex_parts(node: Node) -> list[tuple[Number | None, Fraction | None]] | None:
    """[(real part), (imaginary part)], each a decimal literal or an exact rational; None otherwise."""
    terms = list(node.children) if node.kind == "add" else [node]
    real: tuple[Number | None, Fraction | None] = (None, Fraction(0))
    imag: tuple[Number | None, Fraction | None] = (None, Fraction(0))
    for term in terms:
        sign, t = term.unsigned
        coef: Node | None = None
        if t.kind == "sym" and t.text == "i":
            coef = Node("num", value=Fraction(1))
            target = "imag"
        elif t.kind == "mul" and len(t.children) == 2 and t.children[1].kind == "sym" and t.children[1].text == "i":
            coef, target = t.children[0], "imag"
        else:
            coef, target = t, "real"
        dec = decimal_literal(coef)
        val = exact(coef)
        if val is None:
            return None
        entry = (Number(sign * dec.value, True, False, dec.places) if dec else None, sign * val)
        if target == "real":
            real = entry
        else:
            imag = entry
    return [real, imag]


def decimal_hint(node: Node) -> list[int | bool] | None:
    """[numerator, denominator, is a decimal, places] of a value read as one number; None otherwise."""
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
    """A whole value written in decimals (a literal, or arithmetic that keeps its last digit); None otherwise."""
    literal = decimal_literal(node)
    if literal is not None or node.kind not in ARITHMETIC:
        return literal
    kinds = {n.kind for n in node.walk()}
    if not kinds <= ARITHMETIC or not has_decimal(node):
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
    """Sums, products with integers, quotients by powers of ten: a decimal still rounds at a digit it wrote."""
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
    sign, node = node.unsigned
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


# -- the decimal rule, on exact numbers (shared with the symbolic worker) --------------------------------------


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
    """A decimal stands for `exact` only as it, or (no finite expansion) as its cut or rounding within `rel_tol`."""
    if written == exact:
        return True
    if terminates(exact) or exact == 0:
        return False
    return rounds_to(exact, written, places) and abs(written - exact) <= Fraction(rel_tol) * abs(exact)


def rounds_to(exact: Fraction, written: Fraction, places: int) -> bool:
    """`written` is `exact` cut or rounded at its own last digit (a tie either way)."""
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
    """Exact, or a decimal standing for the other value; a lone percent sign may also be read as a hundredth."""
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
