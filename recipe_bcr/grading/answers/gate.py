"""Where the answer tree meets the verifier: read both answers whole, apply the tree rules, and
prepare what the symbolic check may read.

The tree is the only reader: an answer it cannot read is wrong (it is never handed, in part or as
written, to a lenient parser), and a gold it cannot read is a scoring error the verifier counts. A
prose gold (names, yes/no) is compared by the words its tree shows; a choice letter only as that
letter. What reaches the symbolic check is the trees' rendering
(recipe_bcr.grading.answers.render: every literal as its exact value), so the check's float
tolerance can never stand in for the decimal rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from recipe_bcr.grading.answers.compare import decimal_hint, is_label, judge, questions, same_tree, stated_values, statement_value
from recipe_bcr.grading.answers.render import render
from recipe_bcr.grading.answers.tree import Node, parse
from recipe_bcr.grading.answers.value import exact, unknowns

Gold = str | list[str]

_CONTAINERS = frozenset(("tuple", "set", "interval", "list", "list1", "matrix", "rel", "conn"))
_CACHE_CHARS = 256  # longer answers are rarely repeated and would fill the caches
_SHOWN = frozenset(("text", "sym", "unit", "words", "choice"))  # the nodes whose text a reader sees as words


def read_answer(text: str) -> Node | None:
    """The tree of an answer (its delimiters, box, leading "=" and closing period are the tree's to read)."""
    return _read_cached(text) if len(text) <= _CACHE_CHARS else parse(text)


@lru_cache(maxsize=65536)
def _read_cached(text: str) -> Node | None:
    return parse(text)


def is_prose(tree: Node) -> bool:
    """A gold written in words: a choice letter, words the tree reads as prose, or a run of three or more letters."""
    nodes = list(tree.walk())
    letters = tree.kind == "mul" and len(tree.children) >= 3 and all(n.kind == "sym" and len(n.text) == 1 for n in nodes[1:])
    return letters or any(n.kind in ("text", "choice") for n in nodes)


@dataclass(frozen=True)
class Question:
    """One comparison only the symbolic check can decide: both sides as the tree renders them."""

    pred: str
    gold: str
    pred_number: list[int | bool] | None = None  # the value, when the tree reads the side as one number
    gold_number: list[int | bool] | None = None
    rounding: bool = False  # claimed after \\approx: a rounding of the gold value is enough


def tree_verdict(pred: str, gold: str, rel_tol: float) -> tuple[bool, str] | list[Question]:
    """(correct, method) when the trees decide; otherwise the questions for the symbolic check.
    A gold the tree cannot read gives (False, "gold_unparsed"), unless the answer is the gold itself: an answer
    identical to its gold after whitespace (squeeze) always scores."""
    if squeeze(pred) == squeeze(gold):
        return True, "string"
    g_tree = read_answer(gold)
    if g_tree is None:
        return False, "gold_unparsed"
    p_tree = read_answer(pred)
    if p_tree is None:
        return False, "unparsed"
    p_tree, g_tree = _choice_value(p_tree, g_tree), _choice_value(g_tree, p_tree)
    if same_tree(p_tree, g_tree):
        return True, "string"
    if is_prose(g_tree) or p_tree.kind == "choice":
        return _same_words(p_tree, g_tree), "string"
    decided = judge(p_tree, g_tree, rel_tol)
    if decided is None:
        return [
            Question(render(p), render(g), decimal_hint(p), decimal_hint(g), approx)
            for p, g, approx in questions(p_tree, g_tree)
        ]
    if decided:
        return True, "numeric"
    return False, "structure" if p_tree.kind in _CONTAINERS or g_tree.kind in _CONTAINERS else "numeric"


def squeeze(text: str) -> str:
    """`text` without the whitespace TeX does not show: a run of whitespace is dropped, except between two letters
    or digits (where it parts two words, or ends a command before a letter: `\\wr b`) and after a backslash (TeX's
    control space), where it is one space. One linear scan."""
    out: list[str] = []
    gap = False
    for c in text:
        if c.isspace():
            gap = True
            continue
        if gap and out and ((out[-1].isalnum() and c.isalnum()) or out[-1] == "\\"):
            out.append(" ")
        gap = False
        out.append(c)
    return "".join(out)


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


def gives_answer(answer: str | None, gold: Gold) -> bool:
    """Format credit means an answer was given: a box holding only prose or a stand-in (`\\text{pending}`,
    a bare name such as `x` or `n`, a run of letters, the gold's label echoed as `y` or `x_{1}`) gives
    none, unless the gold is prose or its value is written in those very names. An answer the tree
    cannot read gives none either: nothing tells it from a stand-in (it earns no accuracy anyway)."""
    if answer is None:
        return False
    golds = [gold] if isinstance(gold, str) else [str(g) for g in gold]
    trees = [read_answer(g) for g in golds]
    if any(t is None or is_prose(t) for t in trees):
        return True
    tree = read_answer(answer)
    if tree is None:
        return False
    kinds = {n.kind for n in tree.walk()}
    if "text" in kinds and kinds <= {"text", "list", "mul"}:
        return False  # prose only
    if kinds <= {"sym", "mul"}:  # names only: an answer only where the gold's value is written in them
        names = unknowns(tree) - {"e", "i"}
        values = [statement_value(t) or t for t in trees if t is not None]
        return any(names <= unknowns(v) for v in values)
    return True


def restatement_key(answer: str) -> tuple[str, object]:
    """What two spellings of one answer share (`2^{3}` and `8`, `y = 4` and `4`, `x+1` and `x + 1`): the
    exact value of the value it states, else its tree's rendering; an unreadable answer only its own text."""
    tree = read_answer(answer)
    if tree is None:
        return ("unread", answer.strip())
    if tree.kind == "rel" and is_label(tree.children[0]):
        stated = stated_values(tree)
        if stated is not None and len(stated) == 1:
            tree = stated[0][0]
    v = exact(tree)
    return ("tree", render(tree)) if v is None else ("number", v)


def same_answer(a: str, b: str, rel_tol: float = 1e-6) -> bool:
    """Two candidates state one answer: the same restatement key, or the trees alone judge them equal
    (`x+1` and `1 + x`). What only the symbolic check could settle counts as two answers."""
    if restatement_key(a) == restatement_key(b):
        return True
    verdict = tree_verdict(b, a, rel_tol)
    return isinstance(verdict, tuple) and verdict[0]
