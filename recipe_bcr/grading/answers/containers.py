"""The rule for the kinds of two answers, after the policies: hedges, relations, the values an answer states,
then two values compared whole (units, containers), every pair of single values in one call to scalars."""

from __future__ import annotations

from itertools import product
from typing import Any

from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.scalars import Decision, decide_scalars
from recipe_bcr.grading.answers.si import unit_quantity
from recipe_bcr.grading.answers.statements import Said, is_open
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


def _in_units(pred: Node, gold: Node) -> Decision:
    """Two different units: other quantities are never one answer; one quantity compares scaled (`0.5 m`, `50 cm`)."""
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


def settle(pred: Node, said: Said, rel_tol: float) -> Decision:
    """The rule for the kinds of the two trees, once the policies have passed."""
    gold = plus_minus(said.target)  # a gold \\pm 3 is the list -3, 3 (`-3 \\text{ or } 3`)
    extra = _hedges(said.claimed, gold)
    if extra - {"relation", "approx"}:
        return False
    if gold.kind == "rel":
        return _against_relation(pred, gold)
    if any(n.kind == "rel" for n in gold.walk()):
        return None  # relations inside a gold collection (p = 5, q = 2; ...): the symbolic check
    if pred.kind == "rel":
        return _every_stated_value(said.stated, gold, rel_tol)
    if gold.kind in ("list", "set") and pred.kind in ("list", "set"):
        pred = said.elements  # x = 1 \text{ or } x = 2 states the elements 1 and 2
        if pred is None:
            return False
        extra = _families(pred) - _families(gold)
    if "relation" in extra or "approx" in extra:
        return False  # a relation inside a container or bracket: (3 \approx 5), \{x > 2\}
    return decide(pred, gold, rel_tol, top=True)


def decide(pred: Node, gold: Node, rel_tol: float, top: bool = False, approx: bool = False) -> Decision:
    """Two values compared whole; every pair of single values reached is judged in one call to scalars."""
    leaves: list[tuple[Node, Node, bool]] = []
    plan = _plan(pred, gold, top, approx, leaves)
    return _settled(plan, decide_scalars(leaves, rel_tol) if leaves else [])


Plan = Decision | tuple[str, Any]  # a verdict, or ("leaf", index), ("ordered", plans), ("bag", rows of plans)


def _plan(pred: Node, gold: Node, top: bool, approx: bool, leaves: list[tuple[Node, Node, bool]]) -> Plan:
    if (in_units := _in_units(pred, gold)) is not None:
        return in_units
    pred, gold = without_units(pred), without_units(gold)
    if pred.same(gold) and not approx:
        return True
    if top and (pred.kind in ("set", "list1")) != (gold.kind in ("set", "list1")):
        pred, gold = _unwrap_singleton(pred), _unwrap_singleton(gold)  # \\{5\\} is 5 only as the whole answer
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
        ps, gs = _flat(pred), _flat(gold)
        if len(ps) != len(gs):
            return False
        if len(ps) > _MAX_ITEMS:
            return None
        if p_coll != "bag":
            return "ordered", [_plan(p, g, False, False, leaves) for p, g in zip(ps, gs)]
        return "bag", [[_plan(p, g, False, False, leaves) for g in gs] for p in ps]
    if pred.kind == "conn" or gold.kind == "conn":
        return None
    leaves.append((pred, gold, approx))
    return "leaf", len(leaves) - 1


def _settled(plan: Plan, verdicts: list[Decision]) -> Decision:
    """A plan's verdict: in order, every element; a bag (with multiplicity), each gold element matched once."""
    if not isinstance(plan, tuple):
        return plan
    kind, parts = plan
    if kind == "leaf":
        return verdicts[parts]
    if kind == "ordered":
        each = [_settled(p, verdicts) for p in parts]
        if any(v is False for v in each):
            return False
        return True if all(v is True for v in each) else None
    free = set(range(len(parts[0]) if parts else 0))
    undecided = False
    for row in ([_settled(p, verdicts) for p in row] for row in parts):
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
    """Tuples and intervals by their brackets, matrices by shape, "bag" for sets and lists; None for a scalar."""
    if node.kind == "tuple":
        return "tuple" + node.text
    if node.kind == "interval":
        return "interval" + node.text
    if node.kind == "matrix":
        return "matrix" + node.text
    if node.kind in ("set", "list", "list1"):
        return "bag"
    return None


def _flat(node: Node) -> list[Node]:
    """The elements of a container; in a set or list, `\\pm a` and `b \\pm a` are two elements each."""
    if node.kind == "matrix":
        return [c for row in node.children for c in row.children]
    if node.kind in ("set", "list", "list1"):
        return [e for c in node.children for e in (plus_minus(c).children if plus_minus(c) is not c else (c,))]
    return list(node.children)


def _families(node: Node) -> set[str]:
    """Connective families used anywhere in the tree, and "relation" for a relation sign."""
    out: set[str] = set()
    for n in _outside_bounds(node):
        if n.kind == "conn":
            out.update(n.ops)
        elif n.kind == "rel":
            out.update("approx" if op == "~" else "relation" for op in n.ops)
        elif n.kind == "pm":
            out.add("pm")
        elif n.kind == "list" and ("or" in n.text or "and" in n.text):
            out.add("words")
    return out


def _outside_bounds(node: Node):  # noqa: ANN202 - a generator of Nodes
    """Every node but the index of a sum or product (`k = 1` under `\\sum` is no relation the answer states)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children if n.kind != "bigop" else (n.children[0], *n.children[1].children[1:])))


def _hedges(claimed: Node, gold: Node) -> set[str]:
    """The connective families the answer uses and the gold does not (but `\\pm` against a list, and the like)."""
    extra = _families(claimed) - _families(gold)
    if gold.kind in ("list", "set") and len(gold.children) > 1:
        extra.discard("pm")  # \pm 3 is the list -3, 3
    if "relation" in _families(gold):
        extra -= {"cup", "cap"}  # an interval union may answer an inequality gold
    if gold.kind in ("list", "set"):
        extra.discard("words")
    return extra


def _against_relation(pred: Node, gold: Node) -> Decision:
    """A relation gold is never answered by its right side; another relation goes to the symbolic check."""
    inequality = any(op in ("<", ">", "<=", ">=") for op in gold.ops)
    if pred.kind == "rel" or (inequality and (collection_kind(pred) or "").startswith(("tuple", "interval"))):
        return None
    return None if inequality and pred.kind == "conn" else False


def _every_stated_value(stated: list[tuple[Node, bool]] | None, gold: Node, rel_tol: float) -> Decision:
    """`x = 5`, `f(2) = 3 = \\frac{6}{2}`: every value the answer states must be the gold's."""
    if stated is None:
        return False
    verdicts = [decide(p, gold, rel_tol, top=True, approx=a) for p, a in stated]
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None
