"""The rules of verification as checks on two answer trees (recipe_bcr.grading.answers.tree).

`judge` returns True or False when the trees decide, and None when only the symbolic check can
(an equality that holds to 50 digits but is not exact, an equation, an interval union). Rules:
  * structure: a tuple is only a tuple, an interval only the same interval (or the inequality that
    states it: `2 \\le x \\le 5`, `x \\ge a`, `\\mathbb{R}`), a matrix only a matrix of its shape, a set
    or a bare list an unordered collection with multiplicity (`\\pm a` is `-a, a`); a one-element set
    (or bracket) is unwrapped only at the top level of an answer, once;
  * a relation or equation gold is answered only by a relation or equation (never by its right
    side; polynomial equations are the same when their differences are proportional); `label = value
    [= value]` and a chain of closed values answer a value gold with every stated value, `a \\approx b`
    with `a` exact and `b` a rounding of it;
  * connectives (or, and, implies, \\cup, ...) the gold does not use make a hedge;
  * prose or words in a mathematical answer make it wrong (units are not words: answer_words);
  * decimals: a decimal that is a whole value (the answer, an element of a container, a part of a
    complex number, after \\approx; also sums and products of decimals with a finite decimal value) may stand for an exact value only as its cut or
    rounding at its own last digit and within rel_tol; a decimal inside an operation stands for its
    own exact value (`0.5\\pi` is \\pi/2, `0.333\\pi` is not \\pi/3);
  * exact values are equal only exactly: rationals are compared as Fractions (large integers as
    integers), polynomials by their exact expansion, infinities by identity, anything else is refuted
    here by a certain 50-digit difference and confirmed only by the symbolic check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any

from recipe_bcr.grading.answers.tree import Node
from recipe_bcr.grading.answers.value import _CTX
from recipe_bcr.grading.answers.words import CONNECTIVE_WORDS, MAGNITUDES

Decision = bool | None
REFUTE_REL = _CTX.mpf(10) ** -30  # a relative difference this large is no rounding noise at 50 digits
_CONTAINERS = frozenset(("tuple", "set", "interval", "list", "list1", "matrix", "rel", "conn"))
_SHOWN = frozenset(("text", "sym", "unit", "words", "choice"))  # the nodes whose text a reader sees as words
_MAX_ITEMS = 64
_MAX_SIGNS = 4  # a tuple with more \\pm signs than this stands for too many tuples to list


def has_prose(node: Node) -> bool:
    return any(n.kind == "text" for n in node.walk())


def _strip_units(node: Node) -> Node:
    while node.kind in ("unit", "words") and node.children:
        node = node.children[0]
    return node


def _families(node: Node) -> set[str]:
    """Connective families used anywhere in the tree, and "relation" for a relation sign."""
    out: set[str] = set()
    for n in _outside_bounds(node):
        if n.kind == "conn":
            out.update(n.text.split(","))
        elif n.kind == "rel":
            out.update("approx" if op == "~" else "relation" for op in n.text.split(","))
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


def is_label(node: Node) -> bool:
    """A name a value can be assigned to (`x`, `a_n`, `P(A)`, `f(2)`, `|AB|`, `(p, q)`, `f^{-1}(2)`,
    `\\sin\\theta`, `\\text{Area}`): names and a name applied to bracketed arguments, never a number
    or arithmetic outside brackets (`2x`, `x + y`)."""
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
    """`x = 5`, `f(2) = 3 = \\frac{6}{2}`, `\\frac{\\sqrt3}{3} \\approx 0.577`: the values stated, each
    with True where it is only claimed approximately; None when the relation is no such statement."""
    ops = node.text.split(",")
    if ops == ["in"]:
        ops = ["="]  # x \in [-2, 7] states the interval
    if any(op not in ("=", "~") for op in ops):
        return None
    parts = list(node.children)
    first = parts[0]
    stated: list[tuple[Node, bool]] = []
    if ops[0] == "=" and is_label(first):
        parts, ops = parts[1:], ops[1:]
        stated.append((parts[0], False))
    else:
        stated.append((parts[0], False))
    for op, part in zip(ops, parts[1:]):
        stated.append((part, op == "~"))
    if all(approx for _, approx in stated[1:]) and len(stated) > 1 and ops and ops[0] == "~":
        return stated  # exact \approx decimal
    if len(stated) > 1 and not is_label(first) and "~" not in ops and any(_open(p) for p, _ in stated):
        return None  # 2x = 6, x + y = 1: an equation between values, not a statement of one (1/3 = 0.\overline{3} is)
    return stated


def statement_value(gold: Node) -> Node | None:
    """A gold `label = value` (`k = 1`, `(p, q) = (3, 2)`, `\\frac{NO}{BO} = ...`): its value, the answer.
    A gold equation between values (`2a - b = 3`, `x + y = 1`) or any other relation is no statement."""
    ops = gold.text.split(",") if gold.kind == "rel" else []
    if not ops or ops[-1] not in ("=", "in") or any(op != "ratio" for op in ops[:-1]):
        return None
    sides = gold.children[:-1]  # `A:B = 1` names a ratio of names
    names_only = all(n.kind in ("sym", "div", "mul", "abs", "tuple") for side in sides for n in side.walk())
    return gold.children[-1] if names_only or (len(sides) == 1 and is_label(sides[0])) else None


def _open(node: Node) -> bool:
    """Written in unknowns (e, i and \\pi are constants)."""
    return bool(node.names - {"e", "i"})


def _claims(pred: Node) -> Node:
    """What an answer claims: without a leading label (`P(\\text{win}) = ...` may name its event in words)."""
    if pred.kind == "rel" and pred.text.split(",")[0] in ("=", "in"):
        first = pred.children[0]
        if is_label(first):
            return Node("list", pred.children[1:])
    return pred


Question = tuple[Node, Node, bool, list[int | bool] | None, list[int | bool] | None]


def verdict(pred: Node, gold: Node, rel_tol: float) -> tuple[bool, str] | list[Question]:
    """(correct, method) when the trees decide; otherwise what the symbolic check must decide: (answer part,
    gold part, claimed only approximately, and each side's number when the tree reads it as one)."""
    pred, gold = _choice_value(pred, gold), _choice_value(gold, pred)
    pred = _renamed_variable(pred, gold)
    if same_tree(pred, gold):
        return True, "string"
    if is_prose(gold) or pred.kind == "choice":
        return _same_words(pred, gold), "string"
    decided = judge(pred, gold, rel_tol)
    if decided is None:
        return [(p, g, approx, decimal_hint(p), decimal_hint(g)) for p, g, approx in questions(pred, gold)]
    if decided:
        return True, "numeric"
    return False, "structure" if pred.kind in _CONTAINERS or gold.kind in _CONTAINERS else "numeric"


def _renamed_variable(pred: Node, gold: Node) -> Node:
    """`f(z) = z` against `f(x) = x`: a definition binds its function's variable, so the answer's is renamed to the
    gold's (unless the gold's name is already used in the answer for something else)."""
    p_var, g_var = _defined_variable(pred), _defined_variable(gold)
    if p_var is None or g_var is None or p_var == g_var or g_var in pred.names:
        return pred
    return _rename(pred, p_var, g_var)


def _defined_variable(node: Node) -> str | None:
    """`x` in `f(x) = ...`: the one name a function of one argument is defined in; None for anything else."""
    if node.kind != "rel" or node.text != "=" or len(node.children) != 2:
        return None
    head = node.children[0]
    if head.kind != "mul" or len(head.children) != 2 or head.children[0].kind != "sym":
        return None
    arg = head.children[1]
    return arg.text if arg.kind == "sym" and arg.paren and arg.text not in ("e", "i") else None


def _rename(node: Node, old: str, new: str) -> Node:
    if node.kind == "sym" and node.text == old:
        return Node("sym", text=new, span=node.span, paren=node.paren)
    if not node.children:
        return node
    kids = tuple(_rename(c, old, new) for c in node.children)
    return Node(node.kind, kids, node.text, node.value, node.places, node.span, node.paren)


def is_prose(tree: Node) -> bool:
    """A gold written in words: a choice letter, words the tree reads as prose, or a run of three or more letters."""
    nodes = list(tree.walk())
    letters = (
        tree.kind == "mul" and len(tree.children) >= 3 and all(n.kind == "sym" and len(n.text) == 1 for n in nodes[1:])
    )
    return letters or any(n.kind in ("text", "choice") for n in nodes)


def _choice_value(tree: Node, other: Node) -> Node:
    """A choice with its value (`\\textbf{(B)}\\ 32`) answers, and is answered by, the letter or the value:
    against a choice or a letter (`B`) the letter counts, against anything else the value."""
    return tree.children[0] if tree.kind == "choice" and tree.children and other.kind not in ("choice", "sym") else tree


def _same_words(pred: Node, gold: Node) -> bool:
    """A prose gold or a choice: the same words; a choice letter (`\\text{(E)}`) only as that letter,
    case kept (`e` is Euler's number, never the choice E)."""
    if gold.kind in ("choice", "sym") or pred.kind == "choice":
        return pred.kind in ("choice", "sym") and gold.kind in ("choice", "sym") and pred.text == gold.text
    key = shown_words(gold)
    return bool(key) and shown_words(pred) == key


def shown_words(tree: Node) -> str:
    """The letters and digits a tree shows, lowercase, in reading order: what a prose answer says."""
    shown = (str(n.value) if n.kind == "num" else n.text for n in tree.walk() if n.kind == "num" or n.kind in _SHOWN)
    return "".join(c for c in "".join(shown).lower() if c.isascii() and c.isalnum())


def judge(pred: Node, gold: Node, rel_tol: float) -> Decision:
    """The verdict of the tree rules, or None when only the symbolic check can decide."""
    if pred.kind == "piecewise" or gold.kind == "piecewise":
        return _piecewise(pred, gold, rel_tol)
    pred, gold = _finite_difference(pred), _finite_difference(gold)
    if _states_a_region(pred) or _states_a_region(gold):
        p_region, g_region = pred.region, gold.region
        if p_region is not None and g_region is not None:
            return p_region == g_region
        if "setbuilder" in (pred.kind, gold.kind):
            return False if p_region is not None or g_region is not None or pred.kind != gold.kind else None
    claims = _claims(pred)
    if has_prose(claims):
        return False
    carried = {n.text for n in gold.walk() if n.kind == "words"}
    stated = {n.text for n in claims.walk() if n.kind == "words"}
    if stated - carried:
        return False  # words the gold does not carry: 4 \text{, possibly 5}, 3 \text{ billion}
    if any(MAGNITUDES & set(words.split()) for words in carried - stated):
        return False  # a gold's magnitude word (3 \text{ billion}) changes its value: it cannot be dropped
    equation = _equation(pred, gold)
    if equation is not None:
        return equation
    value = statement_value(gold)
    intervals = as_intervals(pred, gold if value is None else value)
    if intervals is not None:
        return _value(*intervals, rel_tol)
    if value is not None:
        if pred.kind == "rel" and pred.text != "in" and (statement_value(pred) is not None or _open(value)):
            return None  # both statements, or equations of a curve (y = 2x + 1, 2x + 1 = y): compared whole
        if pred.kind == "rel" and pred.text != "in":
            return False  # k = 1 is not answered by an equation between values
        gold = value
    gold = _plus_minus(gold)  # a gold \\pm 3 is the list -3, 3, however the answer lists it (`-3 \\text{ or } 3`)
    extra = _families(claims) - _families(gold)  # a label's own brackets, P(A \\cap B), hold no hedge
    if gold.kind in ("list", "set") and len(gold.children) > 1:
        extra.discard("pm")  # \\pm 3 is the list -3, 3
    if "cup" in extra or "cap" in extra:  # an interval union may answer an inequality gold
        extra -= {"cup", "cap"} if "relation" in _families(gold) else set()
    if "words" in extra and gold.kind in ("list", "set"):
        extra.discard("words")
    if extra - {"relation", "approx"}:
        return False
    if gold.kind == "rel":
        inequality = any(op in ("<", ">", "<=", ">=") for op in gold.text.split(","))
        if pred.kind == "rel" or (inequality and (_collection(pred) or "").startswith(("tuple", "interval"))):
            return None  # t \le 4 against x \le 4, or against an interval: the symbolic check
        if inequality and pred.kind == "conn":
            return None
        return False  # a relation gold is never answered by its right side
    if any(n.kind == "rel" for n in gold.walk()):
        return None  # relations inside a gold collection (p = 5, q = 2; ...): the symbolic check
    if pred.kind == "rel":
        stated = stated_values(pred)
        if stated is None:
            return False
        verdicts = [_value(p, gold, rel_tol, top=True, approx=a) for p, a in stated]
        if any(v is False for v in verdicts):
            return False
        return True if all(v is True for v in verdicts) else None
    if gold.kind in ("list", "set") and pred.kind in ("list", "set"):
        pred = _stated_elements(pred)  # x = 1 \text{ or } x = 2 states the elements 1 and 2
        if pred is None:
            return False
        extra = _families(pred) - _families(gold)
    if "relation" in extra or "approx" in extra:
        return False  # a relation inside a container or bracket: (3 \approx 5), \{x > 2\}
    return _value(pred, gold, rel_tol, top=True)


def questions(pred: Node, gold: Node) -> list[tuple[Node, Node, bool]]:
    """What the symbolic check must decide where `judge` could not: (answer part, gold part, claimed only
    approximately) for every value the answer states, each against the gold's value; both whole when
    both are relations."""
    if pred.kind == "rel" and gold.kind == "rel":
        return [(pred, gold, False)]
    value = statement_value(gold)
    target = gold if value is None else value
    intervals = as_intervals(pred, target)
    if intervals is not None:
        return [(*intervals, False)]
    stated = stated_values(pred) if pred.kind == "rel" else None
    if stated is None:
        return [(pred, target, False)]
    return [(p, target, approx) for p, approx in stated]


def decimal_hint(node: Node) -> list[int | bool] | None:
    """[numerator, denominator, is a decimal, places] of a value the tree reads as one number (the
    symbolic check then skips its parse and holds a decimal to the decimal rule); None otherwise."""
    dec = _decimal_value(node)
    if dec is not None:
        return [dec.value.numerator, dec.value.denominator, True, dec.places]
    value = node.exact if node.kind in _ARITHMETIC else None
    return None if value is None else [value.numerator, value.denominator, False, 0]


def _equation(pred: Node, gold: Node) -> Decision:
    """Two polynomial equations `P = Q`: the same equation when P - Q are proportional (`y = 2x + 1`,
    `2x - y + 1 = 0`); two different linear ones are different; anything else the symbolic check decides."""
    sides = []
    for node in (pred, gold):
        if node.kind != "rel" or node.text != "=":
            return None
        lhs, rhs = node.children
        poly = Node("add", (lhs, Node("neg", (rhs,)))).poly
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


def as_intervals(pred: Node, gold: Node) -> tuple[Node, Node] | None:
    """An interval answered as an inequality, or the reverse (`[2, 5]` and `2 \\le x \\le 5`, `\\mathbb{R}`
    and `(-\\infty, \\infty)`): both read as intervals. None unless one side is an inequality and the other an interval."""
    p_iv, g_iv = pred.interval, gold.interval
    if p_iv is None and g_iv is None:
        return None
    p_iv = p_iv or (pred if pred.kind in ("interval", "tuple") and len(pred.children) == 2 else None)
    g_iv = g_iv or (gold if gold.kind in ("interval", "tuple") and len(gold.children) == 2 else None)
    if p_iv is None or g_iv is None or (pred.kind == "rel" and gold.kind == "rel"):
        return None  # two inequalities (t \\le 4, x \\le 4): the symbolic check
    return p_iv, g_iv


def _piecewise(pred: Node, gold: Node, rel_tol: float) -> bool:
    """The same pieces in any order: each value equal (by the tree rules alone) under the same condition, a
    condition read as the interval it states (`x \\ge 2`, `2 \\le x`) and "otherwise" as what the other piece
    leaves. What the trees cannot settle is no match: a piecewise answer is right only where that is certain."""
    if pred.kind != "piecewise" or gold.kind != "piecewise" or len(pred.children) != len(gold.children):
        return False
    p_conds, g_conds = _conditions(pred), _conditions(gold)
    free = list(range(len(gold.children)))
    for piece, p_cond in zip(pred.children, p_conds):
        hit = next(
            (
                j
                for j in free
                if _same_condition(p_cond, g_conds[j])
                and _value(piece.children[0], gold.children[j].children[0], rel_tol) is True
            ),
            None,
        )
        if hit is None:
            return False
        free.remove(hit)
    return True


def _conditions(node: Node) -> list[Node]:
    """Each piece's condition as an interval where it states one; "otherwise" beside one half-line as the other."""
    conds = [p.children[1].interval or p.children[1] for p in node.children]
    if len(conds) == 2 and [c.kind for c in conds].count("otherwise") == 1:
        k = 0 if conds[0].kind == "otherwise" else 1
        rest = conds[1 - k].complement
        if rest is not None:
            conds[k] = rest
    return conds


def _same_condition(a: Node, b: Node) -> bool:
    if same_tree(a, b):
        return True
    intervals = ("tuple", "interval")
    if a.kind in intervals and b.kind in intervals and a.text == b.text and len(a.children) == len(b.children) == 2:
        return all(_value(x, y, 0.0) is True for x, y in zip(a.children, b.children))
    return False


def _states_a_region(node: Node) -> bool:
    """Set-builder notation, a set difference, a union, `\\mathbb{R}` or an inequality of an absolute value
    (`|x - 3| < 2`): compared as the set of reals it states."""
    if node.kind == "rel":
        return node.text in ("<", "<=", ">", ">=") and any(c.kind == "abs" for c in node.children)
    return (
        node.kind == "setbuilder"
        or (node.kind == "sym" and node.text == "\\mathbb{R}")
        or (node.kind == "conn" and bool({"setminus", "cup"} & set(node.text.split(","))))
    )


def _finite_difference(node: Node) -> Node:
    """`\\{1, 2, 3\\} \\setminus \\{2\\}` as the set it leaves, where every element is an exact value."""
    if node.kind != "conn" or node.text != "setminus" or any(c.kind != "set" for c in node.children):
        return node
    left, right = node.children
    removed = [c.exact for c in right.children]
    kept = [(c, c.exact) for c in left.children]
    if any(v is None for v in removed) or any(v is None for _, v in kept):
        return node
    return Node("set", tuple(c for c, v in kept if v not in removed), text="{}", span=node.span)


def _stated_elements(node: Node) -> Node | None:
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
    `5 cm^2`), and one quantity in two units is compared scaled, exactly (`0.5 m` is `50 cm`; `5 cents` is not
    `\\$5`). None where a generic unit or none on either side, or the same unit, leaves the value to decide."""
    (p_sign, pred), (g_sign, gold) = _unsigned(pred), _unsigned(gold)
    if pred.kind != "unit" or gold.kind != "unit" or pred.text == gold.text:
        return None
    p, g = pred.quantity, gold.quantity
    if p is None or g is None or p == g:
        return None
    if p.dims != g.dims:
        return False
    pv, gv = pred.children[0].exact, gold.children[0].exact
    return pv is not None and gv is not None and p_sign * pv * p.scale == g_sign * gv * g.scale


def _unsigned(node: Node) -> tuple[int, Node]:
    """(sign, node) without its leading minus signs: `-40^\\circ C` is -1 times the quantity 40 degrees C."""
    sign = 1
    while node.kind == "neg":
        sign, node = -sign, node.children[0]
    return sign, node


def _value(pred: Node, gold: Node, rel_tol: float, top: bool = False, approx: bool = False) -> Decision:
    if (in_units := _in_units(pred, gold)) is not None:
        return in_units
    pred, gold = _strip_units(pred), _strip_units(gold)
    if same_tree(pred, gold) and not approx:
        return True
    if top and (pred.kind in ("set", "list1")) != (gold.kind in ("set", "list1")):
        pred, gold = _unwrap_singleton(pred), _unwrap_singleton(gold)  # \{5\} is 5 only as the whole answer
    if pred.kind in ("ellipsis",) or gold.kind in ("ellipsis",):
        return None
    pred, gold = _plus_minus(pred), _plus_minus(gold)
    if (_set_union(pred) and _scalar_value(gold)) or (_set_union(gold) and _scalar_value(pred)):
        return False  # a number is never a union of sets
    if _inner_container(pred) or _inner_container(gold):
        return None  # arithmetic on matrices or tuples: the symbolic check
    p_coll, g_coll = _collection(pred), _collection(gold)
    if p_coll is not None or g_coll is not None:
        if p_coll is None or g_coll is None or p_coll != g_coll:
            return False
        return _elements(pred, gold, p_coll, rel_tol)
    if pred.kind == "conn" or gold.kind == "conn":
        return None
    return _scalar(pred, gold, rel_tol, approx)


def _set_union(node: Node) -> bool:
    return node.kind == "conn" and set(node.text.split(",")) <= {"cup", "cap", "setminus"}


def _scalar_value(node: Node) -> bool:
    """A single value without unknowns (a number, `8\\pi`), not a container or a connective."""
    return not _open(node) and all(
        n.kind not in ("conn", "rel", "list", "set", "tuple", "interval", "matrix") for n in node.walk()
    )


def _plus_minus(node: Node) -> Node:
    """`\\pm a` is the set {-a, a}; `a \\pm b` is {a - b, a + b}."""
    if node.kind == "pm":
        a = node.children[0]
        return Node("set", (Node("neg", (a,), text="-"), a), text="{}")
    if node.kind == "add" and len(node.children) == 2 and node.children[1].kind == "pm":
        a, b = node.children[0], node.children[1].children[0]
        return Node("set", (Node("add", (a, Node("neg", (b,), text="-"))), Node("add", (a, b))), text="{}")
    if node.kind == "tuple" and sum(c.kind in ("pm", "add") for c in node.children) <= _MAX_SIGNS:
        options = [_plus_minus(c) for c in node.children]  # (\\pm 1, 2) is the two pairs (-1, 2) and (1, 2)
        if any(o is not c for o, c in zip(options, node.children)):
            choices = [o.children if o is not c else (c,) for o, c in zip(options, node.children)]
            return Node("set", tuple(Node("tuple", combo, node.text) for combo in product(*choices)), text="{}")
    return node


def _inner_container(node: Node) -> bool:
    """A scalar-looking node (a sum, a product) with a container inside it."""
    if _collection(node) is not None:
        return False
    return any(_collection(n) is not None for n in node.walk())


def _collection(node: Node) -> str | None:
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
        verdicts = [_value(p, g, rel_tol) for p, g in zip(ps, gs)]
        if any(v is False for v in verdicts):
            return False
        return True if all(verdicts) else None
    return _bag(ps, gs, rel_tol)


def _flat(node: Node) -> list[Node]:
    """The elements of a container; in a set or list, `\\pm a` and `b \\pm a` are two elements each."""
    if node.kind == "matrix":
        return [c for row in node.children for c in row.children]
    if node.kind in ("set", "list", "list1"):
        return [e for c in node.children for e in (_plus_minus(c).children if _plus_minus(c) is not c else (c,))]
    return list(node.children)


def _bag(ps: list[Node], gs: list[Node], rel_tol: float) -> Decision:
    """Unordered with multiplicity: every gold element matched by its own predicted element."""
    table = [[_value(p, g, rel_tol) for g in gs] for p in ps]
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


def _decimal_literal(node: Node) -> Number | None:
    """A whole value that is one decimal literal (maybe negated, with degrees): its exact reading."""
    sign = 1
    while node.kind in ("neg", "degree"):
        if node.kind == "neg":
            sign = -sign
        node = node.children[0]
    if node.kind == "num" and node.places is not None and node.value is not None:
        return Number(sign * node.value, True, False, node.places)
    return None


_ARITHMETIC = frozenset(("num", "neg", "add", "mul", "div"))


def _decimal_value(node: Node) -> Number | None:
    """A whole value written in decimals: a decimal literal, or sums and products of decimals and exact
    numbers whose value is a finite decimal (`0.3333333 \\cdot 1` is the decimal 0.3333333)."""
    literal = _decimal_literal(node)
    if literal is not None or node.kind not in _ARITHMETIC:
        return literal
    kinds = {n.kind for n in node.walk()}
    if not kinds <= _ARITHMETIC or not any(n.kind == "num" and n.places is not None for n in node.walk()):
        return None
    if not _keeps_last_digit(node):
        return None  # \frac{2.000001}{3}: each decimal stands for its own value, and 2.000001 is not 2
    value = node.exact
    if value is None:
        return None
    places = next((k for k in range(61) if (value * 10**k).denominator == 1), None)
    return None if places is None else Number(value, True, False, places)


def _has_decimal(node: Node) -> bool:
    return any(n.kind == "num" and n.places is not None for n in node.walk())


def _keeps_last_digit(node: Node) -> bool:
    """Arithmetic after which a decimal still rounds at a digit it wrote: sums, products with integers and
    quotients by powers of ten (`0.3333333 \\cdot 1`, `2 \\times 0.25`, `\\frac{0.5}{10}`). A product with a
    fraction or a quotient by anything else moves the rounding (`\\frac{2.000001}{3}` is 0.666667 only by chance)."""
    k, ch = node.kind, node.children
    if k == "num":
        return True
    if k in ("neg", "add"):
        return all(_keeps_last_digit(c) for c in ch)
    if k == "mul":
        return all(_keeps_last_digit(c) if _has_decimal(c) else _integer_value(c) for c in ch)
    if k == "div":
        den = None if _has_decimal(ch[1]) else ch[1].exact
        return _keeps_last_digit(ch[0]) and den is not None and den > 0 and _power_of_ten(den)
    return False


def _integer_value(node: Node) -> bool:
    v = node.exact
    return v is not None and v.denominator == 1


def _power_of_ten(v: Fraction) -> bool:
    if v.denominator != 1:
        return False
    n = v.numerator
    while n % 10 == 0:
        n //= 10
    return n == 1


def _percent(node: Node) -> Number | None:
    """A percent, maybe negated (`-5\\%` is -(5%): a negative percent is read as a percent too)."""
    sign = 1
    while node.kind == "neg":
        sign, node = -sign, node.children[0]
    if node.kind == "percent":
        v = node.children[0].exact
        lit = _decimal_literal(node.children[0])
        if v is not None:
            return Number(sign * v, lit is not None, True, lit.places if lit else 0)
    return None


def _scalar(pred: Node, gold: Node, rel_tol: float, approx: bool) -> Decision:
    p_inf, g_inf = pred.infinity, gold.infinity
    if p_inf or g_inf:
        return p_inf == g_inf  # infinities by identity
    angle = _angle(pred, gold)
    if angle is not None:
        return angle
    p_pct, g_pct = _percent(pred), _percent(gold)
    if p_pct is not None or g_pct is not None:
        p_num = p_pct or _number(pred)
        g_num = g_pct or _number(gold)
        if p_num is None or g_num is None:
            return None
        return numbers_match(g_num, p_num, rel_tol)
    p_dec, g_dec = _decimal_value(pred), _decimal_value(gold)
    p_exact, g_exact = pred.exact, gold.exact
    if p_dec is not None or g_dec is not None:
        return _decimal(pred, gold, p_dec, g_dec, p_exact, g_exact, rel_tol, approx)
    if _complex_decimals(pred) and not _complex_decimals(gold):
        return _complex(pred, gold, rel_tol)
    if p_exact is not None and g_exact is not None:
        return p_exact == g_exact
    same_base = _same_base_powers(pred, gold)
    if same_base is not None:
        return same_base
    refuted = _refute(pred, gold)
    if refuted is not None:
        return refuted
    p_poly, g_poly = pred.poly, gold.poly
    if p_poly is not None and g_poly is not None:
        return p_poly == g_poly  # exact expansion: the symbolic difference is zero or it is not
    return None


def _angle(pred: Node, gold: Node) -> Decision:
    """Degrees against radians written in pi: one angle (`30^\\circ` is `\\frac{\\pi}{6}`). None unless exactly one
    side is in degrees and the other an exact multiple of pi."""
    p_deg, g_deg = _degrees(pred), _degrees(gold)
    if (p_deg is None) == (g_deg is None):
        return None
    degrees, other = (p_deg, gold) if p_deg is not None else (g_deg, pred)
    turns = _pi_multiple(other)
    return None if turns is None else degrees == 180 * turns


def _degrees(node: Node) -> Fraction | None:
    """The exact number of degrees of `x^\\circ`, maybe negated; None for anything else."""
    sign, node = _unsigned(node)
    while node.kind == "unit":
        node = node.children[0]
    value = node.children[0].exact if node.kind == "degree" else None
    return None if value is None else sign * value


def _pi_multiple(node: Node) -> Fraction | None:
    """q when `node` is exactly q times pi (`\\frac{5\\pi}{6}`, `2\\pi`, `\\frac{7}{6}\\pi`, `-\\pi`); None
    otherwise."""
    k, ch = node.kind, node.children
    if k == "const" and node.text == "pi":
        return Fraction(1)
    if k == "neg":
        q = _pi_multiple(ch[0])
        return None if q is None else -q
    if k == "mul":
        multiples = [c for c in ch if c.exact is None]
        coef = [c.exact for c in ch if c.exact is not None]
        q = _pi_multiple(multiples[0]) if len(multiples) == 1 else None
        return None if q is None else q * math.prod(coef, start=Fraction(1))  # type: ignore[arg-type]
    if k == "div":
        q, den = _pi_multiple(ch[0]), ch[1].exact
        return None if q is None or not den else q / den
    return None


def _same_base_powers(pred: Node, gold: Node) -> Decision:
    """a^b against a^c for one exact base a > 1 and positive towers b, c: equal exactly when b = c
    (decides `10^{10^{10^{10}}}` against `10^{10^{10^{9}}}` without computing either)."""
    if pred.kind != "pow" or gold.kind != "pow":
        return None
    base_p, base_g = pred.children[0].exact, gold.children[0].exact
    if base_p is None or base_p != base_g or base_p <= 1:
        return None
    if pred.children[1].tower is None or gold.children[1].tower is None:
        return None  # exponents that are not positive towers: the symbolic check
    return _scalar(pred.children[1], gold.children[1], 0.0, False)


def _number(node: Node) -> Number | None:
    dec = _decimal_literal(node)
    if dec is not None:
        return dec
    v = node.exact
    return None if v is None else Number(v, False)


def _imaginary(pred: Node, gold: Node) -> bool:
    return (pred.names | gold.names) <= {"i", "e"}


def _refute(pred: Node, gold: Node) -> Decision:
    """False when the 50-digit values certainly differ; None (symbolic) otherwise."""
    im = _imaginary(pred, gold)
    a, b = (pred.approx_i if im else pred.approx), (gold.approx_i if im else gold.approx)
    if a is None or b is None:
        return False if _beyond(pred, b) is False or _beyond(gold, a) is False else None
    return False if refutes(a, b) else None


def refutes(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """True when two values from `numeric` certainly differ: their difference is far above the
    rounding noise of the largest magnitude either computation met (cancellation cannot fake it)."""
    noise = max(a[1], b[1], abs(a[0]), abs(b[0]))
    if noise == 0:
        return False
    return abs(a[0] - b[0]) > REFUTE_REL * noise


def _beyond(tower: Node, other: tuple[Any, Any] | None) -> Decision:
    """False when `tower` is provably more than 10^1000 and the other side a number far below it."""
    floor = tower.tower
    if other is None or floor is None or floor <= 1000:
        return None
    return False if abs(other[0]) < _CTX.mpf(10) ** 900 else None


def _decimal(
    pred: Node,
    gold: Node,
    p_dec: Number | None,
    g_dec: Number | None,
    p_exact: Fraction | None,
    g_exact: Fraction | None,
    rel_tol: float,
    approx: bool,
) -> Decision:
    """One side is a decimal literal: it must be the other side's value, its cut or its rounding."""
    if p_dec is not None and g_dec is not None:
        return numbers_match(g_dec, p_dec, rel_tol)
    dec, other, other_exact = (p_dec, gold, g_exact) if p_dec is not None else (g_dec, pred, p_exact)
    assert dec is not None
    if other_exact is not None:
        if approx:
            return dec.value * Fraction(10) ** dec.places in _candidates(other_exact, dec.places)
        return numbers_match(Number(other_exact, False), dec, rel_tol)
    if other.names - {"e", "i"}:
        return False  # a number never equals an expression in unknowns
    value = other.approx_i
    if value is None or _CTX.im(value[0]) != 0:
        return None if value is None else False
    return _rounds(dec, value[0], rel_tol, approx)


def _candidates(x: Fraction, places: int) -> set[int]:
    return rounding_candidates(x * Fraction(10) ** places)


def _rounds(dec: Number, exact_value: Any, rel_tol: float, approx: bool) -> bool:
    """`dec` is the 50-digit value's cut or rounding at its own last digit (and within rel_tol)."""
    if abs(dec.places) > 30:
        return False
    scaled = Fraction(
        _CTX.nstr(exact_value * _CTX.mpf(10) ** dec.places, 45, strip_zeros=False, min_fixed=-100, max_fixed=100)
    )
    written = dec.value * Fraction(10) ** dec.places
    if written.denominator != 1 or written.numerator not in rounding_candidates(scaled):
        return False
    return approx or abs(_CTX.mpf(dec.value.numerator) / dec.value.denominator - exact_value) <= rel_tol * abs(
        exact_value
    )


def _complex_decimals(node: Node) -> bool:
    """a + bi with a decimal part: `0.5+0.8660254i`."""
    return any(n.kind == "num" and n.places is not None for n in node.walk()) and node.names == {"i"}


def _complex(pred: Node, gold: Node, rel_tol: float) -> Decision:
    """Each decimal part of a + bi held to the decimal rule against the gold's part."""
    parts = _complex_parts(pred)
    value = gold.approx_i
    if parts is None or value is None:
        return None
    for (dec, exact_part), target in zip(parts, (_CTX.re(value[0]), _CTX.im(value[0]))):
        if dec is not None:
            if not _rounds(dec, target, rel_tol, False):
                return False
        elif exact_part is None or refutes((_CTX.mpf(exact_part.numerator) / exact_part.denominator, 0), (target, 0)):
            return False if exact_part is not None else None
        elif _CTX.mpf(exact_part.numerator) / exact_part.denominator != target:
            return None
    return True


def _complex_parts(node: Node) -> list[tuple[Number | None, Fraction | None]] | None:
    """[(real part), (imaginary part)], each a decimal literal or an exact rational; None otherwise."""
    terms = list(node.children) if node.kind == "add" else [node]
    real: tuple[Number | None, Fraction | None] = (None, Fraction(0))
    imag: tuple[Number | None, Fraction | None] = (None, Fraction(0))
    for t in terms:
        sign = 1
        while t.kind == "neg":
            sign, t = -sign, t.children[0]
        coef: Node | None = None
        if t.kind == "sym" and t.text == "i":
            coef = Node("num", value=Fraction(1))
            target = "imag"
        elif t.kind == "mul" and len(t.children) == 2 and t.children[1].kind == "sym" and t.children[1].text == "i":
            coef, target = t.children[0], "imag"
        else:
            coef, target = t, "real"
        dec = _decimal_literal(coef)
        val = coef.exact
        if val is None:
            return None
        entry = (Number(sign * dec.value, True, False, dec.places) if dec else None, sign * val)
        if target == "real":
            real = entry
        else:
            imag = entry
    return [real, imag]


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
