"""Where the answer trees meet the verifier: read both, apply the tree rules, and render what the symbolic check
may read. An answer the tree cannot read is wrong; a gold it cannot read is a scoring error."""

from __future__ import annotations

from dataclasses import dataclass

from recipe_bcr.grading.answers.compare import is_prose, verdict
from recipe_bcr.grading.answers.render import render, render_all
from recipe_bcr.grading.answers.statements import is_label, stated_values, statement_value
from recipe_bcr.grading.answers.tree import Node, parse_all
from recipe_bcr.grading.answers.value import annotate, exact, unknowns

Gold = str | list[str]


def read_answer(text: str) -> Node | None:
    """The tree of an answer (its delimiters, box, leading "=" and closing period are the tree's to read)."""
    return parse_all((text,))[0]


@dataclass(frozen=True)
class Question:
    """One comparison only the symbolic check can decide: both sides as the tree renders them."""

    pred: str
    gold: str
    pred_number: list[int | bool] | None = None  # the value, when the tree reads the side as one number
    gold_number: list[int | bool] | None = None
    rounding: bool = False  # claimed after \\approx: a rounding of the gold value is enough


def tree_verdict(pred: str, gold: str, rel_tol: float) -> tuple[bool, str] | list[Question]:
    """(correct, method) when the trees decide, else the symbolic questions; the gold itself always scores."""
    if squeeze(pred) == squeeze(gold):
        return True, "string"
    g_tree, p_tree = parse_all((gold, pred))
    if g_tree is None:
        return False, "gold_unparsed"
    if p_tree is None:
        return False, "unparsed"
    annotate(g_tree, p_tree)
    decided = verdict(p_tree, g_tree, rel_tol)
    if isinstance(decided, tuple):
        return decided
    shown = iter(render_all([side for question in decided for side in question[:2]]))
    return [Question(next(shown), next(shown), p_hint, g_hint, approx) for _, _, approx, p_hint, g_hint in decided]


def squeeze(text: str) -> str:
    """`text` without the whitespace TeX does not show (one space between two words, and after a backslash)."""
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


def gives_answer(answer: str | None, gold: Gold) -> bool:
    """Format credit: no prose or stand-in (a bare name, the gold's label), unless the gold is written so."""
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
    """What two spellings of one answer share: the exact value it states, else its rendering."""
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
    """Two candidates state one answer: the same restatement key, or the trees alone judge them equal."""
    if restatement_key(a) == restatement_key(b):
        return True
    verdict = tree_verdict(b, a, rel_tol)
    return isinstance(verdict, tuple) and verdict[0]
