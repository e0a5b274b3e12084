"""Sets of real numbers as unions of intervals: what an inequality (`2 \\le x < 5`, `x \\ne 3`), an interval, a
union (`\\cup`), a difference (`\\mathbb{R} \\setminus \\{0\\}`) and set-builder notation (`\\{x : x > 2\\}`) state.

`region` reads a tree into sorted, merged intervals with exact endpoints, so two spellings of one set compare equal
(`\\{x \\mid x \\ne 0\\}`, `(-\\infty, 0) \\cup (0, \\infty)`); None where an endpoint is not exact. Each is a
fact of a node (`Node.interval`, `Node.region`, `Node.infinity`, `Node.complement`), computed once.
"""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.node import FACTS, Node

INF = Node("const", text="infty")
_LOWER = {"<": ")", "<=": "]"}  # x < b: the upper bracket
_UPPER = {">": "(", ">=": "["}  # x > a: the lower bracket
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def as_interval(node: Node) -> Node | None:
    """`2 \\le x \\le 5`, `x \\ge a`, `0 < x \\le 1` (one unknown, bounds free of it) as the interval they
    state; `\\mathbb{R}` as `(-\\infty, \\infty)`. None for anything else."""
    if node.kind == "sym" and node.text == "\\mathbb{R}":
        return interval(Node("neg", (INF,)), INF, "(", ")")
    if node.kind != "rel":
        return None
    ops, ch = node.text.split(","), node.children
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
    return node.kind == "sym" and node.text not in ("e", "i") and node.text not in bound.names


def interval(low: Node, high: Node, left: str, right: str) -> Node:
    return Node("tuple" if left + right == "()" else "interval", (low, high), text=left + right)


def infinite(node: Node) -> int:
    """+1 for `\\infty`, -1 for `-\\infty`, 0 for anything else."""
    sign = 1
    while node.kind == "neg":
        sign, node = -sign, node.children[0]
    return sign if node.kind == "const" and node.text == "infty" else 0


def complement(iv: Node) -> Node | None:
    """The other half of the line beside a half-line (`(-\\infty, 2)` -> `[2, \\infty)`); None for anything else."""
    if iv.kind not in ("tuple", "interval") or len(iv.children) != 2 or len(iv.text) != 2:
        return None
    low, high = iv.children
    if infinite(low) == -1 and not infinite(high):
        return interval(high, INF, "(" if iv.text[1] == "]" else "[", ")")
    if infinite(high) == 1 and not infinite(low):
        return interval(Node("neg", (INF,)), low, "(", ")" if iv.text[0] == "[" else "]")
    return None


Bound = Fraction | float  # an exact endpoint, or +-inf
Piece = tuple[Bound, Bound, str, str]  # (low, high, left bracket, right bracket)


def region(node: Node, var: str | None = None) -> list[Piece] | None:
    """The set `node` states, as sorted disjoint intervals; None where it states none (or not exactly)."""
    pieces = _pieces(node, var)
    return None if pieces is None else _merged(pieces)


def _pieces(node: Node, var: str | None) -> list[Piece] | None:
    k, ch = node.kind, node.children
    if k == "setbuilder":
        if len(ch) > 2 and not (ch[2].kind == "sym" and ch[2].text == "\\mathbb{R}"):
            return None
        return _pieces(ch[1], ch[0].text)
    if k == "conn" or (k == "list" and node.text == "or"):
        ops = set(node.text.split(","))
        if ops <= {"cup", "or"}:
            parts = [_pieces(c, var) for c in ch]
            return None if any(p is None for p in parts) else [q for p in parts for q in p]  # type: ignore[union-attr]
        if ops == {"setminus"} and len(ch) == 2 and ch[1].kind == "set":
            base, points = _pieces(ch[0], var), [c.exact for c in ch[1].children]
            if base is None or any(p is None for p in points):
                return None
            return _without(base, points)  # type: ignore[arg-type]
        return None
    if k == "rel" and node.text == "!=" and len(ch) == 2 and _names_var(ch[0], var):
        p = ch[1].exact
        return None if p is None else _without([(-_INFINITY, _INFINITY, "(", ")")], [p])
    if k == "rel" and var is not None and not all(_names_var(c, var) or var not in c.names for c in ch):
        return None
    iv = as_interval(node) if k in ("rel", "sym") else node if k in ("tuple", "interval") and len(ch) == 2 else None
    if iv is None:
        return None
    low, high = _bound(iv.children[0]), _bound(iv.children[1])
    return None if low is None or high is None else [(low, high, iv.text[0], iv.text[1])]


def _names_var(node: Node, var: str | None) -> bool:
    return node.kind == "sym" and (var is None or node.text == var)


_INFINITY = float("inf")


def _bound(node: Node) -> Bound | None:
    side = infinite(node)
    return side * _INFINITY if side else node.exact


def _without(pieces: list[Piece], points: list[Fraction]) -> list[Piece]:
    """The intervals less finitely many points (each splits the interval it lies inside)."""
    for p in points:
        out: list[Piece] = []
        for low, high, left, right in pieces:
            if p == low and left == "[":
                out.append((low, high, "(", right))
            elif p == high and right == "]":
                out.append((low, high, left, ")"))
            elif low < p < high:
                out += [(low, p, left, ")"), (p, high, "(", right)]
            else:
                out.append((low, high, left, right))
        pieces = out
    return pieces


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


FACTS.update(interval=as_interval, region=region, infinity=infinite, complement=complement)
