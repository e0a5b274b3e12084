"""Functions and big operators: fractions, binomials, roots, named functions (powers, inverses, arguments
without parentheses), factorial products, and sums and products over a range."""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.lex import Token
from recipe_bcr.grading.answers.node import Node, substitute
from recipe_bcr.grading.answers.read_base import (
    FUNCTIONS,
    GREEK,
    INVERTIBLE,
    MAX_TOKENS,
    MULTI_ARGUMENT,
    ReaderBase,
    Refused,
    integer,
    literal,
)
from recipe_bcr.grading.answers.value import exact

MAX_TERMS = 200  # a sum or product with numeric bounds is written out up to this many terms
MAX_SUMMED = 10**6  # more terms than this (to a bound such as 10^{12}): no check can add them


class FunctionReader(ReaderBase):
    """Commands that take arguments, and functions applied to values."""

    def function_command(self, tok: Token) -> Node | None:
        """`\\frac`, `\\binom`, `\\sqrt`, `\\sum`/`\\prod` and named functions; None for any other command."""
        text = tok.text
        if text in ("\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\binom", "\\dbinom", "\\tbinom"):
            self.take()
            a, b = self.argument(), self.argument()
            kind = "div" if "frac" in text else "binom"
            return Node(kind, (a, b), span=(tok.start, b.span[1]))
        if text == "\\sqrt":
            self.take()
            index = None
            if self.is_("["):
                self.take()
                index = self.expr()
                self.expect("]")
            radicand = self.argument()
            kids = (radicand,) if index is None else (radicand, index)
            return Node("root", kids, span=(tok.start, radicand.span[1]))
        if text in ("\\sum", "\\prod"):
            self.take()  # a sum or product over a range: written out, in closed form, or read whole
            bounds = []
            for mark in ("_", "^"):
                if self.is_(mark):
                    self.take()
                    bounds.append(self.argument())
            body = self.term()
            node = _bound_index(Node("bigop", (body, *bounds), text=text[1:], span=(tok.start, body.span[1])))
            return expand_bigop(node) or node
        if text in FUNCTIONS:
            return self.function(text, tok)
        return None

    def function(self, name: str, tok: Token) -> Node:
        if self.peek() is tok:
            self.take()
        base = power = None
        if self.is_("_"):
            self.take()
            base = self.argument()
        if self.is_("^"):
            self.take()
            power = self.argument()
        closer = {"(": ")", "\\{": "\\}", "\\lbrace": "\\rbrace"}.get(self.peek().text if self.peek() else "")
        if closer is not None and (closer == ")" or name in MULTI_ARGUMENT):
            self.take()  # \max\{a, b\} as \max(a, b)
            args = self.items()
            close = self.expect(closer)
            argv = args.children if args.kind == "list" else (args,)
            end = close.end
        else:
            if name in MULTI_ARGUMENT:
                raise Refused("a multi-argument function without parentheses")
            arg = self._function_argument()
            argv, end = (arg,), arg.span[1]
        if power is not None and name in INVERTIBLE and integer(power) == -1:
            name, power = INVERTIBLE[name], None  # \tan^{-1} x is arctan x, never 1/tan x
        node = Node("func", tuple(argv), text=name[1:], span=(tok.start, end))
        if base is not None:
            node = Node("func", (*argv, base), text="log_base", span=node.span)
        if power is not None:
            node = Node("pow", (node, power), span=node.span)
        return node

    def _function_argument(self) -> Node:
        """An argument without parentheses: the implied product up to the next operator (`\\sin 2x`)."""
        start = self.i
        factors = [self.factor()]
        while (tok := self.peek()) is not None and (tok.kind == "letter" or tok.text in GREEK or tok.text == "\\pi"):
            factors.append(self.factor())
        return self._product(factors, start)

    def _factorial_product(self) -> bool:
        """`8!2!`: a number right after a factorial is the next factorial of a product, when it has its own `!`."""
        nxt = self.peek(1)
        return self.t[self.i - 1].text == "!" and nxt is not None and nxt.kind == "char" and nxt.text == "!"


_INDEX_NAMES = ("k", "j", "m", "r", "q")


def _bound_index(node: Node) -> Node:
    """A sum's or product's index under one name (it is bound: `i` is then never the imaginary unit)."""
    if len(node.children) < 2 or node.children[1].kind != "rel" or node.children[1].text != "=":
        return node
    body, lower, *upper = node.children
    index, start = lower.children
    if index.kind != "sym" or len(lower.children) != 2:
        return node
    used = (_names(body) - {index.text}) | _names(start) | {n for u in upper for n in _names(u)}
    name = next((n for n in _INDEX_NAMES if n not in used), None)
    if name is None or name == index.text:
        return node
    fresh = Node("sym", text=name, span=index.span)
    bound = Node("rel", (fresh, start), text="=", span=lower.span)
    return Node(node.kind, (substitute(body, index.text, fresh), bound, *upper), node.text, span=node.span)


def expand_bigop(node: Node) -> Node | None:
    """A sum or product written out (integer bounds) or a geometric series in closed form; None otherwise."""
    if len(node.children) != 3:
        return None
    body, lower, upper = node.children
    if lower.kind != "rel" or lower.text != "=" or lower.children[0].kind != "sym":
        return None
    var, start = lower.children[0].text, integer(lower.children[1])
    if start is None:
        return None
    stop = integer(upper)
    last = exact(upper) if stop is None and upper.kind != "const" else None
    if last is not None and last - start >= MAX_SUMMED:
        raise Refused("a sum or product of more terms than any check can add")  # \sum_{k=1}^{10^{12}} k^k
    if stop is not None:
        count = stop - start + 1
        if count > MAX_TERMS or count * sum(1 for _ in body.walk()) > MAX_TOKENS:
            return None
        terms = [substitute(body, var, literal(k, node.span)) for k in range(start, stop + 1)]
        if not terms:
            return literal(0 if node.text == "sum" else 1, node.span)
        if len(terms) == 1:
            return terms[0]
        return Node("add" if node.text == "sum" else "mul", tuple(terms), span=node.span)
    return _geometric(body, var, start, upper, node.span) if node.text == "sum" else None


def _geometric(body: Node, var: str, start: int, upper: Node, span: tuple[int, int]) -> Node | None:
    """sum_{k=a}^{b} c r^k = c (r^a - r^(b+1)) / (1 - r); to infinity c r^a / (1 - r) when |r| < 1."""
    parts = _ratio_form(body, var)
    if parts is None:
        return None
    coef, ratio = parts
    r = _rational(ratio)
    if r == 1:
        return None
    first = Node("pow", (ratio, literal(start, span)), span=span)
    if upper.kind == "const" and upper.text == "infty":
        if r is None or abs(r) >= 1:
            return None
        top = first
    elif var in _names(upper):
        return None
    else:
        last = Node("pow", (ratio, Node("add", (upper, literal(1, span)), span=span)), span=span)
        top = Node("add", (first, Node("neg", (last,), text="-", span=span)), span=span)
    one_less = Node("add", (literal(1, span), Node("neg", (ratio,), text="-", span=span)), span=span)
    if coef is not None:
        top = Node("mul", (coef, top), span=span)
    return Node("div", (top, one_less), span=span)


def _ratio_form(body: Node, var: str) -> tuple[Node | None, Node] | None:
    """(c, r) when `body` is c r^k in the index k (r^k, c r^k, c / r^k); None otherwise."""
    if body.kind == "pow" and body.children[1].kind == "sym" and body.children[1].text == var:
        base = body.children[0]
        return None if var in _names(base) else (None, base)
    if body.kind == "div" and var not in _names(body.children[0]):
        inner = _ratio_form(body.children[1], var)
        if inner is not None and inner[0] is None:
            return body.children[0], Node("div", (literal(1, body.span), inner[1]), span=body.span)
    if body.kind == "mul":
        powers = [c for c in body.children if var in _names(c)]
        if len(powers) == 1 and (inner := _ratio_form(powers[0], var)) is not None and inner[0] is None:
            rest = tuple(c for c in body.children if c is not powers[0])
            return (rest[0] if len(rest) == 1 else Node("mul", rest, span=body.span)), inner[1]
    return None


def _names(node: Node) -> set[str]:
    return {n.text for n in node.walk() if n.kind == "sym"}


def _rational(node: Node) -> Fraction | None:
    """The value of an integer or a quotient of integers, maybe negated; None for anything else."""
    if node.kind == "div":
        a, b = _rational(node.children[0]), _rational(node.children[1])
        return None if a is None or not b else a / b
    k = integer(node)
    return None if k is None else Fraction(k)
