"""Where the answer tree meets the verifier: read both answers whole, apply the tree rules, and
prepare what the symbolic check may read.

A prediction the tree cannot read is wrong (it is never handed, in part, to a lenient parser). A
prose gold (names, yes/no, a choice letter) is compared as prose. What reaches the symbolic
check has every decimal literal written as its exact fraction, so the check's float tolerance can
never stand in for the decimal rule (whole-answer decimals go there as exact hints anyway).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from recipe_bcr.grading.answers.compare import judge
from recipe_bcr.grading.answers.lex import tokens
from recipe_bcr.grading.answers.tree import Node, parse
from recipe_bcr.grading.answers.value import exact, unknowns
from recipe_bcr.grading.answers.words import prose_key
from recipe_bcr.grading.answers.normalize import canonical, strip_wrappers
from recipe_bcr.grading.answers.shape import is_label

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
    if any(n.kind == "text" for n in tree.walk()):
        return True
    if tree.kind == "sym" and strip_wrappers(text).startswith("\\text"):
        return True  # \text{C}: a choice, compared as prose
    letters = [n for n in tree.walk()]
    return (
        tree.kind == "mul"
        and len(tree.children) >= 3
        and all(n.kind == "sym" and len(n.text) == 1 for n in letters[1:])
    )


def tree_verdict(pred: str, gold: str, rel_tol: float) -> tuple[bool, str] | None:
    """(correct, method) when the trees decide; None when the symbolic check must."""
    g_tree = read_answer(gold)
    if is_prose(gold, g_tree):
        key = prose_key(strip_wrappers(gold))
        return bool(key) and prose_key(strip_wrappers(pred)) == key, "string"
    p_tree = read_answer(pred)
    if p_tree is None:  # never read in part: only the gold's own spelling can still match
        return (True, "string") if g_tree is None and canonical(pred) and canonical(pred) == canonical(gold) else (False, "unparsed")
    if g_tree is None:
        return None  # a gold we cannot read: the normalised-string and symbolic checks, with a warning
    decided = judge(p_tree, g_tree, _body(pred), _body(gold), rel_tol)
    if decided is None:
        return None
    if decided:
        return True, "string" if canonical(pred) == canonical(gold) else "numeric"
    return False, "structure" if p_tree.kind in _CONTAINERS or g_tree.kind in _CONTAINERS else "numeric"


def _body(text: str) -> str:
    body = strip_wrappers(text)
    return body[1:] if body.startswith("=") and not body.startswith("==") else body


def exact_decimals(text: str) -> str:
    """`text` as the symbolic check must read it: every number literal whose written form that check
    would misread (a decimal, which it compares within a float tolerance; a mixed number `2\\frac12`;
    a base subscript `1010_2`; a repeating decimal; scientific notation) replaced by its exact value
    (`0.25` -> `{\\frac{25}{100}}`, `1010_2` -> `{10}`). Text the tree cannot read keeps its decimals
    rewritten token by token."""
    tree = parse(text)
    if tree is None:
        return _decimal_tokens(text)
    spans = [
        (n.span, n.value)
        for n in tree.walk()
        if n.kind == "num" and n.value is not None and (n.places is not None or not n.text.isdigit())
    ]
    out, last = [], 0
    for (start, end), value in sorted(spans):
        if start < last:
            continue  # a literal inside one already replaced
        out.append(text[last:start])
        out.append(_exact_latex(value))
        last = end
    out.append(text[last:])
    return "".join(out)


def _exact_latex(value: Fraction) -> str:
    return f"{{{value.numerator}}}" if value.denominator == 1 else f"{{\\frac{{{value.numerator}}}{{{value.denominator}}}}}"


def _decimal_tokens(text: str) -> str:
    toks = tokens(text)
    if not toks or not any(t.kind == "num" and "." in t.text for t in toks):
        return text
    out, last = [], 0
    for t in toks:
        if t.kind == "num" and "." in t.text:
            digits = "".join(c for c in t.text if c.isdigit() or c == ".")
            whole, _, frac = digits.partition(".")
            out.append(text[last : t.start])
            out.append(_exact_latex(Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))))
            last = t.end
    out.append(text[last:])
    return "".join(out)


def gives_answer(answer: str | None, gold: Gold) -> bool:
    """Format credit means an answer was given: a box holding only prose or a stand-in (`\\text{pending}`,
    a bare name such as `x` or `n`, a run of letters) gives none, unless the gold is prose or itself
    written in unknowns. Answers we cannot read still count as given (they earn no accuracy)."""
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
    if kinds <= {"sym", "mul"}:  # names only: an answer only where the gold itself is written in unknowns
        return any(unknowns(t) - {"e", "i"} for t in trees if t is not None)
    return True


def restatement_key(answer: str) -> tuple[str, object] | None:
    """What two spellings of one answer share (`2^{3}` and `8`, `y = 4` and `4`): the exact value of
    the value it states, or None when it has none (the caller falls back to the normalised text)."""
    tree = read_answer(answer)
    if tree is None:
        return None
    if tree.kind == "rel":
        value = _stated_value(tree, _body(answer))
        if value is None:
            return None
        tree = value
    v = exact(tree)
    return None if v is None else ("number", v)


def _stated_value(tree: Node, source: str) -> Node | None:
    ops = tree.text.split(",")
    lhs = tree.children[0]
    if ops != ["="] or not is_label(source[lhs.span[0] : lhs.span[1]]):
        return None
    return tree.children[1]
