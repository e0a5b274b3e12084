"""What every reader of an answer shares: the closed vocabulary, the token cursor, and small tree helpers."""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.lex import Token
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.words import Text, read_text

MAX_DEPTH = 40  # brackets, fractions and powers nested deeper than this are no answer a reader checks
MAX_TOKENS = 4000  # more than any answer the verifier reads (normalize.MAX_ANSWER_CHARS characters)
FUNCTIONS = frozenset(
    "\\sin \\cos \\tan \\cot \\sec \\csc \\arcsin \\arccos \\arctan \\sinh \\cosh \\tanh \\log \\ln \\lg \\exp "
    "\\gcd \\lcm \\max \\min \\det".split()
)
INVERTIBLE = {f"\\{f}": f"\\arc{f}" for f in "sin cos tan cot sec csc".split()} | {
    f"\\{f}h": f"\\ar{f}h" for f in "sin cos tan".split()
}
GREEK = frozenset(
    "\\alpha \\beta \\gamma \\delta \\epsilon \\varepsilon \\zeta \\eta \\theta \\vartheta \\iota \\kappa \\lambda "
    "\\mu \\nu \\xi \\rho \\sigma \\tau \\upsilon \\phi \\varphi \\chi \\psi \\omega \\Gamma \\Delta \\Theta "
    "\\Lambda \\Xi \\Pi \\Sigma \\Phi \\Psi \\Omega \\ell \\hbar \\partial".split()
)
RELATIONS = {
    **{op: op for op in "= < >".split()},
    **dict.fromkeys("\\le \\leq \\leqslant \\leqq".split(), "<="),
    **dict.fromkeys("\\ge \\geq \\geqslant \\geqq".split(), ">="),
    **dict.fromkeys("\\ne \\neq".split(), "!="),
    "\\lt": "<",
    "\\gt": ">",
    "\\approx": "~",
    "\\equiv": "==",
    "\\sim": "sim",
    "\\cong": "cong",
    "\\in": "in",
    "\\propto": "prop",
    ":": "ratio",
}
CONNECTIVES = {
    **dict.fromkeys("\\lor \\vee".split(), "or"),
    **dict.fromkeys("\\land \\wedge".split(), "and"),
    **dict.fromkeys("\\Rightarrow \\implies \\Longrightarrow \\therefore".split(), "implies"),
    **dict.fromkeys("\\to \\rightarrow \\mapsto".split(), "to"),
    **dict.fromkeys("\\iff \\Leftrightarrow".split(), "iff"),
    **{f"\\{op}": op for op in "mid cup cap setminus oplus odot".split()},
    "\\\\": "linebreak",
}
STYLES = frozenset("\\mathbf \\boldsymbol \\mathit \\mathsf \\bm \\boxed \\fbox \\mathnormal".split())
ACCENTS = frozenset("\\overline \\vec \\hat \\bar \\tilde \\overrightarrow \\widehat \\overarc \\dot \\ddot".split())
NAME_PREFIXES = frozenset("\\angle \\triangle \\measuredangle".split())
FACTOR_STARTS = (
    STYLES
    | NAME_PREFIXES
    | frozenset(
        "\\frac \\dfrac \\tfrac \\cfrac \\sqrt \\pi \\infty \\binom \\dbinom \\tbinom \\lfloor \\lceil \\lvert \\mathbb "
        "\\mathcal \\{ \\lbrace \\langle \\begin \\degree \\sum \\prod \\imath".split()
    )
)  # commands that open a factor (2\\sqrt{3}, 3\\pi): an implied product may go on with them
MATRICES = frozenset("pmatrix bmatrix matrix Bmatrix array".split())
MULTI_ARGUMENT = frozenset(("\\max", "\\min", "\\gcd", "\\lcm"))
REPEAT_MARKS = ("\\overline", "\\bar", "\\dot")  # 0.1\overline{6}, 0.\bar{3}, 0.\dot{3}: the repeating digits
PIECEWISE = frozenset(("cases", "dcases"))
SET_BARS = (":", "|", "\\mid")  # between a set-builder's name and its condition
CONDITION_WORDS = frozenset(("if", "for", "when", "where", "if and only if"))  # words that open a piece's condition
OTHERWISE = frozenset(("otherwise", "else", "elsewhere", "for all other x", "if otherwise"))
_CHOICE_VALUE_STARTS = ("-", "\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi")  # a value after a choice letter
_MATH_LETTERS = ("\\mathrm", "\\operatorname")  # upright letters in math: names (e, i), not choices
_OPEN = {"(": ")", "[": "]", "\\{": "\\}", "\\lbrace": "\\rbrace", "\\langle": "\\rangle", "\\lbrack": "\\rbrack"}


class Refused(Exception):
    """Some token of the answer cannot be accounted for."""


class ReaderBase:
    """A cursor over an answer's tokens: look ahead, take, expect, and a depth guard."""

    t: list[Token]
    i: int
    depth: int
    src: str
    texts: dict[str, Text]  # each `\\text{...}` token's content, read once (words.read_texts)

    def said(self, tok: Token) -> Text:
        """What a text token holds."""
        return self.texts[tok.text]

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def is_(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok is not None and tok.kind in ("char", "cmd") and tok.text == text

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise Refused("unexpected end")
        self.i += 1
        return tok

    def expect(self, text: str) -> Token:
        if not self.is_(text):
            raise Refused(f"expected {text}")
        return self.take()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Refused("too deep")

    def leave(self) -> None:
        self.depth -= 1

    def _skip_chars(self, chars: str) -> None:
        while (tok := self.peek()) is not None and tok.kind == "char" and tok.text in chars:
            self.take()

    def _span(self, start: int) -> tuple[int, int]:
        first = self.t[start] if start < len(self.t) else None
        last = self.t[self.i - 1] if self.i > 0 else None
        return (first.start if first else 0, last.end if last else 0)


def literal(k: int, span: tuple[int, int]) -> Node:
    num = Node("num", text=str(abs(k)), value=Fraction(abs(k)), span=span)
    return num if k >= 0 else Node("neg", (num,), text="-", span=span)


def is_unit(content: str) -> bool:
    """A text that is a unit: words from the closed list, or one letter of it (`8 \\text{ m}`, `5 \\mathrm{~g}`)."""
    return read_text(content).unit


def respan(node: Node, span: tuple[int, int], paren: bool = False) -> Node:
    return Node(node.kind, node.children, node.text, node.value, node.places, span, paren or node.paren)


def bare_number(node: Node) -> bool:
    """A number literal, maybe with a sign, percent, degrees or unit: never the right side of an implied product."""
    while node.kind in ("neg", "percent", "degree", "unit", "words") and node.children:
        node = node.children[0]
    return node.kind == "num"


def integer(node: Node) -> int | None:
    """An integer literal, possibly negated; None for anything else."""
    if node.kind == "num" and node.places is None and node.value is not None and node.value.denominator == 1:
        return int(node.value)
    if node.kind == "neg" and node.children[0].kind == "num":
        inner = integer(node.children[0])
        return None if inner is None else -inner
    return None
