"""Sets of reals as sorted, merged unions of intervals with exact endpoints, so two spellings of a set are equal."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import Fact, Node
from recipe_bcr.grading.answers.poly import polynomial
from recipe_bcr.grading.answers.value import exact, unknowns

INF = Node("const", text="infty")
_LOWER = {"<": ")", "<=": "]"}  # x < b: the upper bracket
_UPPER = {">": "(", ">=": "["}  # x > a: the lower bracket
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def as_interval(node: Node) -> Node | None:
    """An inequality in one unknown as the interval it states (`\\mathbb{R}` too); None otherwise."""
    if node.kind == "sym" and node.text == "\\mathbb{R}":
        return interval(Node("neg", (INF,)), INF, "(", ")")
    if node.kind != "rel":
        return None
    ops, ch = node.ops, node.children
    if any(op not in _FLIP for op in ops):
        return None
    if len(ch) == 2:
        var_left = _variable(ch[0], ch[1])
        if not var_left and not _variable(ch[1], ch[0]):
            return None
        op, bound = (ops[0], ch[1]) if var_left else (_FLIP[ops[0]], ch[0])
        if op in _LOWER:
            return interval(Node("neg", (INF,)), bound, "(", _LOWER[op])
        return interval(bound, INF, _UPPER[op], ")")
    if len(ch) == 3 and _variable(ch[1], ch[0]) and _variable(ch[1], ch[2]):
        if all(op in _LOWER for op in ops):
            return interval(ch[0], ch[2], _UPPER[_FLIP[ops[0]]], _LOWER[ops[1]])
        if all(op in _UPPER for op in ops):
            return interval(ch[2], ch[0], _UPPER[ops[1]], _LOWER[_FLIP[ops[0]]])
    return None


def _variable(node: Node, bound: Node) -> bool:
    return node.kind == "sym" and node.text not in ("e", "i") and node.text not in unknowns(bound)


def interval(low: Node, high: Node, left: str, right: str) -> Node:
    return Node("tuple" if left + right == "()" else "interval", (low, high), text=left + right)


def complement(iv: Node) -> Node | None:
    """The other half of the line beside a half-line (`(-\\infty, 2)` -> `[2, \\infty)`); None for anything else."""
    if iv.kind not in ("tuple", "interval") or len(iv.children) != 2 or len(iv.text) != 2:
        return None
    low, high = iv.children
    if low.infinite == -1 and not high.infinite:
        return interval(high, INF, "(" if iv.text[1] == "]" else "[", ")")
    if high.infinite == 1 and not low.infinite:
        return interval(Node("neg", (INF,)), low, "(", ")" if iv.text[0] == "[" else "]")
    return None


Bound = Fraction | float  # an exact endpoint, or +-inf
Piece = tuple[Bound, Bound, str, str]  # (low, high, left bracket, right bracket)


def states_a_region(node: Node) -> bool:
    """A set-builder, a set difference, a union, `\\mathbb{R}`, `x \\in` a set, or `|x - a| < b`."""
    if node.kind == "rel":
        inequality = node.text in _FLIP and any(c.kind == "abs" for c in node.children)
        return inequality or (node.text == "in" and states_a_region(node.children[-1]))
    return (
        node.kind == "setbuilder"
        or (node.kind == "sym" and node.text == "\\mathbb{R}")
        or (node.kind == "conn" and bool({"setminus", "cup"} & set(node.ops)))
        or _set_minus_set(node)
    )


def _set_minus_set(node: Node) -> bool:
    """`A - B` between two sets: a set difference, never a subtraction of vectors."""
    if node.kind != "add" or len(node.children) != 2 or node.children[1].kind != "neg":
        return False
    first, second = node.children[0], node.children[1].children[0]
    reals = first.kind == "sym" and first.text == "\\mathbb{R}"
    return (reals or first.kind in ("set", "interval")) and (second.kind in ("set", "interval") or reals)


def _region(node: Node) -> list[Piece] | None:
    pieces = _pieces(node, None)
    return None if pieces is None or len(pieces) > _MAX_PIECES else _merged(pieces)


_MAX_PIECES = 64  # intersections pair pieces: a bound keeps them to milliseconds
_MAX_POINTS = 1000  # integers a set-builder over Z may list
_DOMAINS = frozenset(("\\mathbb{R}", "\\mathbb{Z}", "\\mathbb{N}"))
_INFINITY = float("inf")
_LINE: list[Piece] = [(-_INFINITY, _INFINITY, "(", ")")]


def _pieces(node: Node, var: str | None) -> list[Piece] | None:  # noqa: C901 - one case per way to state a set
    k, ch = node.kind, node.children
    if k == "setbuilder":
        domain = ch[2].text if len(ch) > 2 and ch[2].kind == "sym" else None if len(ch) == 2 else ""
        if domain is not None and domain not in _DOMAINS:
            return None
        pieces = _pieces(ch[1], ch[0].text)
        return pieces if pieces is None or domain in (None, "\\mathbb{R}") else _integers(pieces, domain)
    if k == "conn" or (k == "list" and node.text == "or"):
        ops = set(node.ops) or {node.text}
        parts = [_pieces(c, var) for c in ch]
        if any(p is None or len(p) > _MAX_PIECES for p in parts):
            return None
        if ops <= {"cup", "or"}:
            return [q for p in parts for q in p]  # type: ignore[union-attr]
        if ops == {"setminus"} and len(ch) == 2:
            return _intersect(parts[0], _complement(parts[1]))  # type: ignore[arg-type]
        return None
    if _set_minus_set(node):
        base, removed = _pieces(ch[0], var), _pieces(ch[1].children[0], var)
        return None if base is None or removed is None else _intersect(base, _complement(removed))
    if k == "set":  # finitely many exact points
        points = [exact(c) for c in ch]
        return None if any(p is None for p in points) else [(p, p, "[", "]") for p in points]  # type: ignore[misc]
    if k == "rel" and len(ch) == 2 and node.text == "in" and _names_var(ch[0], var):
        return _pieces(ch[1], ch[0].text)  # x \in (1, 2) \cup (3, 4)
    if k == "rel" and node.text == "!=" and len(ch) == 2 and _names_var(ch[0], var):
        p = exact(ch[1])
        return None if p is None else _intersect(_LINE, _complement([(p, p, "[", "]")]))
    if k == "rel" and len(ch) == 2 and node.text in _FLIP and "abs" in (ch[0].kind, ch[1].kind):
        return _absolute(node, var)
    if k == "rel" and var is not None and not all(_names_var(c, var) or var not in unknowns(c) for c in ch):
        return None
    iv = as_interval(node) if k in ("rel", "sym") else node if k in ("tuple", "interval") and len(ch) == 2 else None
    if iv is None:
        return None
    low, high = _bound(iv.children[0]), _bound(iv.children[1])
    return None if low is None or high is None else [(low, high, iv.text[0], iv.text[1])]


def _absolute(node: Node, var: str | None) -> list[Piece] | None:
    """`|a x + b| < c` (any of < <= > >=, either side): the interval or the two half-lines it states."""
    op, (left, right) = node.text, node.children
    if left.kind != "abs":
        op, left, right = _FLIP[op], right, left
    inner, c = polynomial(left.children[0]), exact(right)
    names = {n for m in inner or () for n, _ in m}
    if inner is None or c is None or len(names) != 1 or (var is not None and names != {var}):
        return None
    (name,) = names
    a, b = inner.get(((name, 1),), Fraction(0)), inner.get((), Fraction(0))
    if a == 0 or any(m not in ((), ((name, 1),)) for m in inner):
        return None  # not linear in its one unknown
    if c < 0:
        return [] if op in _LOWER else _LINE
    low, high = sorted(((-c - b) / a, (c - b) / a))
    closed = (op in ("<=", ">=")) == (op in _LOWER)  # |x| <= 1 holds its ends, |x| > 1 leaves them to the hole
    inside = [(low, high, "[" if closed else "(", "]" if closed else ")")]
    return inside if op in _LOWER else _complement(inside)


def _integers(pieces: list[Piece], domain: str) -> list[Piece] | None:
    """The integers or naturals in a set of reals; None when too many, or when N's 0 is in question."""
    points: list[Piece] = []
    for low, high, left, right in _merged(pieces):
        if domain == "\\mathbb{N}":
            if low < 0 < high or low == 0 and left == "[" or high == 0 and right == "]":
                return None
            low, left = max(low, 0), "(" if low <= 0 else left
        if abs(low) == _INFINITY or abs(high) == _INFINITY or high - low > _MAX_POINTS:
            return None
        first, last = math.ceil(low), math.floor(high)
        first += first == low and left == "("
        last -= last == high and right == ")"
        points += [(Fraction(n), Fraction(n), "[", "]") for n in range(first, last + 1)]
        if len(points) > _MAX_POINTS:
            return None
    return points


def _names_var(node: Node, var: str | None) -> bool:
    return node.kind == "sym" and (var is None or node.text == var)


def _bound(node: Node) -> Bound | None:
    side = node.infinite
    return side * _INFINITY if side else exact(node)


def _complement(pieces: list[Piece]) -> list[Piece]:
    """The reals not in `pieces`."""
    out: list[Piece] = []
    low: Bound = -_INFINITY
    left = "("
    for start, end, opens, closes in _merged(pieces):
        out.append((low, start, left, ")" if opens == "[" else "]"))
        low, left = end, "(" if closes == "]" else "["
    out.append((low, _INFINITY, left, ")"))
    return _merged(out)


def _intersect(first: list[Piece], second: list[Piece]) -> list[Piece]:
    """The reals in both."""
    out: list[Piece] = []
    for la, ha, l1, r1 in first:
        for lb, hb, l2, r2 in second:
            low, high = max(la, lb), min(ha, hb)
            left = "(" if (la == low and l1 == "(") or (lb == low and l2 == "(") else "["
            right = ")" if (ha == high and r1 == ")") or (hb == high and r2 == ")") else "]"
            out.append((low, high, left, right))
    return _merged(out)


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Sorted, with overlapping or touching intervals joined and empty ones dropped."""
    live = [q for q in pieces if q[0] < q[1] or (q[0] == q[1] and q[2] == "[" and q[3] == "]")]
    live.sort(key=lambda q: (q[0], q[2] == "("))
    out: list[Piece] = []
    for low, high, left, right in live:
        if out:
            p_low, p_high, p_left, p_right = out[-1]
            if low < p_high or (low == p_high and (p_right == "]" or left == "[")):
                if high > p_high or (high == p_high and right == "]"):
                    out[-1] = (p_low, high, p_left, right)
                continue
        out.append((low, high, left, right))
    return out


@dataclass(frozen=True)
class Shape:
    """The sets of reals two answers state, read once before the comparison."""

    regions: tuple[list[Piece] | None, list[Piece] | None] | None  # each side's set, where either states one
    intervals: tuple[Node, Node] | None  # an interval against an inequality (`[2, 5]`, `2 \le x \le 5`): both


def read_regions(pred: Node, gold: Node, target: Node) -> Shape:
    """Each side's set (where either states one); the answer and the gold's value as intervals (one an inequality)."""
    regions = (region(pred), region(gold)) if states_a_region(pred) or states_a_region(gold) else None
    p_iv, g_iv = as_interval(pred), as_interval(target)
    if p_iv is None and g_iv is None:
        return Shape(regions, None)
    p_iv = p_iv or (pred if pred.kind in ("interval", "tuple") and len(pred.children) == 2 else None)
    g_iv = g_iv or (target if target.kind in ("interval", "tuple") and len(target.children) == 2 else None)
    if p_iv is None or g_iv is None or (pred.kind == "rel" and target.kind == "rel"):
        return Shape(regions, None)
    return Shape(regions, (p_iv, g_iv))


region = Fact("region", _region)  # the set a node states as sorted disjoint intervals; None where none (or not exact)
