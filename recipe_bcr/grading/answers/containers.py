"""Two values compared whole: units first, then containers (a tuple only as a tuple, an interval only
as the same interval, a matrix by its shape, a set or bare list unordered with multiplicity, `\\pm a` as its two
values), then single values (recipe_bcr.grading.answers.scalars)."""

from __future__ import annotations

from itertools import product

from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.scalars import Decision, decide_scalar
from recipe_bcr.grading.answers.statements import is_open
from recipe_bcr.grading.answers.units import unit_quantity
from recipe_bcr.grading.answers.value import exact

_MAX_ITEMS = 64


_MAX_SIGNS = 4  # a tuple with more \\pm signs than this stands for too many tuples to list


def without_units(node: Node) -> Node:
    while node.kind in ("unit", "words") and node.children:
        node = node.children[0]
    return node


def _unwrap_singleton(node: Node) -> Node:
    if node.kind in ("set", "list1") and len(node.children) == 1:
        return node.children[0]
    return node


def same_tree(a: Node, b: Node) -> bool:
    """The same tree, literal for literal (where it is written aside)."""
    if (a.kind, a.text, a.value, a.places, len(a.children)) != (b.kind, b.text, b.value, b.places, len(b.children)):
        return False
    return all(same_tree(x, y) for x, y in zip(a.children, b.children))


def _in_units(pred: Node, gold: Node) -> Decision:
    """Both answers name a unit, and not the same one: other quantities are never the same answer (`5 m^2`,
    `5 cm^2`); one quantity in two units is compared scaled, exactly (`0.5 m` is `50 cm`). None leaves it to the value."""
    (p_sign, pred), (g_sign, gold) = pred.unsigned, gold.unsigned
    if pred.kind != "unit" or gold.kind != "unit" or pred.text == gold.text:
        return None
    p, g = unit_quantity(pred), unit_quantity(gold)
    if p is None or g is None or p == g:
        return None
    if p.dims != g.dims:
        return False
    pv, gv = exact(pred.children[0]), exact(gold.children[0])
    return pv is not None and gv is not None and p_sign * pv * p.scale == g_sign * gv * g.scale


def decide(pred: Node, gold: Node, rel_tol: float, top: bool = False, approx: bool = False) -> Decision:
    if (in_units := _in_units(pred, gold)) is not None:
        return in_units
    pred, gold = without_units(pred), without_units(gold)
    if same_tree(pred, gold) and not approx:
        return True
    if top and (pred.kind in ("set", "list1")) != (gold.kind in ("set", "list1")):
        pred, gold = _unwrap_singleton(pred), _unwrap_singleton(gold)  # \{5\} is 5 only as the whole answer
    if pred.kind in ("ellipsis",) or gold.kind in ("ellipsis",):
        return None
    pred, gold = plus_minus(pred), plus_minus(gold)
    if (is_set_union(pred) and is_scalar_value(gold)) or (is_set_union(gold) and is_scalar_value(pred)):
        return False  # a number is never a union of sets
    if _inner_container(pred) or _inner_container(gold):
        return None  # arithmetic on matrices or tuples: the symbolic check
    p_coll, g_coll = collection_kind(pred), collection_kind(gold)
    if p_coll is not None or g_coll is not None:
        if p_coll is None or g_coll is None or p_coll != g_coll:
            return False
        return _elements(pred, gold, p_coll, rel_tol)
    if pred.kind == "conn" or gold.kind == "conn":
        return None
    return decide_scalar(pred, gold, rel_tol, approx)


def is_set_union(node: Node) -> bool:
    return node.kind == "conn" and set(node.ops) <= {"cup", "cap", "setminus"}


def is_scalar_value(node: Node) -> bool:
    """A single value without unknowns (a number, `8\\pi`), not a container or a connective."""
    return not is_open(node) and all(
        n.kind not in ("conn", "rel", "list", "set", "tuple", "interval", "matrix") for n in node.walk()
    )


def plus_minus(node: Node) -> Node:
    """`\\pm a` is the set {-a, a}; `a \\pm b` is {a - b, a + b}."""
    if node.kind == "pm":
        a = node.children[0]
        return Node("set", (Node("neg", (a,), text="-"), a), text="{}")
    if node.kind == "add" and len(node.children) == 2 and node.children[1].kind == "pm":
        a, b = node.children[0], node.children[1].children[0]
        return Node("set", (Node("add", (a, Node("neg", (b,), text="-"))), Node("add", (a, b))), text="{}")
    if node.kind == "tuple" and sum(c.kind in ("pm", "add") for c in node.children) <= _MAX_SIGNS:
        options = [plus_minus(c) for c in node.children]  # (\\pm 1, 2) is the two pairs (-1, 2) and (1, 2)
        if any(o is not c for o, c in zip(options, node.children)):
            choices = [o.children if o is not c else (c,) for o, c in zip(options, node.children)]
            return Node("set", tuple(Node("tuple", combo, node.text) for combo in product(*choices)), text="{}")
    return node


def _inner_container(node: Node) -> bool:
    """A scalar-looking node (a sum, a product) with a container inside it."""
    if collection_kind(node) is not None:
        return False
    return any(collection_kind(n) is not None for n in node.walk())


def collection_kind(node: Node) -> str | None:
    """The kind of container, for comparison: "ordered" tuples, intervals by their brackets, matrices
    by shape, "bag" for sets and bare lists; None for a scalar."""
    if node.kind == "tuple":
        return "tuple" + node.text
    if node.kind == "interval":
        return "interval" + node.text
    if node.kind == "matrix":
        return "matrix" + node.text
    if node.kind in ("set", "list", "list1"):
        return "bag"
    return None


def _elements(pred: Node, gold: Node, kind: str, rel_tol: float) -> Decision:
    ps = _flat(pred)
    gs = _flat(gold)
    if len(ps) != len(gs):
        return False
    if len(ps) > _MAX_ITEMS:
        return None
    if kind != "bag":
        verdicts = [decide(p, g, rel_tol) for p, g in zip(ps, gs)]
        if any(v is False for v in verdicts):
            return False
        return True if all(verdicts) else None
    return _bag(ps, gs, rel_tol)


def _flat(node: Node) -> list[Node]:
    """The elements of a container; in a set or list, `\\pm a` and `b \\pm a` are two elements each."""
    if node.kind == "matrix":
        return [c for row in node.children for c in row.children]
    if node.kind in ("set", "list", "list1"):
        return [e for c in node.children for e in (plus_minus(c).children if plus_minus(c) is not c else (c,))]
    return list(node.children)


def _bag(ps: list[Node], gs: list[Node], rel_tol: float) -> Decision:
    """Unordered with multiplicity: every gold element matched by its own predicted element."""
    table = [[decide(p, g, rel_tol) for g in gs] for p in ps]
    free = set(range(len(gs)))
    undecided = False
    for row in table:
        hit = next((j for j in sorted(free) if row[j] is True), None)
        if hit is None:
            maybe = next((j for j in sorted(free) if row[j] is None), None)
            if maybe is None:
                return False
            undecided = True
            free.discard(maybe)
        else:
            free.discard(hit)
    return None if undecided else True
