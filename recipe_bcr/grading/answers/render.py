"""An answer tree as plain LaTeX, one spelling per meaning: what the symbolic check reads."""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.read_base import CONNECTIVES, RELATIONS
from recipe_bcr.grading.answers.tree import Node

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
