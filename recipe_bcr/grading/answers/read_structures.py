"""Brackets (tuples, intervals, sets, lists), absolute values, floors, matrices, piecewise functions, set-builders."""

from __future__ import annotations

from recipe_bcr.grading.answers.lex import Token
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.read_base import (
    _OPEN,
    CONDITION_WORDS,
    CONNECTIVES,
    MATRICES,
    OTHERWISE,
    PIECEWISE,
    SET_BARS,
    ReaderBase,
    Refused,
    respan,
)

_ISO = {"][": "()", "[[": "[)", "]]": "(]"}  # ISO 80000-2: a bracket turned outward leaves its endpoint out
_DELIMITED = {"\\lvert": ("\\rvert", "abs"), "\\lfloor": ("\\rfloor", "floor"), "\\lceil": ("\\rceil", "ceil")}


class StructureReader(ReaderBase):
    """Containers and environments."""

    def structure(self, tok: Token) -> Node | None:
        """A bracket, `|...|`, a floor or ceiling, an environment, the empty set; None for anything else."""
        text = tok.text
        if tok.kind == "char":
            if text == "{":
                return self.group()
            if text in "([]":  # `]2, 5[`: an ISO interval opens with a reversed bracket
                return self.bracket()
            if text == "|":
                return self.delimited("|", "|", "abs")
            raise Refused(f"unexpected {text}")
        if text in _OPEN:
            return self.bracket()
        if text in _DELIMITED:
            return self.delimited(text, *_DELIMITED[text])
        if text == "\\begin":
            return self.matrix()
        if text in ("\\emptyset", "\\varnothing"):
            self.take()
            return Node("set", (), text="{}", span=(tok.start, tok.end))
        return None

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
        pair = _ISO.get(opener + close.text, opener + close.text)
        items = inner.children if inner.kind == "list" else (inner,)
        span = (open_tok.start, close.end)
        if pair in ("()", "[]") and inner.kind == "matrix":
            return respan(inner, span)  # \left[\begin{array}...\end{array}\right]
        if pair in ("()", "[]") and inner.kind != "list":
            return respan(inner, span, paren=True) if pair == "()" else Node("list1", (inner,), text="[]", span=span)
        if pair in ("\\{\\}", "\\lbrace\\rbrace"):
            return Node("set", items, text="{}", span=span)
        if pair == "\\langle\\rangle":
            return Node("tuple", items, text="<>", span=span)
        if pair in ("()", "[]", "(]", "[)", "\\lbrack\\rbrack"):
            if inner.text not in ("", ",") and (inner.text != ";" or any(c.kind == "list" for c in items)):
                raise Refused("a bracket list separated by words, or by semicolons and commas (not (0; -2; 6))")
            kind = "tuple" if pair == "()" else "interval"
            return Node(kind, items, text=pair, span=span)
        raise Refused(f"mismatched brackets {pair}")

    def _set_builder_ahead(self) -> bool:
        """`\\{x : ...`, `\\{x \\mid ...`, `\\{x \\in \\mathbb{R} : ...`: a name, maybe its domain, then the bar."""
        tok = self.peek()
        if tok is None or tok.kind != "letter":
            return False
        for k in range(1, 8):
            nxt = self.peek(k)
            if nxt is None or nxt.text in (",", ";", "\\}", "\\rbrace", "="):
                return False
            if k == 1 and nxt.text != "\\in" and nxt.text not in SET_BARS:
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
        """`\\left\\{ \\begin{array}...\\right.`: a piecewise function; None before any other environment."""
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
        shape = f"{len(rows)}x{len(rows[0].children)}"
        return Node("matrix", tuple(rows), text=shape, span=(begin.start, self.t[self.i - 1].end))

    def piecewise(self, begin: Token, env: str) -> Node:
        """Pieces of (value, condition); a condition may open with "if"/"for"/"when" or be "otherwise"."""
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
        if tok is not None and tok.kind == "text" and self.said(tok).content.lower() in OTHERWISE:
            self.take()
            return Node("otherwise", span=(tok.start, tok.end))
        if tok is not None and tok.kind == "text" and self.said(tok).content.lower() in CONDITION_WORDS:
            self.take()
        start, parts, ops = self.i, [self.relation()], []
        while (tok := self.peek()) is not None:
            if tok.kind == "cmd" and tok.text in CONNECTIVES and tok.text != "\\\\":  # a line break ends a row
                ops.append(CONNECTIVES[self.take().text])
            elif tok.kind == "text" and (word := self.said(tok).connective) is not None:
                self.take()
                ops.append(word)  # x < 0 \text{ or } x > 1
            else:
                break
            parts.append(self.relation())
        return parts[0] if not ops else Node("conn", tuple(parts), text=",".join(ops), span=self._span(start))

    def _env_name(self) -> str:
        self.expect("{")
        name = []
        while (tok := self.peek()) is not None and tok.kind == "letter":
            name.append(self.take().text)
        self.expect("}")
        return "".join(name)
