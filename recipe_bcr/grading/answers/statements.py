"""What an answer states: a label and its value, a value claimed only approximately, a definition."""

from __future__ import annotations

from dataclasses import dataclass

from recipe_bcr.grading.answers.node import Node, substitute
from recipe_bcr.grading.answers.value import unknowns
from recipe_bcr.grading.answers.words import CONNECTIVE_WORDS


def is_label(node: Node) -> bool:
    """A name a value can be assigned to (`x`, `P(A)`, `f(2)`, `|AB|`, `(p, q)`), never arithmetic outside brackets."""
    k, ch = node.kind, node.children
    if any(
        n.kind == "text" and not all(w.isalpha() and w not in CONNECTIVE_WORDS for w in n.text.split())
        for n in node.walk()
    ):
        return False  # words in a label name it (P(\\text{win})); digits or "or" in them would hide a second value
    if k in ("sym", "text", "abs"):
        return True
    if k == "tuple":
        return all(is_label(c) for c in ch)
    if k == "pow":  # f^{-1}, x^*: a mark on a name
        mark = ch[1]
        return is_label(ch[0]) and (
            (mark.kind == "sym" and mark.text == "*") or (mark.kind == "neg" and mark.children[0].value == 1)
        )
    if k in ("func", "div"):  # \\frac{V_o(s)}{V_i(s)}, \\frac{dy}{dx}: a ratio of names names one value
        return all(is_label(c) for c in ch)
    if k == "mul":
        return (
            ch[0].kind != "mul"
            and is_label(ch[0])
            and all(c.paren or c.kind in ("sym", "text", "tuple") for c in ch[1:])
        )
    return False


def stated_values(node: Node) -> list[tuple[Node, bool]] | None:
    """The values a relation states, each with True where only claimed approximately; None for no statement."""
    ops = ("=",) if node.ops == ("in",) else node.ops  # x \in [-2, 7] states the interval
    if any(op not in ("=", "~") for op in ops):
        return None
    parts, first = list(node.children), node.children[0]
    while ops and ops[0] == "=" and len(parts) > 1 and is_label(parts[0]):  # G(s) = \\frac{Y(s)}{X(s)} = ...
        parts, ops = parts[1:], ops[1:]
    stated = [(parts[0], False)] + [(part, op == "~") for op, part in zip(ops, parts[1:])]
    if all(approx for _, approx in stated[1:]) and len(stated) > 1 and ops and ops[0] == "~":
        return stated  # exact \approx decimal
    if len(stated) > 1 and not is_label(first) and "~" not in ops and any(is_open(p) for p, _ in stated):
        return None  # 2x = 6, x + y = 1: an equation between values, not a statement of one (1/3 = 0.\overline{3} is)
    return stated


def statement_value(gold: Node) -> Node | None:
    """A gold `label = value`'s value; a gold equation between values is no statement."""
    ops = gold.ops
    if not ops or ops[-1] not in ("=", "in") or any(op != "ratio" for op in ops[:-1]):
        return None
    sides = gold.children[:-1]  # `A:B = 1` names a ratio of names
    names_only = all(n.kind in ("sym", "div", "mul", "abs", "tuple") for side in sides for n in side.walk())
    return gold.children[-1] if names_only or (len(sides) == 1 and is_label(sides[0])) else None


def is_open(node: Node) -> bool:
    """Written in unknowns (e, i and \\pi are constants)."""
    return bool(unknowns(node) - {"e", "i"})


def claims(pred: Node) -> Node:
    """What an answer claims: without a leading label (`P(\\text{win}) = ...` may name its event in words)."""
    if pred.kind == "rel" and pred.ops[0] in ("=", "in"):
        first = pred.children[0]
        if is_label(first):
            return Node("list", pred.children[1:])
    return pred


def renamed_variable(pred: Node, gold: Node) -> Node:
    """`f(z) = z` against `f(x) = x`: the answer's bound variable renamed to the gold's."""
    p_var, g_var = _defined_variable(pred), _defined_variable(gold)
    if p_var is None or g_var is None or p_var == g_var or g_var in unknowns(pred):
        return pred
    return substitute(pred, p_var, Node("sym", text=g_var))


def _defined_variable(node: Node) -> str | None:
    """`x` in `f(x) = ...`: the one name a function of one argument is defined in; None for anything else."""
    if node.kind != "rel" or node.text != "=" or len(node.children) != 2:
        return None
    head = node.children[0]
    if head.kind != "mul" or len(head.children) != 2 or head.children[0].kind != "sym":
        return None
    arg = head.children[1]
    return arg.text if arg.kind == "sym" and arg.paren and arg.text not in ("e", "i") else None


def stated_elements(node: Node) -> Node | None:
    """A list or set whose elements may be `label = value` statements, with the values in their place."""
    out = []
    for child in node.children:
        if child.kind == "rel":
            stated = stated_values(child)
            if stated is None or len(stated) != 1 or stated[0][1]:
                return None
            child = stated[0][0]
        out.append(child)
    return Node(node.kind, tuple(out), node.text, span=node.span)


@dataclass(frozen=True)
class Said:
    """What two answers state, read once before the comparison."""

    pred: Node  # the answer, its function's variable renamed to the gold's
    claimed: Node  # the answer without a leading label
    value: Node | None  # the gold's statement's value (`k = 1`: 1)
    target: Node  # what the answer must equal: that value, else the gold
    pred_value: Node | None  # the answer's own statement's value
    open_value: bool  # the gold's value is written in unknowns
    stated: list[tuple[Node, bool]] | None  # the values a relation answer states (see stated_values)
    elements: Node | None  # a list or set answer with its statements' values in place (see stated_elements)


def read_statements(pred: Node, gold: Node) -> Said:
    pred = renamed_variable(pred, gold)
    value = statement_value(gold)
    return Said(
        pred,
        claims(pred),
        value,
        gold if value is None else value,
        statement_value(pred),
        value is not None and is_open(value),
        stated_values(pred) if pred.kind == "rel" else None,
        stated_elements(pred) if pred.kind in ("list", "set") else None,
    )
