"""An answer read into a tree in which every token is accounted for, or not read at all.

`parse` is a recursive-descent reader over recipe_bcr.grading.answers.lex tokens (linear: each token is
consumed once; nesting deeper than MAX_DEPTH is refused). What it reads:
  * numbers with their written form (`Num`: exact value, digits after the point, scientific
    notation `1.5 \\times 10^{6}` / `1.5e6` as one literal, a base subscript `1010_2` as part of
    the number, a repeating decimal `0.1\\overline{6}`; digit groups and styled digits are the lexer's);
  * TeX's `a \\over b` and `n \\choose k` over a whole group, `\\imath`, `\\text{$...$}`;
  * operators (+ - \\pm, products written or implied, quotients, powers, radicals with TeX's
    single-token arguments: `\\frac12` is 1/2, `\\sqrt2x` is sqrt(2) x; a digit right after a
    finished factor, as in `\\frac123` or `2^10`, is refused, since it renders as neither reading);
  * `!` and `!!` (a double factorial, not a factorial of a factorial), a prime after an expression
    (a derivative; after a lone name it is part of the name, as in f'), `%`, degrees, units from a
    closed list (`answer_words.UNITS`), functions, absolute values, floors, ceilings, binomials;
  * relations, connectives (including the words "or"/"and"), and containers: tuple, set, interval,
    list, vector, matrix;
  * `\\text{...}` as prose (words), units, "or"/"and", a letter or choice (`\\mathrm{e}`, `\\text{(B)}`),
    a function name, or the number it holds.
Anything else (an unknown command, `\\begin{cases}`, a dangling brace, "5 6") returns None.
"""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.lex import Token, tokens
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.words import (
    TEMPERATURE_SCALES,
    UNITS,
    choice_letter,
    connective,
    number_words,
    quantity_parts,
    text_content,
    text_kind,
    words_key,
)
from recipe_bcr.grading.answers.normalize import MAX_DIGITS

MAX_DEPTH = 40  # brackets, fractions and powers nested deeper than this are no answer a reader checks
MAX_TOKENS = 4000  # more than any answer the verifier reads (normalize.MAX_ANSWER_CHARS characters)

FUNCTIONS = frozenset(
    "\\sin \\cos \\tan \\cot \\sec \\csc \\arcsin \\arccos \\arctan \\sinh \\cosh \\tanh \\log \\ln \\lg \\exp "
    "\\gcd \\lcm \\max \\min \\det".split()
)
# f^{-1} of these is the inverse function (`\sin^{-1} x` is arcsin x); any other power is a power (`\cos^2 x`)
INVERTIBLE = {"\\sin": "\\arcsin", "\\cos": "\\arccos", "\\tan": "\\arctan", "\\cot": "\\arccot", "\\sec": "\\arcsec",
              "\\csc": "\\arccsc", "\\sinh": "\\arsinh", "\\cosh": "\\arcosh", "\\tanh": "\\artanh"}
GREEK = frozenset(
    "\\alpha \\beta \\gamma \\delta \\epsilon \\varepsilon \\zeta \\eta \\theta \\vartheta \\iota \\kappa \\lambda "
    "\\mu \\nu \\xi \\rho \\sigma \\tau \\upsilon \\phi \\varphi \\chi \\psi \\omega \\Gamma \\Delta \\Theta "
    "\\Lambda \\Xi \\Pi \\Sigma \\Phi \\Psi \\Omega \\ell \\hbar".split()
)
RELATIONS = {
    "=": "=", "<": "<", ">": ">", "\\lt": "<", "\\gt": ">", "\\le": "<=", "\\leq": "<=", "\\leqslant": "<=",
    "\\leqq": "<=", "\\ge": ">=", "\\geq": ">=", "\\geqslant": ">=", "\\geqq": ">=", "\\ne": "!=", "\\neq": "!=",
    "\\approx": "~", "\\equiv": "==", "\\sim": "sim", "\\cong": "cong", "\\in": "in", "\\propto": "prop",
    ":": "ratio",
}
CONNECTIVES = {
    "\\lor": "or", "\\vee": "or", "\\land": "and", "\\wedge": "and", "\\Rightarrow": "implies",
    "\\implies": "implies", "\\Longrightarrow": "implies", "\\therefore": "implies", "\\to": "to",
    "\\rightarrow": "to", "\\mapsto": "to", "\\iff": "iff", "\\Leftrightarrow": "iff", "\\mid": "mid",
    "\\cup": "cup", "\\cap": "cap", "\\setminus": "setminus", "\\oplus": "oplus", "\\\\": "linebreak",
}
STYLES = frozenset("\\mathbf \\boldsymbol \\mathit \\mathsf \\bm \\boxed \\fbox \\mathnormal".split())
ACCENTS = frozenset("\\overline \\vec \\hat \\bar \\tilde \\overrightarrow \\widehat \\overarc \\dot \\ddot".split())
NAME_PREFIXES = frozenset("\\angle \\triangle \\measuredangle".split())
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


class _Reader:
    def __init__(self, toks: list[Token], source: str) -> None:
        self.t = toks
        self.i = 0
        self.depth = 0
        self.src = source
        self.undo: list[tuple[int, Token]] = []  # tokens split by single-digit arguments, to restore on a re-read

    # -- token helpers ---------------------------------------------------------------------------
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

    # -- grammar ---------------------------------------------------------------------------------
    def answer(self) -> Node:
        """The whole answer; a leading "=" and a closing period, comma or line break say nothing."""
        while self.t and (self.t[-1].text in (".", ",", "\\\\") and self.t[-1].kind in ("char", "cmd") or self.t[-1].kind == "text" and self.t[-1].text.strip() == "."):
            self.t.pop()
        if self.is_("=") and not self.is_("=", 1):
            self.take()
        node = self.fraction()
        if self.peek() is not None:
            raise Refused(f"unread token {self.peek()}")
        return node

    def items(self) -> Node:
        """A list: items separated by commas, semicolons or the words or/and."""
        start = self.i
        parts = [self.connected()]
        seps = []
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "char" and tok.text in ",;":
                seps.append(self.take().text)
                nxt = self.peek()
                if nxt is not None and nxt.kind == "text" and text_kind(nxt.text) == "connective":
                    seps.append(connective(self.take().text))  # type: ignore[arg-type] # 2, 3, and 4
            elif tok is not None and tok.kind == "text" and text_kind(tok.text) == "connective":
                seps.append(connective(tok.text))  # type: ignore[arg-type]
                self.take()
            else:
                break
            parts.append(self.connected())
        if len(parts) == 1:
            return parts[0]
        if ";" in seps and "," in seps:  # p = 5, q = 2; p = 7, q = 2: a list of lists
            groups: list[list[Node]] = [[parts[0]]]
            for sep, part in zip(seps, parts[1:]):
                groups.append([part]) if sep == ";" else groups[-1].append(part)
            parts = [g[0] if len(g) == 1 else Node("list", tuple(g), text=",", span=(g[0].span[0], g[-1].span[1])) for g in groups]
            seps = [s for s in seps if s != ","]
        return Node("list", tuple(parts), text="".join(sorted(set(seps))), span=self._span(start))

    def connected(self) -> Node:
        start = self.i
        parts = [self.relation()]
        ops = []
        while (tok := self.peek()) is not None and tok.kind in ("cmd", "char") and tok.text in CONNECTIVES:
            ops.append(CONNECTIVES[self.take().text])
            parts.append(self.relation())
        if not ops:
            return parts[0]
        return Node("conn", tuple(parts), text=",".join(ops), span=self._span(start))

    def relation(self) -> Node:
        start = self.i
        parts = [self.expr()]
        ops = []
        while (op := self._relop()) is not None:
            ops.append(op)
            parts.append(self.expr())
        if not ops:
            return parts[0]
        return Node("rel", tuple(parts), text=",".join(ops), span=self._span(start))

    def _relop(self) -> str | None:
        tok = self.peek()
        if tok is None or tok.kind not in ("char", "cmd"):
            return None
        nxt = self.peek(1)
        if tok.text in ("<", ">", "!") and nxt is not None and nxt.text == "=" and not nxt.spaced:
            self.i += 2
            return {"<": "<=", ">": ">=", "!": "!="}[tok.text]
        if tok.text in RELATIONS:
            self.i += 1
            return RELATIONS[tok.text]
        return None

    def expr(self) -> Node:
        """Terms joined by + - \\pm \\mp; a leading sign is allowed (an empty side of a relation is not)."""
        start = self.i
        terms: list[Node] = []
        ops: list[str] = []
        sign = self._sign()
        if sign is not None:
            ops.append(sign)
        else:
            ops.append("+")
        terms.append(self.term())
        while (sign := self._sign()) is not None:
            ops.append(sign)
            terms.append(self.term())
        if len(terms) == 1 and ops[0] == "+":
            return terms[0]
        out = []
        for op, t in zip(ops, terms):
            out.append(t if op == "+" else Node("neg" if op == "-" else "pm", (t,), text=op, span=t.span))
        return out[0] if len(out) == 1 else Node("add", tuple(out), span=self._span(start))

    def _sign(self) -> str | None:
        tok = self.peek()
        if tok is None or tok.kind not in ("char", "cmd"):
            return None
        op = {"+": "+", "-": "-", "\\pm": "pm", "\\mp": "pm"}.get(tok.text)
        if op is not None:
            self.i += 1
        return op

    def term(self) -> Node:
        start = self.i
        factors = [self.signed_factor()]
        ops = ["*"]
        while True:
            tok = self.peek()
            if tok is None:
                break
            if tok.kind in ("char", "cmd") and tok.text in ("*", "\\cdot", "\\times", "/", "\\div"):
                self.take()
                ops.append("/" if tok.text in ("/", "\\div") else "*")
                factors.append(self.signed_factor())
            elif self._starts_factor(tok):
                if tok.kind == "num" and self.t[self.i - 1].text not in (")", "]") and not self._factorial_product():
                    raise Refused("a number right after a factor")  # "5 6", "2^10", "\frac123", "2\frac12"
                ops.append("*")
                factors.append(self.factor())
                if (tok.kind == "text" or tok.text in STYLES) and _bare_number(factors[-1]):
                    raise Refused("two numbers side by side")  # \boxed{3} \boxed{5}, 3 \text{5}
            else:
                break
        if len(factors) == 1:
            return factors[0]
        node = factors[0]
        prod: list[Node] = [node]
        for op, f in zip(ops[1:], factors[1:]):
            if op == "/":
                prod = [Node("div", (self._product(prod), f), span=(prod[0].span[0], f.span[1]))]
            else:
                prod.append(f)
        return self._product(prod, start)

    def _product(self, parts: list[Node], start: int | None = None) -> Node:
        if len(parts) == 1:
            return parts[0]
        return Node("mul", tuple(parts), span=self._span(start) if start is not None else (parts[0].span[0], parts[-1].span[1]))

    def signed_factor(self) -> Node:
        """A factor after an explicit product sign may carry its own sign: 3 \\cdot -2."""
        if self.is_("-"):
            tok = self.take()
            f = self.signed_factor()
            return Node("neg", (f,), text="-", span=(tok.start, f.span[1]))
        return self.factor()

    def _starts_factor(self, tok: Token) -> bool:
        if tok.kind in ("num", "letter"):
            return True
        if tok.kind == "text":
            return text_kind(tok.text) in ("number", "math", "letter", "function")
        if tok.kind == "char":
            return tok.text in "(["  # "|" never starts an implied product: 3 | 5 is no product
        return tok.text in FUNCTIONS or tok.text in GREEK or tok.text in STYLES or tok.text in NAME_PREFIXES or tok.text in (
            "\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\sqrt", "\\pi", "\\infty", "\\binom", "\\dbinom", "\\tbinom",
            "\\lfloor", "\\lceil", "\\lvert", "\\mathbb", "\\mathcal", "\\{", "\\lbrace", "\\langle", "\\begin", "\\degree",
            "\\sum", "\\prod", "\\imath",
        ) or tok.text in ACCENTS

    def factor(self) -> Node:
        self.enter()
        try:
            base = self.postfix(self.primary())
            if self.is_("^"):
                self.take()
                marked = self._degree_or_prime(base)
                if marked is not None:
                    return self._units(self.postfix(marked))
                exp = self.argument()
                base = self.postfix(Node("pow", (base, exp), span=(base.span[0], exp.span[1])))
                if self.is_("^"):
                    raise Refused("a double superscript")
            return self._units(base)
        finally:
            self.leave()

    def _degree_or_prime(self, base: Node) -> Node | None:
        """`^\\circ`, `^{\\circ}`: degrees; `^\\prime`, `^{\\prime}`: a prime. Consumes them when found."""
        for k, braced in ((0, False), (1, True)):
            if braced and not self.is_("{"):
                continue
            if self.is_("\\circ", k) or self.is_("\\prime", k):
                if braced and not self.is_("}", 2):
                    return None
                mark = self.peek(k).text  # type: ignore[union-attr]
                self.i += 3 if braced else 1
                if mark == "\\circ":
                    return Node("degree", (base,), span=base.span)
                return self._prime(base)
        return None

    def _prime(self, base: Node) -> Node:
        if base.kind == "sym":
            return Node("sym", (), text=base.text + "'", span=base.span)  # f': a name
        return Node("prime", (base,), span=base.span)  # (x^2)': a derivative

    def postfix(self, node: Node) -> Node:
        while (tok := self.peek()) is not None:
            if tok.kind == "char" and tok.text == "!" and not (self.is_("=", 1) and not self.peek(1).spaced):  # type: ignore[union-attr]
                self.take()
                if self.is_("!") and not self.peek().spaced:  # type: ignore[union-attr]
                    self.take()
                    if self.is_("!") and not self.peek().spaced:  # type: ignore[union-attr]
                        raise Refused("a triple factorial")  # 3!!! is neither (3!!)! nor 3!
                    node = Node("fact", (node,), text="!!", span=node.span)
                else:
                    node = Node("fact", (node,), text="!", span=node.span)
            elif tok.kind == "char" and tok.text == "'":
                self.take()
                node = self._prime(node)
            elif (tok.kind == "char" and tok.text == "%") or (tok.kind == "cmd" and tok.text == "\\%"):
                self.take()
                node = Node("percent", (node,), span=node.span)
            elif tok.kind == "cmd" and tok.text == "\\degree":
                self.take()
                node = Node("degree", (node,), span=node.span)
            else:
                break
        return node

    def _units(self, node: Node) -> Node:
        """Units after a value, from the closed list (`5 \\text{ cm}^2`, `3\\text{ square units}`), then words. After
        a degree sign, C or F is its scale (`25^\\circ\\text{C}`, `25^\\circ C`, `25℃`)."""
        if node.kind == "degree" and (scale := self._temperature_scale()) is not None:
            node = Node("unit", (node,), text=scale, span=(node.span[0], self.t[self.i - 1].end))
        while (tok := self.peek()) is not None and tok.kind == "text" and (_is_unit(tok.text) or self._unit_not_called(tok)):
            self.take()
            unit = text_content(tok.text).lower() + self._take_unit_power()
            while self.is_("/") and (per := self.peek(1)) is not None and per.kind == "text" and _is_unit(per.text):
                self.i += 2  # \mathrm{~km} / \mathrm{h}: one unit
                unit += "/" + text_content(per.text).lower() + self._take_unit_power()
            node = Node("unit", (node,), text=unit, span=(node.span[0], tok.end))
        while (tok := self.peek()) is not None and tok.kind == "text" and text_kind(tok.text) == "prose":
            self.take()  # words after a value (`2 \text{ euros}`): right only where the gold carries them
            node = Node("words", (node,), text=words_key(tok.text), span=(node.span[0], tok.end))
        return node

    def _unit_not_called(self, tok: Token) -> bool:
        """A word that names a unit and a function (`9\\text{ min}`, `\\min(3, 5)`): after a value and not applied
        to a bracket, the unit."""
        nxt = self.peek(1)
        return text_content(tok.text).lower() in UNITS and not (nxt is not None and nxt.text in ("(", "\\{", "\\lbrace"))

    def _temperature_scale(self) -> str | None:
        """The scale letter after a degree sign, taken: a lone C or F, as a letter or a text; None (nothing taken)."""
        tok, nxt = self.peek(), self.peek(1)
        if tok is None or tok.kind not in ("letter", "text"):
            return None
        letter = tok.text if tok.kind == "letter" else text_content(tok.text)
        scale = TEMPERATURE_SCALES.get(letter.lower()) if letter in ("C", "F") else None
        if scale is None or (tok.kind == "letter" and nxt is not None and nxt.kind == "letter" and not nxt.spaced):
            return None
        self.take()
        return scale

    def _take_unit_power(self) -> str:
        """A unit's square or cube after it, taken: `^2` (what units.quantity reads), or "" when none."""
        n = self._unit_power()
        power = "" if not n else f"^{self.peek(1 if n == 2 else 2).text}"  # type: ignore[union-attr]
        self.i += n
        return power

    def _unit_power(self) -> int:
        """Tokens of a unit's square or cube after it (`^2`, `^{3}`), 0 when none."""
        if not self.is_("^"):
            return 0
        if self.peek(1) is not None and self.peek(1).text in ("2", "3"):  # type: ignore[union-attr]
            return 2
        if self.is_("{", 1) and self.peek(2) is not None and self.peek(2).text in ("2", "3") and self.is_("}", 3):  # type: ignore[union-attr]
            return 4
        return 0

    def argument(self) -> Node:
        """A command's argument: a braced group, or TeX's single token (one digit, letter or symbol)."""
        tok = self.peek()
        if tok is None:
            raise Refused("missing argument")
        if tok.kind == "char" and tok.text == "{":
            return self.group()
        if tok.kind == "num":
            if len(tok.text) > 1:  # \frac12: the first digit is the argument, the rest is read next
                self.undo.append((self.i, tok))
                self.t[self.i] = Token("num", tok.text[1:], tok.start + 1, tok.end, False)
            else:
                self.take()
            digit = tok.text[0]
            if not digit.isdigit():
                raise Refused("a point as an argument")
            return Node("num", text=digit, value=Fraction(int(digit)), span=(tok.start, tok.start + 1))
        if tok.kind == "letter":
            self.take()
            return Node("sym", text=tok.text, span=(tok.start, tok.end))
        if tok.kind == "cmd" and (tok.text in GREEK or tok.text in ("\\pi", "\\infty")):
            return self.primary()
        if tok.kind == "char" and tok.text in "*":  # x^*: a name mark
            self.take()
            return Node("sym", text="*", span=(tok.start, tok.end))
        if tok.kind == "char" and tok.text == "-" and self.peek(1) is not None and self.peek(1).kind == "num":  # type: ignore[union-attr]
            raise Refused("a sign as a single-token argument")  # 2^-1 renders as 2^- 1
        raise Refused(f"bad argument {tok}")

    def group(self) -> Node:
        """`{ ... }`: an expression list in braces (the braces only group)."""
        open_ = self.expect("{")
        self.enter()
        try:
            if self.is_("}"):
                raise Refused("empty group")
            inner = self.fraction()
            close = self.expect("}")
        finally:
            self.leave()
        return _respan(inner, (open_.start, close.end)) if inner.kind in ("num",) else inner

    def fraction(self) -> Node:
        """A group's content, or TeX's `a \\over b` (a quotient) and `n \\choose k` (a binomial) of the whole group."""
        top = self.items()
        tok = self.peek()
        if tok is None or tok.kind != "cmd" or tok.text not in ("\\over", "\\choose"):
            return top
        self.take()
        bottom = self.items()
        if top.kind in ("list", "rel", "conn") or bottom.kind in ("list", "rel", "conn"):
            raise Refused("a list or relation over another")
        kind = "div" if tok.text == "\\over" else "binom"
        return Node(kind, (top, bottom), span=(top.span[0], bottom.span[1]))

    def primary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise Refused("missing value")
        if tok.kind == "num":
            return self.number()
        if tok.kind == "letter":
            return self.symbol()
        if tok.kind == "text":
            self.take()
            kind = text_kind(tok.text)
            if kind == "number":
                inner = parse(tok.text)
                if inner is None:
                    raise Refused("bad text number")
                return _respan(inner, (tok.start, tok.end))
            if kind == "numberword":  # \text{twenty-one}
                return _literal(number_words(tok.text), (tok.start, tok.end))  # type: ignore[arg-type]
            if kind == "quantity":  # \text{5 cm}: the number and its unit in one text
                number, unit = quantity_parts(tok.text)  # type: ignore[misc]
                inner = parse(number)
                if inner is None or inner.kind != "num":
                    raise Refused("bad number in a text")
                return Node("unit", (_respan(inner, (tok.start, tok.end)),), text=unit.lower(), span=(tok.start, tok.end))
            if kind == "math":  # \text{$12$}: math mode inside the text (once: each level would read it again)
                body = text_content(tok.text)[1:-1]
                inner = None if "$" in body else parse(body)
                if inner is None:
                    raise Refused("bad math in text")
                return _respan(inner, (tok.start, tok.end))
            letter = choice_letter(tok.text) or text_content(tok.text)
            if kind == "choice" or (kind == "letter" and letter.isupper() and not self.src.startswith(_MATH_LETTERS, tok.start)):
                nxt = self.peek()
                if nxt is not None and (nxt.kind == "num" or nxt.text in _CHOICE_VALUE_STARTS):
                    value = self.expr()  # \textbf{(B)}\ 32: the answer line of a multiple-choice contest
                    return Node("choice", (value,), text=letter, span=(tok.start, value.span[1]))
                return Node("choice", text=letter, span=(tok.start, tok.end))  # \text{(B)}, \text{B}: a choice
            if kind == "letter":  # \mathrm{e}, \text{i}, \mathrm{B}: the letter as a name
                return self._subscripted(Node("sym", text=text_content(tok.text), span=(tok.start, tok.end)))
            if kind == "function":
                return self.function("\\" + tok.text.strip(), tok)
            return Node("text", text=" ".join(tok.text.lower().split()), span=(tok.start, tok.end))
        text = tok.text
        if tok.kind == "char":
            if text == "{":
                return self.group()
            if text in "([":
                return self.bracket()
            if text == "|":
                return self.delimited("|", "|", "abs")
            raise Refused(f"unexpected {text}")
        if text in _OPEN:
            return self.bracket()
        if text == "\\lvert":
            return self.delimited("\\lvert", "\\rvert", "abs")
        if text == "\\lfloor":
            return self.delimited("\\lfloor", "\\rfloor", "floor")
        if text == "\\lceil":
            return self.delimited("\\lceil", "\\rceil", "ceil")
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
        if text == "\\imath":
            self.take()
            return Node("sym", text="i", span=(tok.start, tok.end))
        if text in ("\\pi", "\\infty"):
            self.take()
            return Node("const", text=text[1:], span=(tok.start, tok.end))
        if text in ("\\sum", "\\prod"):
            self.take()  # a sum or product over a range: read whole, decided by the symbolic check
            bounds = []
            for mark in ("_", "^"):
                if self.is_(mark):
                    self.take()
                    bounds.append(self.argument())
            body = self.term()
            node = Node("bigop", (body, *bounds), text=text[1:], span=(tok.start, body.span[1]))
            return expand_bigop(node) or node
        if text in GREEK:
            self.take()
            return self._subscripted(Node("sym", text=text, span=(tok.start, tok.end)))
        if text in FUNCTIONS:
            return self.function(text, tok)
        if text in STYLES:
            self.take()
            inner = self.argument()
            return inner
        if text in ("\\mathbb", "\\mathcal"):
            self.take()
            arg = self.argument()
            if arg.kind != "sym":
                raise Refused("a blackboard letter")
            return self._subscripted(Node("sym", text=f"{text}{{{arg.text}}}", span=(tok.start, arg.span[1])))
        if text in ACCENTS:
            self.take()
            arg = self.argument()
            if not all(n.kind in ("sym", "mul") for n in arg.walk()):
                raise Refused("an accent over a value")
            return self._subscripted(Node("sym", text=f"{text}{{{self.src[arg.span[0]:arg.span[1]]}}}", span=(tok.start, arg.span[1])))
        if text in NAME_PREFIXES:
            self.take()
            arg = self.symbol_run()
            return Node("sym", text=f"{text}{{{arg}}}", span=(tok.start, self.t[self.i - 1].end))
        if text == "\\begin":
            return self.matrix()
        if text in ("\\emptyset", "\\varnothing"):
            self.take()
            return Node("set", (), text="{}", span=(tok.start, tok.end))
        if text in ("\\ldots", "\\cdots", "\\dots"):
            self.take()
            return Node("ellipsis", span=(tok.start, tok.end))
        if text == "\\$":
            self.take()
            value = self.factor()
            return Node("unit", (value,), text="$", span=(tok.start, value.span[1]))
        if text in ("\\color", "\\textcolor"):
            self.take()
            self.argument()  # the colour's name: shown as colour, not as content
            return self.primary()
        raise Refused(f"unknown command {text}")

    def symbol_run(self) -> str:
        letters = []
        while (tok := self.peek()) is not None and tok.kind == "letter" and (not letters or not tok.spaced):
            letters.append(self.take().text)
        if not letters:
            raise Refused("a name prefix without a name")
        return "".join(letters)

    def symbol(self) -> Node:
        tok = self.take()
        node = Node("sym", text=tok.text, span=(tok.start, tok.end))
        if tok.text == "e" and self.is_("-") is False and self.peek() is not None and self.peek().kind == "num":  # type: ignore[union-attr]
            raise Refused("a number right after e")
        return self._subscripted(node)

    def _subscripted(self, node: Node) -> Node:
        if not self.is_("_"):
            return node
        self.take()
        if self.is_("{"):
            end = self._raw_group()
            sub_text = "".join(t.text for t in self.t[end[0] : end[1]])
            last = self.t[end[1]].end
            self.i = end[1] + 1
        else:
            sub = self.argument()
            sub_text, last = self.src[sub.span[0] : sub.span[1]], sub.span[1]
        return Node("sym", text=node.text + "_{" + sub_text + "}", span=(node.span[0], last))

    def _raw_group(self) -> tuple[int, int]:
        """A subscript's braced tokens, read as a name (`a_{n+1}`, `m_{\\max}`): (first, closing) indices."""
        depth, j = 0, self.i
        while j < len(self.t):
            tok = self.t[j]
            if tok.kind == "char" and tok.text == "{":
                depth += 1
            elif tok.kind == "char" and tok.text == "}":
                depth -= 1
                if depth == 0:
                    if j == self.i + 1:
                        raise Refused("an empty subscript")
                    return self.i + 1, j
            j += 1
        raise Refused("an unclosed subscript")

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
        if power is not None and name in INVERTIBLE and _integer(power) == -1:
            name, power = INVERTIBLE[name], None  # \tan^{-1} x is arctan x, never 1/tan x
        node = Node("func", tuple(argv), text=name[1:], span=(tok.start, end))
        if base is not None:
            node = Node("func", (*argv, base), text="log_base", span=node.span)
        if power is not None:
            node = Node("pow", (node, power), span=node.span)
        return node

    def _function_argument(self) -> Node:
        """A function's argument without parentheses: TeX's implied product up to the next operator, bracket or
        function (`\\sin 2x` is sin(2x), `\\sin x \\cos x` is sin(x) cos(x), `\\sin 30^\\circ` is sin of 30 degrees)."""
        start = self.i
        factors = [self.factor()]
        while (tok := self.peek()) is not None and (tok.kind == "letter" or tok.text in GREEK or tok.text == "\\pi"):
            factors.append(self.factor())
        return self._product(factors, start)

    def _factorial_product(self) -> bool:
        """`8!2!`: a number right after a factorial is the next factorial of a product, when it has its own `!`."""
        nxt = self.peek(1)
        return self.t[self.i - 1].text == "!" and nxt is not None and nxt.kind == "char" and nxt.text == "!"

    def number(self) -> Node:
        tok = self.take()
        text = "".join(c for c in tok.text if c.isdigit() or c == ".")
        if len(text) > MAX_DIGITS:
            raise Refused("a number longer than any answer's")  # and int() would refuse past 4300 digits
        whole, _, frac = text.partition(".")
        places = len(frac) if "." in text else None
        value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
        end = tok.end
        # scientific notation: 1.5e6, 1e-12 (the e right after the digits), 1.5 \times 10^{6}
        nxt = self.peek()
        if nxt is not None and nxt.kind == "letter" and nxt.text in "eE" and not nxt.spaced:
            exp = self._e_exponent()
            if exp is not None:
                if abs(exp) > MAX_DIGITS:
                    raise Refused("an exponent beyond the digits an answer is read to")
                places = (places or 0) - exp
                value, end = value * Fraction(10) ** exp, self.t[self.i - 1].end
        elif self.is_("\\times") and self._ten_power_follows():
            self.take()
            self.take()  # 10
            self.take()  # ^
            exp_node = self.argument()
            exp = _integer(exp_node)
            if exp is None or abs(exp) > MAX_DIGITS:
                raise Refused("a bad exponent")
            places = (places or 0) - exp
            value, end = value * Fraction(10) ** exp, exp_node.span[1]
        elif any(self.is_(bar) for bar in REPEAT_MARKS) and places is not None:
            self.take()
            rep = self.argument()
            if rep.kind != "num" or rep.places is not None:
                raise Refused("a bad repeating part")
            period = rep.text
            value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(frac))
            places, end = None, rep.span[1]  # exact: 0.1\overline{6} = 1/6
        elif self.is_("_") and places is None:
            return self._based(tok.text, tok)
        elif places is None and self.peek() is not None and self.peek().text in ("\\frac", "\\dfrac", "\\tfrac"):  # type: ignore[union-attr]
            return self._mixed(tok, value)
        return Node("num", text=tok.text, value=value, places=places, span=(tok.start, end))

    def _mixed(self, tok: Token, whole: Fraction) -> Node:
        """`918\\frac{1}{2}` (or `918 \\frac{1}{2}`: TeX drops the space) renders as the mixed number 918 1/2; `2\\frac{\\pi}{3}` is a product.
        Integer literals over integer literals that do not form a proper fraction are refused."""
        save, mark = self.i, len(self.undo)
        frac = self.primary()
        a, b = frac.children
        if a.kind != "num" or b.kind != "num" or a.places is not None or b.places is not None:
            self.i = save
            while len(self.undo) > mark:
                index, original = self.undo.pop()
                self.t[index] = original
            return Node("num", text=tok.text, value=whole, places=None, span=(tok.start, tok.end))
        if not 0 < a.value < b.value:  # type: ignore[operator]
            raise Refused("an improper mixed number")
        value = whole + a.value / b.value  # type: ignore[operator]
        return Node("num", text=self.src[tok.start : frac.span[1]], value=value, places=None, span=(tok.start, frac.span[1]))

    def _e_exponent(self) -> int | None:
        """After digits: e6, e-12, E+3 (no spaces); consumes it. None (nothing consumed) otherwise."""
        j = self.i + 1
        sign = 1
        tok = self.t[j] if j < len(self.t) else None
        if tok is not None and tok.kind == "char" and tok.text in "+-" and not tok.spaced:
            sign = -1 if tok.text == "-" else 1
            j += 1
            tok = self.t[j] if j < len(self.t) else None
        if tok is None or tok.kind != "num" or tok.spaced or not tok.text.isdigit() or len(tok.text) > 5:
            return None
        self.i = j + 1
        return sign * int(tok.text)

    def _ten_power_follows(self) -> bool:
        ten, hat = self.peek(1), self.peek(2)
        return ten is not None and ten.kind == "num" and ten.text == "10" and hat is not None and hat.text == "^"

    def _based(self, digits: str, tok: Token) -> Node:
        """`1010_2`, `123_{10}`: the subscript is the base, and the digits must be digits of it."""
        self.take()  # _
        base_node = self.argument()
        base = _integer(base_node)
        if len(digits) > MAX_DIGITS or base is None or not 2 <= base <= 36 or any(int(d, 36) >= base for d in digits if d != ","):
            raise Refused("a bad base")
        value = Fraction(int(digits.replace(",", ""), base))
        return Node("num", text=f"{digits}_{base}", value=value, places=None, span=(tok.start, base_node.span[1]))

    def bracket(self) -> Node:
        """( ), [ ], \\{ \\}, \\langle \\rangle and the half-open intervals ( ] and [ )."""
        open_tok = self.take()
        opener = open_tok.text
        self.enter()
        try:
            if opener in ("\\{", "\\lbrace") and (self.is_("\\}") or self.is_("\\rbrace")):
                close = self.take()
                return Node("set", (), text="{}", span=(open_tok.start, close.end))
            if opener in ("\\{", "\\lbrace") and self.is_("\\begin") and (pieces := self._braced_pieces(open_tok)):
                return pieces
            if opener in ("\\{", "\\lbrace") and self._set_builder_ahead():
                return self._set_builder(open_tok)
            inner = self.items()
            close = self.take()
        finally:
            self.leave()
        pair = opener + close.text
        items = inner.children if inner.kind == "list" else (inner,)
        span = (open_tok.start, close.end)
        if pair in ("()", "[]") and inner.kind == "matrix":
            return _respan(inner, span)  # \left[\begin{array}...\end{array}\right]
        if pair in ("()", "[]") and inner.kind != "list":
            return _respan(inner, span, paren=True) if pair == "()" else Node("list1", (inner,), text="[]", span=span)
        if pair in ("\\{\\}", "\\lbrace\\rbrace"):
            return Node("set", items, text="{}", span=span)
        if pair == "\\langle\\rangle":
            return Node("tuple", items, text="<>", span=span)
        if pair in ("()", "[]", "(]", "[)", "\\lbrack\\rbrack"):
            if inner.text not in ("", ",") and (inner.text != ";" or any(c.kind == "list" for c in items)):
                raise Refused("a bracket list separated by words, or by semicolons and commas")  # (0; -2; 6) is a triple
            kind = "tuple" if pair == "()" else "interval"
            return Node(kind, items, text=pair, span=span)
        raise Refused(f"mismatched brackets {pair}")

    def _set_builder_ahead(self) -> bool:
        """`\\{x : ...`, `\\{x \\mid ...`, `\\{x | ...`, `\\{x \\in \\mathbb{R} : ...`: a name, maybe its domain, then the bar."""
        tok = self.peek()
        if tok is None or tok.kind != "letter":
            return None  # type: ignore[return-value]
        for k in range(1, 8):
            nxt = self.peek(k)
            if nxt is None or nxt.text in (",", ";", "\\}", "\\rbrace", "=") or (k == 1 and nxt.text != "\\in" and nxt.text not in SET_BARS):
                return False
            if nxt.text in SET_BARS:
                return True
        return False

    def _set_builder(self, open_tok: Token) -> Node:
        """`\\{x \\in \\mathbb{R} : x > 2\\}`: the set of the name's values for which the condition holds."""
        var = self.symbol()
        domain = None
        if self.is_("\\in"):
            self.take()
            domain = self.factor()
        self.take()  # the bar
        cond = self._condition()
        close = self.take()
        if close.text not in ("\\}", "\\rbrace"):
            raise Refused("a set-builder not closed by a brace")
        kids = (var, cond) if domain is None else (var, cond, domain)
        return Node("setbuilder", kids, span=(open_tok.start, close.end))

    def _braced_pieces(self, open_tok: Token) -> Node | None:
        """`\\left\\{ \\begin{array}{ll} ... \\end{array} \\right.`: a piecewise function (the brace opens it, and
        `\\right.` closes nothing); None (nothing read) before any other environment."""
        save = self.i
        begin = self.take()
        if self._env_name() != "array":
            self.i = save
            return None
        node = self.piecewise(begin, "array")
        if self.is_("."):
            self.take()
        elif self.peek() is not None:
            raise Refused("a piecewise brace closed by something")
        return Node(node.kind, node.children, span=(open_tok.start, node.span[1]))

    def delimited(self, opener: str, closer: str, kind: str) -> Node:
        open_tok = self.expect(opener)
        self.enter()
        try:
            inner = self.expr()
            close = self.expect(closer)
        finally:
            self.leave()
        return Node(kind, (inner,), span=(open_tok.start, close.end))

    def matrix(self) -> Node:
        begin = self.take()
        env = self._env_name()
        if env in PIECEWISE:
            return self.piecewise(begin, env)
        if env not in MATRICES:
            raise Refused(f"environment {env}")
        if env == "array":  # its column specification: letters only (c, l, r)
            self._env_name()
        rows: list[Node] = []
        row: list[Node] = []
        self.enter()
        try:
            while True:
                row.append(self.expr())
                if self.is_("&"):
                    self.take()
                    continue
                if self.is_("\\\\"):
                    self.take()
                    rows.append(Node("row", tuple(row)))
                    row = []
                    if self.is_("\\end"):
                        break
                    continue
                break
            if row:
                rows.append(Node("row", tuple(row)))
            self.expect("\\end")
            if self._env_name() != env:
                raise Refused("environments do not match")
        finally:
            self.leave()
        if len({len(r.children) for r in rows}) != 1:
            raise Refused("ragged matrix")
        return Node("matrix", tuple(rows), text=f"{len(rows)}x{len(rows[0].children)}", span=(begin.start, self.t[self.i - 1].end))

    def piecewise(self, begin: Token, env: str) -> Node:
        """`\\begin{cases} value & condition \\\\ ... \\end{cases}` (also `array` after `\\left\\{`): pieces of
        (value, condition); a condition may open with "if"/"for"/"when" and may be "otherwise"."""
        if env == "array":
            self._env_name()  # the column specification
        pieces: list[Node] = []
        self.enter()
        try:
            while not self.is_("\\end"):
                value = self.expr()
                self._skip_chars(",")
                self.expect("&")
                pieces.append(Node("piece", (value, self._condition())))
                self._skip_chars(",.;")
                if not self.is_("\\\\"):
                    break
                self.take()
            self.expect("\\end")
            if self._env_name() != env:
                raise Refused("environments do not match")
        finally:
            self.leave()
        if not pieces:
            raise Refused("no pieces")
        return Node("piecewise", tuple(pieces), span=(begin.start, self.t[self.i - 1].end))

    def _condition(self) -> Node:
        tok = self.peek()
        if tok is not None and tok.kind == "text" and text_content(tok.text).lower() in OTHERWISE:
            self.take()
            return Node("otherwise", span=(tok.start, tok.end))
        if tok is not None and tok.kind == "text" and text_content(tok.text).lower() in CONDITION_WORDS:
            self.take()
        start, parts, ops = self.i, [self.relation()], []
        while (tok := self.peek()) is not None:
            if tok.kind == "cmd" and tok.text in CONNECTIVES and tok.text != "\\\\":  # a line break ends a row
                ops.append(CONNECTIVES[self.take().text])
            elif tok.kind == "text" and (word := connective(tok.text)) is not None:
                self.take()
                ops.append(word)  # x < 0 \text{ or } x > 1
            else:
                break
            parts.append(self.relation())
        return parts[0] if not ops else Node("conn", tuple(parts), text=",".join(ops), span=self._span(start))

    def _skip_chars(self, chars: str) -> None:
        while (tok := self.peek()) is not None and tok.kind == "char" and tok.text in chars:
            self.take()

    def _env_name(self) -> str:
        self.expect("{")
        name = []
        while (tok := self.peek()) is not None and tok.kind == "letter":
            name.append(self.take().text)
        self.expect("}")
        return "".join(name)

    def _span(self, start: int) -> tuple[int, int]:
        first = self.t[start] if start < len(self.t) else None
        last = self.t[self.i - 1] if self.i > 0 else None
        return (first.start if first else 0, last.end if last else 0)


MAX_TERMS = 200  # a sum or product with numeric bounds is written out up to this many terms


def expand_bigop(node: Node) -> Node | None:
    """A sum or product over `k = a` to `b` as what it stands for: with integer bounds, its terms written out
    (`\\sum_{k=1}^{3} k^2` is 1 + 4 + 9); a geometric series `\\sum c r^k` in closed form, to a symbolic bound or
    (|r| < 1) to infinity. None where it is neither (the symbolic check reads it as written)."""
    if len(node.children) != 3:
        return None
    body, lower, upper = node.children
    if lower.kind != "rel" or lower.text != "=" or lower.children[0].kind != "sym":
        return None
    var, start = lower.children[0].text, _integer(lower.children[1])
    if start is None:
        return None
    stop = _integer(upper)
    if stop is not None:
        count = stop - start + 1
        if count > MAX_TERMS or count * sum(1 for _ in body.walk()) > MAX_TOKENS:
            return None
        terms = [substitute(body, var, _literal(k, node.span)) for k in range(start, stop + 1)]
        if not terms:
            return _literal(0 if node.text == "sum" else 1, node.span)
        return terms[0] if len(terms) == 1 else Node("add" if node.text == "sum" else "mul", tuple(terms), span=node.span)
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
    first = Node("pow", (ratio, _literal(start, span)), span=span)
    if upper.kind == "const" and upper.text == "infty":
        if r is None or abs(r) >= 1:
            return None
        top = first
    elif var in _names(upper):
        return None
    else:
        last = Node("pow", (ratio, Node("add", (upper, _literal(1, span)), span=span)), span=span)
        top = Node("add", (first, Node("neg", (last,), text="-", span=span)), span=span)
    one_less = Node("add", (_literal(1, span), Node("neg", (ratio,), text="-", span=span)), span=span)
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
            return body.children[0], Node("div", (_literal(1, body.span), inner[1]), span=body.span)
    if body.kind == "mul":
        powers = [c for c in body.children if var in _names(c)]
        if len(powers) == 1 and (inner := _ratio_form(powers[0], var)) is not None and inner[0] is None:
            rest = tuple(c for c in body.children if c is not powers[0])
            return (rest[0] if len(rest) == 1 else Node("mul", rest, span=body.span)), inner[1]
    return None


def substitute(node: Node, name: str, value: Node) -> Node:
    """`node` with the unknown `name` replaced by `value` everywhere."""
    if node.kind == "sym" and node.text == name:
        return _respan(value, node.span, node.paren)
    if not node.children:
        return node
    return Node(node.kind, tuple(substitute(c, name, value) for c in node.children), node.text, node.value,
                node.places, node.span, node.paren)


def _names(node: Node) -> set[str]:
    return {n.text for n in node.walk() if n.kind == "sym"}


def _literal(k: int, span: tuple[int, int]) -> Node:
    num = Node("num", text=str(abs(k)), value=Fraction(abs(k)), span=span)
    return num if k >= 0 else Node("neg", (num,), text="-", span=span)


def _rational(node: Node) -> Fraction | None:
    """The value of an integer or a quotient of integers, maybe negated; None for anything else."""
    if node.kind == "div":
        a, b = _rational(node.children[0]), _rational(node.children[1])
        return None if a is None or not b else a / b
    k = _integer(node)
    return None if k is None else Fraction(k)


def _is_unit(content: str) -> bool:
    """A `\\text{...}` that is a unit: words from the closed list, or one letter of it (`8 \\text{ m}`, `5 \\mathrm{~g}`)."""
    kind = text_kind(content)
    return kind == "unit" or (kind == "letter" and text_content(content) in UNITS)


def _respan(node: Node, span: tuple[int, int], paren: bool = False) -> Node:
    return Node(node.kind, node.children, node.text, node.value, node.places, span, paren or node.paren)


def _bare_number(node: Node) -> bool:
    """A number literal, maybe with a sign, percent, degrees or unit: never the right side of an implied product."""
    while node.kind in ("neg", "percent", "degree", "unit", "words") and node.children:
        node = node.children[0]
    return node.kind == "num"


def _integer(node: Node) -> int | None:
    """An integer literal, possibly negated; None for anything else."""
    if node.kind == "num" and node.places is None and node.value is not None and node.value.denominator == 1:
        return int(node.value)
    if node.kind == "neg" and node.children[0].kind == "num":
        inner = _integer(node.children[0])
        return None if inner is None else -inner
    return None


def parse(text: str) -> Node | None:
    """The tree of `text` (without outer delimiters), or None when some part of it cannot be read."""
    toks = tokens(text)
    if not toks or len(toks) > MAX_TOKENS:
        return None
    try:
        return _Reader(toks, text).answer()
    except (Refused, RecursionError):
        return None

