"""The policies of verification on two answer trees (choices, prose, words the gold does not carry), then the
rule for the kinds of the pair (containers.py), what the answers state and the sets they state read once first."""

from __future__ import annotations

from recipe_bcr.grading.answers.containers import decide, settle
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.poly import same_equation
from recipe_bcr.grading.answers.regions import Shape, as_interval, complement, read_regions
from recipe_bcr.grading.answers.scalars import Decision, decimal_hint
from recipe_bcr.grading.answers.statements import Said, read_statements
from recipe_bcr.grading.answers.words import MAGNITUDES

_CONTAINERS = frozenset(("tuple", "set", "interval", "list", "list1", "matrix", "rel", "conn"))


_SHOWN = frozenset(("text", "sym", "unit", "words", "choice"))  # the nodes whose text a reader sees as words


def has_prose(node: Node) -> bool:
    return any(n.kind == "text" for n in node.walk())


Question = tuple[Node, Node, bool, list[int | bool] | None, list[int | bool] | None]


def verdict(pred: Node, gold: Node, rel_tol: float) -> tuple[bool, str] | list[Question]:
    """(correct, method) when the trees decide; otherwise the questions for the symbolic check."""
    pred, gold = _choice_value(pred, gold), _choice_value(gold, pred)
    said = read_statements(pred, gold)
    pred = said.pred
    if pred.same(gold):
        return True, "string"
    if is_prose(gold) or pred.kind == "choice":
        return _same_words(pred, gold), "string"
    if is_prose(pred) and pred.kind == gold.kind == "rel" and pred.ops == gold.ops:
        return _same_names(pred, gold), "string"
    shape = read_regions(pred, gold, said.target)
    decided = judge(pred, gold, said, shape, rel_tol)
    if decided is None:
        return [(p, g, approx, decimal_hint(p), decimal_hint(g)) for p, g, approx in questions(pred, gold, said, shape)]
    if decided:
        return True, "numeric"
    return False, "structure" if pred.kind in _CONTAINERS or gold.kind in _CONTAINERS else "numeric"


def is_prose(tree: Node) -> bool:
    """A gold written in words: a choice letter, words the tree reads as prose, or a run of three or more letters."""
    nodes = list(tree.walk())
    letters = (
        tree.kind == "mul" and len(tree.children) >= 3 and all(n.kind == "sym" and len(n.text) == 1 for n in nodes[1:])
    )
    return letters or any(n.kind in ("text", "choice") for n in nodes)


def _choice_value(tree: Node, other: Node) -> Node:
    """A choice with its value (`\\textbf{(B)}\\ 32`) is the letter against a choice or a letter, else the value."""
    return tree.children[0] if tree.kind == "choice" and tree.children and other.kind not in ("choice", "sym") else tree


def _same_words(pred: Node, gold: Node) -> bool:
    """The same words; a choice letter only as that letter, case kept (`e` is Euler's number, never E)."""
    if gold.kind in ("choice", "sym") or pred.kind == "choice":
        return pred.kind in ("choice", "sym") and gold.kind in ("choice", "sym") and pred.text == gold.text
    key = shown_words(gold)
    return bool(key) and shown_words(pred) == key


def _same_names(pred: Node, gold: Node) -> bool:
    """`\\text{AB} = \\text{CD}` against `AB = CD`: names in text are the names in math, side by side."""
    sides = zip(pred.children, gold.children)
    return all(all(n.kind in ("sym", "mul") for n in g.walk()) and shown_words(p) == shown_words(g) for p, g in sides)


def shown_words(tree: Node) -> str:
    """The letters and digits a tree shows, lowercase, in reading order: what a prose answer says."""
    shown = (str(n.value) if n.kind == "num" else n.text for n in tree.walk() if n.kind == "num" or n.kind in _SHOWN)
    return "".join(c for c in "".join(shown).lower() if c.isascii() and c.isalnum())


def judge(pred: Node, gold: Node, said: Said, shape: Shape, rel_tol: float) -> Decision:
    """The verdict of the tree rules, or None when only the symbolic check can decide."""
    if pred.kind == "piecewise" or gold.kind == "piecewise":
        return _piecewise(pred, gold, rel_tol)
    if shape.regions is not None:
        p_region, g_region = shape.regions
        if p_region is not None and g_region is not None:
            return p_region == g_region
        if "setbuilder" in (pred.kind, gold.kind):
            return False if p_region is not None or g_region is not None or pred.kind != gold.kind else None
    if _wordy(said.claimed, gold):
        return False
    equation = same_equation(pred, gold)
    if equation is not None:
        return equation
    if shape.intervals is not None:
        return decide(*shape.intervals, rel_tol)
    if said.value is not None and pred.kind == "rel" and pred.text != "in":
        # both statements, or equations of a curve, are compared whole; k = 1 is no equation between values
        return None if said.pred_value is not None or said.open_value else False
    return settle(pred, said, rel_tol)


def _wordy(claimed: Node, gold: Node) -> bool:
    """Prose in a mathematical answer, words the gold does not carry, or a gold's magnitude word dropped."""
    if has_prose(claimed):
        return True
    carried = {n.text for n in gold.walk() if n.kind == "words"}
    stated = {n.text for n in claimed.walk() if n.kind == "words"}
    return bool(stated - carried) or any(MAGNITUDES & set(words.split()) for words in carried - stated)


def questions(pred: Node, gold: Node, said: Said, shape: Shape) -> list[tuple[Node, Node, bool]]:
    """(answer part, gold part, claimed only approximately) for every value the answer states."""
    if pred.kind == "rel" and gold.kind == "rel":
        return [(pred, gold, False)]
    if shape.intervals is not None:
        return [(*shape.intervals, False)]
    if said.stated is None:
        return [(pred, said.target, False)]
    return [(p, said.target, approx) for p, approx in said.stated]


def _piecewise(pred: Node, gold: Node, rel_tol: float) -> bool:
    """The same pieces in any order, each value equal under the same condition; what the trees cannot settle fails."""
    if pred.kind != "piecewise" or gold.kind != "piecewise" or len(pred.children) != len(gold.children):
        return False
    p_conds, g_conds = _conditions(pred), _conditions(gold)
    free = list(range(len(gold.children)))
    for piece, p_cond in zip(pred.children, p_conds):
        value, same = piece.children[0], (j for j in free if _same_condition(p_cond, g_conds[j]))
        hit = next((j for j in same if decide(value, gold.children[j].children[0], rel_tol) is True), None)
        if hit is None:
            return False
        free.remove(hit)
    return True


def _conditions(node: Node) -> list[Node]:
    """Each piece's condition as an interval where it states one; "otherwise" beside one half-line as the other."""
    conds = [as_interval(p.children[1]) or p.children[1] for p in node.children]
    if len(conds) == 2 and [c.kind for c in conds].count("otherwise") == 1:
        k = 0 if conds[0].kind == "otherwise" else 1
        rest = complement(conds[1 - k])
        if rest is not None:
            conds[k] = rest
    return conds


def _same_condition(a: Node, b: Node) -> bool:
    if a.same(b):
        return True
    intervals = ("tuple", "interval")
    if a.kind in intervals and b.kind in intervals and a.text == b.text and len(a.children) == len(b.children) == 2:
        return all(decide(x, y, 0.0) is True for x, y in zip(a.children, b.children))
    return False
