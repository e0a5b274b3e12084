"""Where the answer tree meets the verifier: read both answers whole, apply the tree rules, and
prepare what the symbolic check may read.

A prediction the tree cannot read is wrong (it is never handed, in part, to a lenient parser). A
prose gold (names, yes/no, a choice letter) is compared as prose. What reaches the symbolic check
is the trees' rendering (recipe_bcr.grading.answers.render: every literal as its exact value), so the
check's float tolerance can never stand in for the decimal rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from recipe_bcr.grading.answers.compare import decimal_hint, is_label, judge, questions, same_tree, stated_values, statement_value
from recipe_bcr.grading.answers.render import render
from recipe_bcr.grading.answers.tree import Node, parse
from recipe_bcr.grading.answers.value import exact, unknowns
from recipe_bcr.grading.answers.words import prose_key
from recipe_bcr.grading.answers.normalize import for_parser, strip_wrappers

Gold = str | list[str]

_CONTAINERS = frozenset(("tuple", "set", "interval", "list", "list1", "matrix", "rel", "conn"))
_CACHE_CHARS = 256  # longer answers are rarely repeated and would fill the caches


def read_answer(text: str) -> Node | None:
    """The tree of an answer without its delimiters, box and trailing period; a leading "=" says nothing."""
    return _read_cached(text) if len(text) <= _CACHE_CHARS else _read(text)


@lru_cache(maxsize=65536)
def _read_cached(text: str) -> Node | None:
    return _read(text)


def _read(text: str) -> Node | None:
    body = strip_wrappers(text)
    if body.startswith("=") and not body.startswith("=="):
        body = body[1:]
    return parse(body)


def is_prose(text: str, tree: Node | None) -> bool:
    """A gold written in words: text the tree reads as prose, or a bare run of three or more letters."""
    if tree is None:
        return False
    if tree.kind == "sym" and strip_wrappers(text).startswith("\\text"):
        return True  # \text{C}: a choice, compared as prose
    nodes = list(tree.walk())
    letters = tree.kind == "mul" and len(tree.children) >= 3 and all(n.kind == "sym" and len(n.text) == 1 for n in nodes[1:])
    return letters or any(n.kind == "text" for n in nodes)


@dataclass(frozen=True)
class Question:
    """One comparison only the symbolic check can decide: both sides as the tree renders them."""

    pred: str
    gold: str
    pred_number: list[int | bool] | None = None  # the value, when the tree reads the side as one number
    gold_number: list[int | bool] | None = None
    rounding: bool = False  # claimed after \\approx: a rounding of the gold value is enough


def tree_verdict(pred: str, gold: str, rel_tol: float) -> tuple[bool, str] | list[Question]:
    """(correct, method) when the trees decide; otherwise the questions for the symbolic check."""
    g_tree = read_answer(gold)
    if is_prose(gold, g_tree):
        return _prose(pred, gold, g_tree), "string"
    p_tree = read_answer(pred)
    if p_tree is None or g_tree is None:  # an answer is never read in part; the gold's own spelling still matches
        if spelling(pred) == spelling(gold):
            return True, "string"
    if p_tree is None:
        return False, "unparsed"
    if g_tree is None:  # a gold we cannot read: its own text, with a warning on failure
        return [Question(render(p_tree), for_parser(gold), decimal_hint(p_tree))]
    decided = True if same_tree(p_tree, g_tree) else judge(p_tree, g_tree, rel_tol)
    if decided is None:
        return [
            Question(render(p), render(g), decimal_hint(p), decimal_hint(g), approx)
            for p, g, approx in questions(p_tree, g_tree)
        ]
    if decided:
        return True, "string" if same_tree(p_tree, g_tree) else "numeric"
    return False, "structure" if p_tree.kind in _CONTAINERS or g_tree.kind in _CONTAINERS else "numeric"


def _prose(pred: str, gold: str, g_tree: Node | None) -> bool:
    """A prose gold: the same words; a choice letter (`\\text{(E)}`) only as that letter, case kept (`e` is Euler's number)."""
    if g_tree is not None and g_tree.kind == "sym" and len(g_tree.text) == 1:
        p_tree = read_answer(pred)
        return p_tree is not None and p_tree.kind == "sym" and p_tree.text == g_tree.text
    key = prose_key(strip_wrappers(gold))
    return bool(key) and prose_key(strip_wrappers(pred)) == key


def spelling(text: str) -> str:
    """An answer's own spelling, spacing aside (but for "5 6", which is not 56): what an unreadable
    answer must share with an unreadable gold."""
    out = ""
    for part in strip_wrappers(text).split():
        out += (" " if out and out[-1].isalnum() and part[0].isalnum() else "") + part
    return out


def gives_answer(answer: str | None, gold: Gold) -> bool:
    """Format credit means an answer was given: a box holding only prose or a stand-in (`\\text{pending}`,
    a bare name such as `x` or `n`, a run of letters, the gold's label echoed as `y` or `x_{1}`) gives
    none, unless the gold is prose or its value is written in those very names. Answers we cannot read
    still count as given (they earn no accuracy)."""
    if answer is None:
        return False
    golds = [gold] if isinstance(gold, str) else [str(g) for g in gold]
    trees = [read_answer(g) for g in golds]
    if any(is_prose(g, t) or t is None for g, t in zip(golds, trees)):
        return True
    tree = read_answer(answer)
    if tree is None:
        return any(c.isdigit() for c in answer)
    kinds = {n.kind for n in tree.walk()}
    if "text" in kinds and kinds <= {"text", "list", "mul"}:
        return False  # prose only
    if kinds <= {"sym", "mul"}:  # names only: an answer only where the gold's value is written in them
        names = unknowns(tree) - {"e", "i"}
        values = [statement_value(t) or t for t in trees if t is not None]
        return any(names <= unknowns(v) for v in values)
    return True


def restatement_key(answer: str) -> tuple[str, object] | None:
    """What two spellings of one answer share (`2^{3}` and `8`, `y = 4` and `4`): the exact value of
    the value it states, or None when it has none (the caller falls back to the normalised text)."""
    tree = read_answer(answer)
    if tree is None:
        return None
    if tree.kind == "rel":
        stated = stated_values(tree)
        if stated is None or len(stated) != 1 or not is_label(tree.children[0]):
            return None
        tree = stated[0][0]
    v = exact(tree)
    return None if v is None else ("number", v)
