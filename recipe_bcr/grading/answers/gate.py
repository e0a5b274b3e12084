"""Where the answer trees meet the verifier: read both, apply the tree rules, and render what the symbolic check
may read (below: a tree as plain LaTeX, one spelling per meaning, never the raw answer). An answer the tree cannot
read is wrong; a gold it cannot read is a scoring error."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.compare import is_prose, verdict
from recipe_bcr.grading.answers.read_base import CONNECTIVES, RELATIONS
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


# each operator in its first spelling of the reader's tables (`<=` as `\\le`)
_REL = {op: sign for sign, op in reversed(RELATIONS.items())}
_CONN = {op: sign for sign, op in reversed(CONNECTIVES.items())}
TRIG = frozenset("sin cos tan cot sec csc".split())
_ATOMS = frozenset("num sym const func abs floor ceil binom div root tuple set interval matrix list1".split())


def number(value: Fraction) -> str:
    """An exact number: `7`, `\\frac{1}{3}` (a rendering never writes digits beside digits)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def render_all(nodes: list[Node]) -> list[str]:
    """Each node rendered (see `render`)."""
    return [render(node) for node in nodes]


def render(node: Node) -> str:  # noqa: C901 - one case per node kind
    """`node` as LaTeX the symbolic parser reads unambiguously."""
    k, ch = node.kind, node.children
    if k == "num":
        return number(node.value)  # type: ignore[arg-type]
    if k == "sym":
        return node.text
    if k == "const":
        return "\\" + node.text
    if k in ("unit", "words"):
        return render(ch[0])
    if k == "neg":
        return f"-{_group(ch[0])}"
    if k == "pm":
        return f"\\pm {_group(ch[0])}"
    if k == "add":
        out = render(ch[0])
        for c in ch[1:]:
            out += f" {render(c)}" if c.kind in ("neg", "pm") else f" + {render(c)}"
        return out
    if k == "mul":  # f(x), 2(x + 1): a bracket is written beside what it follows, as the answer wrote it
        return "".join((_group(c) if c.paren or i == 0 else f" \\cdot {_group(c)}") for i, c in enumerate(ch))
    if k == "div":
        return f"\\frac{{{render(ch[0])}}}{{{render(ch[1])}}}"
    if k == "pow":
        return f"{{{_group(ch[0])}}}^{{{render(ch[1])}}}"
    if k == "root":
        index = f"[{render(ch[1])}]" if len(ch) > 1 else ""
        return f"\\sqrt{index}{{{render(ch[0])}}}"
    if k == "fact":
        return f"{_group(ch[0])}{node.text}"
    if k == "percent":
        return f"{_group(ch[0])}\\%"
    if k == "degree":
        return f"{_group(ch[0])}^{{\\circ}}"
    if k == "prime":
        return f"{_group(ch[0])}'"
    if k == "binom":
        return f"\\binom{{{render(ch[0])}}}{{{render(ch[1])}}}"
    if k == "abs":
        return f"\\left|{render(ch[0])}\\right|"
    if k in ("floor", "ceil"):
        left, right = ("\\lfloor", "\\rfloor") if k == "floor" else ("\\lceil", "\\rceil")
        return f"{left} {render(ch[0])} {right}"
    if k == "func":
        if node.text == "log_base":
            return f"\\log_{{{render(ch[1])}}}\\left({render(ch[0])}\\right)"
        return f"\\{node.text}({', '.join(_radians(c) if node.text in TRIG else render(c) for c in ch)})"
    if k == "bigop":
        bounds = "".join(f"{mark}{{{render(b)}}}" for mark, b in zip("_^", ch[1:]))
        return f"\\{node.text}{bounds} {_group(ch[0])}"
    if k == "tuple":
        inner = ", ".join(render(c) for c in ch)
        return f"\\langle {inner} \\rangle" if node.text == "<>" else f"\\left({inner}\\right)"
    if k == "interval":
        return f"\\left{node.text[0]}{', '.join(render(c) for c in ch)}\\right{node.text[1]}"
    if k == "set":
        return f"\\{{{', '.join(render(c) for c in ch)}\\}}" if ch else "\\emptyset"
    if k == "list1":
        return f"\\left[{render(ch[0])}\\right]"
    if k == "list":
        return ("; " if ";" in node.text else ", ").join(render(c) for c in ch)
    if k == "matrix":
        rows = " \\\\ ".join(" & ".join(render(c) for c in row.children) for row in ch)
        return f"\\begin{{pmatrix}} {rows} \\end{{pmatrix}}"
    if k in ("rel", "conn"):
        signs = _REL if k == "rel" else _CONN
        return render(ch[0]) + "".join(f" {signs[op]} {render(c)}" for op, c in zip(node.ops, ch[1:]))
    if k == "ellipsis":
        return "\\ldots"
    return f"\\text{{{node.text}}}"  # prose: never equal to mathematics


def _radians(node: Node) -> str:
    """A trigonometric function's argument: degrees (`30^\\circ`) as the radians they are."""
    if node.kind == "degree":
        return f"\\frac{{\\pi}}{{180}} \\cdot {_group(node.children[0])}"
    return render(node)


def _group(node: Node) -> str:
    text = render(node)
    return f"\\left({text}\\right)" if node.paren or node.kind not in _ATOMS else text
