"""An answer read into a tree in which every token is accounted for, or None: a recursive-descent reader over the
lexer's tokens (this file the grammar; each family of forms in a read_*.py of its own)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from fractions import Fraction

from recipe_bcr.grading.answers.lex import Token, tokens, tokens_all
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.read_base import (
    ACCENTS,
    CONNECTIVES,
    FACTOR_STARTS,
    FUNCTIONS,
    GREEK,
    MAX_DEPTH,
    MAX_TOKENS,
    NAME_PREFIXES,
    RELATIONS,
    STYLES,
    Refused,
    bare_number,
    respan,
)
from recipe_bcr.grading.answers.read_functions import FunctionReader
from recipe_bcr.grading.answers.read_numbers import NumberReader
from recipe_bcr.grading.answers.read_structures import StructureReader
from recipe_bcr.grading.answers.read_text import TextReader
from recipe_bcr.grading.answers.words import Text, read_texts

__all__ = ["MAX_DEPTH", "MAX_TOKENS", "Node", "Refused", "parse", "parse_all"]


class _Reader(NumberReader, FunctionReader, StructureReader, TextReader):
    """The grammar of an answer; each family of forms is read by its own reader (read_*.py)."""

    def __init__(self, toks: list[Token], source: str, texts: dict[str, Text]) -> None:
        self.t = toks
        self.texts = texts
        self.i = 0
        self.depth = 0
        self.src = source
        self.undo: list[tuple[int, Token]] = []  # tokens split by single-digit arguments, to restore on a re-read

    def answer(self) -> Node:
        """The whole answer; a leading "=" and a closing period, comma or line break say nothing."""
        while self.t and (
            self.t[-1].text in (".", ",", "\\\\")
            and self.t[-1].kind in ("char", "cmd")
            or self.t[-1].kind == "text"
            and self.t[-1].text.strip() == "."
        ):
            self.t.pop()
        if self.is_("=") and not self.is_("=", 1):
            self.take()
        node = self.fraction()
        if self.peek() is not None:
            raise Refused(f"unread token {self.peek()}")
        return node

    def items(self) -> Node:
        """A list: items separated by commas, semicolons or the words or/and."""
        start, parts, seps = self.i, [self.connected()], []
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "char" and tok.text in ",;":
                seps.append(self.take().text)
                nxt = self.peek()
                if nxt is not None and nxt.kind == "text" and self.said(nxt).kind == "connective":
                    seps.append(self.said(self.take()).connective)  # type: ignore[arg-type] # 2, 3, and 4
            elif tok is not None and tok.kind == "text" and self.said(tok).kind == "connective":
                seps.append(self.said(tok).connective)  # type: ignore[arg-type]
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
            parts = [
                g[0] if len(g) == 1 else Node("list", tuple(g), text=",", span=(g[0].span[0], g[-1].span[1]))
                for g in groups
            ]
            seps = [s for s in seps if s != ","]
        return Node("list", tuple(parts), text="".join(sorted(set(seps))), span=self._span(start))

    def connected(self) -> Node:
        start, parts, ops = self.i, [self.relation()], []
        while (tok := self.peek()) is not None and tok.kind in ("cmd", "char") and tok.text in CONNECTIVES:
            ops.append(CONNECTIVES[self.take().text])
            parts.append(self.relation())
        if not ops:
            return parts[0]
        return Node("conn", tuple(parts), text=",".join(ops), span=self._span(start))

    def relation(self) -> Node:
        start, parts, ops = self.i, [self.expr()], []
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
        ops, terms = [self._sign() or "+"], [self.term()]
        while (sign := self._sign()) is not None:
            ops.append(sign)
            terms.append(self.term())
        if len(terms) == 1 and ops[0] == "+":
            return terms[0]
        out = [
            t if op == "+" else Node("neg" if op == "-" else "pm", (t,), text=op, span=t.span)
            for op, t in zip(ops, terms)
        ]
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
        start, factors, ops = self.i, [self.signed_factor()], ["*"]
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
                if (tok.kind == "text" or tok.text in STYLES) and bare_number(factors[-1]):
                    raise Refused("two numbers side by side")  # \boxed{3} \boxed{5}, 3 \text{5}
            else:
                break
        if len(factors) == 1:
            return factors[0]
        prod = [factors[0]]
        for op, f in zip(ops[1:], factors[1:]):
            if op == "/":
                prod = [Node("div", (self._product(prod), f), span=(prod[0].span[0], f.span[1]))]
            else:
                prod.append(f)
        return self._product(prod, start)

    def _product(self, parts: list[Node], start: int | None = None) -> Node:
        if len(parts) == 1:
            return parts[0]
        return Node(
            "mul", tuple(parts), span=self._span(start) if start is not None else (parts[0].span[0], parts[-1].span[1])
        )

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
            return self.said(tok).kind in ("number", "math", "letter", "function")
        if tok.kind == "char":  # "|" never starts an implied product: 3 | 5 is no product; nor a "[" that closes
            return tok.text == "(" or (tok.text == "[" and not self._closes(1))  # an ISO interval: `[2, 5[`
        return tok.text in FACTOR_STARTS or tok.text in FUNCTIONS or tok.text in GREEK or tok.text in ACCENTS

    def _closes(self, k: int) -> bool:
        """The token k ahead ends an item: a "[" before it closes an ISO interval."""
        tok = self.peek(k)
        return tok is None or tok.text in (",", ";", ")", "]") or tok.text in CONNECTIVES

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
        if tok.kind == "cmd" and tok.text == "\\odot":  # M_\odot: the Sun's mark on a name
            self.take()
            return Node("sym", text=tok.text, span=(tok.start, tok.end))
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
        return respan(inner, (open_.start, close.end)) if inner.kind in ("num",) else inner

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
        """One value, read by the family its first token opens: a number, a name, a text, a structure, a function."""
        tok = self.peek()
        if tok is None:
            raise Refused("missing value")
        if tok.kind == "num":
            return self.number()
        if tok.kind == "letter":
            return self.symbol()
        if tok.kind == "text":
            return self.text_value()
        node = self.structure(tok)
        if node is None:
            node = self.function_command(tok)
        return node if node is not None else self.name_command(tok)

    def name_command(self, tok: Token) -> Node:
        """Commands that name a value: Greek letters, pi, infinity, styled and accented names, `\\$`."""
        text = tok.text
        if text == "\\imath":
            self.take()
            return Node("sym", text="i", span=(tok.start, tok.end))
        if text in ("\\pi", "\\infty"):
            self.take()
            return Node("const", text=text[1:], span=(tok.start, tok.end))
        if text in GREEK:
            self.take()
            return self._subscripted(Node("sym", text=text, span=(tok.start, tok.end)))
        if text in STYLES:
            self.take()
            return self.argument()
        if text in ("\\mathbb", "\\mathcal"):
            self.take()
            arg = self.argument()
            if arg.kind != "sym":
                raise Refused("a blackboard letter")
            name = Node("sym", text=f"{text}{{{arg.text}}}", span=(tok.start, arg.span[1]))
            return self._half_line(name) or self._subscripted(name)
        if text in ACCENTS:
            self.take()
            arg = self.argument()
            if not all(n.kind in ("sym", "mul") for n in arg.walk()):
                raise Refused("an accent over a value")
            return self._subscripted(
                Node("sym", text=f"{text}{{{self.src[arg.span[0] : arg.span[1]]}}}", span=(tok.start, arg.span[1]))
            )
        if text in NAME_PREFIXES:
            self.take()
            arg = self.symbol_run()
            return Node("sym", text=f"{text}{{{arg}}}", span=(tok.start, self.t[self.i - 1].end))
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

    def _half_line(self, name: Node) -> Node | None:
        """`\\mathbb{R}_{\\ge 0}` as the set-builder it stands for; None (nothing taken) otherwise."""
        if name.text != "\\mathbb{R}" or not (self.is_("_") and self.is_("{", 1)):
            return None
        save = self.i
        self.i += 2
        op = self._relop()
        if op is None or op not in ("<", "<=", ">", ">="):
            self.i = save
            return None
        bound = self.expr()
        close = self.expect("}")
        x = Node("sym", text="x", span=name.span)
        return Node("setbuilder", (x, Node("rel", (x, bound), text=op)), span=(name.span[0], close.end))

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

    def nested(self, text: str) -> Node | None:
        """A tree read from text inside this answer (`\\text{$12$}`): a reader of its own."""
        return parse(text)


def parse(text: str) -> Node | None:
    """The tree of `text` (without outer delimiters), or None when some part of it cannot be read."""
    toks = tokens(text)
    return _tree(toks, text, read_texts([t.text for t in toks or () if t.kind == "text"]))


def parse_all(texts: Sequence[str]) -> list[Node | None]:
    """The trees of a check's answers, lexed together; a short answer's tree is kept (rollouts repeat answers)."""
    with _LOCK:
        known = {text: _CACHE[text] for text in texts if text in _CACHE}
    fresh = [text for text in dict.fromkeys(texts) if text not in known]
    lexed = tokens_all(fresh)
    said = read_texts([t.text for toks in lexed for t in toks or () if t.kind == "text"]) if fresh else {}
    for text, toks in zip(fresh, lexed):
        known[text] = _tree(toks, text, said)
    with _LOCK:
        _CACHE.update((text, known[text]) for text in fresh if len(text) <= _CACHE_CHARS)
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    return [known[text] for text in texts]


_CACHE: dict[str, Node | None] = {}
_CACHE_CHARS, _CACHE_SIZE = 256, 65536  # longer answers are rarely repeated and would fill the memory
_LOCK = threading.Lock()


def _tree(toks: list[Token] | None, text: str, texts: dict[str, Text]) -> Node | None:
    if not toks or len(toks) > MAX_TOKENS:
        return None
    try:
        return _Reader(toks, text, texts).answer()
    except (Refused, RecursionError):
        return None
