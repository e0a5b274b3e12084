"""Polynomials with rational coefficients, expanded exactly (`(x+3)^2` is `x^2+6x+9`); anything else is None."""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.node import Fact, Node
from recipe_bcr.grading.answers.value import exact

Monomial = tuple[tuple[str, int], ...]  # sorted (unknown, power) pairs
Poly = dict[Monomial, Fraction]
MAX_TERMS = 400
MAX_POWER = 32


class _TooBig(Exception): ...


def _polynomial(node: Node) -> Poly | None:
    try:
        return _poly(node)
    except _TooBig:
        return None


def _poly(node: Node) -> Poly | None:
    k, ch = node.kind, node.children
    value = exact(node) if k != "sym" else None
    if value is not None:
        return {(): value} if value else {}
    if k == "sym":
        if node.text in ("e", "i"):
            return None  # constants, not unknowns
        return {((node.text, 1),): Fraction(1)}
    if k in ("unit", "words"):
        return polynomial(ch[0])
    if k == "neg":
        p = polynomial(ch[0])
        return None if p is None else {m: -c for m, c in p.items()}
    if k == "mul" and any(a.kind == "sym" and b.kind == "add" for a, b in zip(ch, ch[1:])):
        return None  # f(x + 1) may be a function's value, not a product: the symbolic check reads it
    if k in ("add", "mul"):
        parts = [polynomial(c) for c in ch]
        if any(p is None for p in parts):
            return None
        out: Poly = parts[0]  # type: ignore[assignment]
        for p in parts[1:]:
            out = _add(out, p) if k == "add" else _mul(out, p)  # type: ignore[arg-type]
        return out
    if k == "div":
        num, den = polynomial(ch[0]), exact(ch[1])
        if num is None or not den:
            return None
        return {m: c / den for m, c in num.items()}
    if k == "pow":
        base, power = polynomial(ch[0]), exact(ch[1])
        if base is None or power is None or power.denominator != 1 or not 0 <= power <= MAX_POWER:
            return None
        out = {(): Fraction(1)}
        for _ in range(int(power)):
            out = _mul(out, base)
        return out
    return None


def _add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        total = out.get(m, Fraction(0)) + c
        if total:
            out[m] = total
        else:
            out.pop(m, None)
    return out


def _mul(a: Poly, b: Poly) -> Poly:
    if len(a) * len(b) > MAX_TERMS * 4:
        raise _TooBig
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            powers: dict[str, int] = dict(ma)
            for name, e in mb:
                powers[name] = powers.get(name, 0) + e
            m = tuple(sorted(powers.items()))
            total = out.get(m, Fraction(0)) + ca * cb
            if total:
                out[m] = total
            else:
                out.pop(m, None)
    if len(out) > MAX_TERMS:
        raise _TooBig
    return out


def same_polynomial(pred: Node, gold: Node) -> bool | None:
    """Both polynomials: equal exactly when their expansions are (the symbolic difference is zero or it is not)."""
    p_poly, g_poly = polynomial(pred), polynomial(gold)
    return None if p_poly is None or g_poly is None else p_poly == g_poly


def same_equation(pred: Node, gold: Node) -> bool | None:
    """Two polynomial equations are one when P - Q are proportional; two linear ones that are not differ."""
    sides = []
    for node in (pred, gold):
        if node.kind != "rel" or node.text != "=":
            return None
        lhs, rhs = node.children
        poly = polynomial(Node("add", (lhs, Node("neg", (rhs,)))))
        if not poly or all(not m for m in poly):
            return None  # not a polynomial, or no unknown: a statement of a value
        sides.append(poly)
    p, g = sides
    m = next(iter(g))
    if m in p:
        ratio = p[m] / g[m]
        if p.keys() == g.keys() and all(p[k] == ratio * g[k] for k in g):
            return True
    degree = max(sum(e for _, e in m) for poly in sides for m in poly)
    return False if degree <= 1 else None


polynomial = Fact("poly", _polynomial)  # the expanded polynomial, or None (not one, or too large); kept on the node
