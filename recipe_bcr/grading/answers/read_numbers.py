"""Numbers as written: places, scientific notation, a base subscript, repeating decimals, mixed numbers."""

from __future__ import annotations

from fractions import Fraction

from recipe_bcr.grading.answers.lex import Token
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.normalize import MAX_DIGITS
from recipe_bcr.grading.answers.read_base import REPEAT_MARKS, ReaderBase, Refused, integer


class NumberReader(ReaderBase):
    """A number literal and what is written onto it."""

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
            exp = integer(exp_node)
            if exp is None or abs(exp) > MAX_DIGITS:
                raise Refused("a bad exponent")
            places = (places or 0) - exp
            value, end = value * Fraction(10) ** exp, exp_node.span[1]
        elif places is not None and (any(self.is_(bar) for bar in REPEAT_MARKS) or self._parenthesised_period()):
            period, end = self._repetend()
            value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(frac))
            places = None  # exact: 0.1\overline{6} = 1/6
        elif self.is_("_") and places is None:
            return self._based(tok.text, tok)
        elif places is None and self.peek() is not None and self.peek().text in ("\\frac", "\\dfrac", "\\tfrac"):  # type: ignore[union-attr]
            return self._mixed(tok, value)
        return Node("num", text=tok.text, value=value, places=places, span=(tok.start, end))

    def _parenthesised_period(self) -> bool:
        """`0.(3)`, `0.1(6)`: digits in parentheses right after a decimal's digits are its period."""
        nxt, digits, close = self.peek(), self.peek(1), self.peek(2)
        if nxt is None or digits is None or close is None:
            return False
        return (
            nxt.text == "(" and not nxt.spaced and digits.kind == "num" and digits.text.isdigit() and close.text == ")"
        )

    def _repetend(self) -> tuple[str, int]:
        """The repeating digits after a point and where they end: under a bar, or between two dots."""
        mark = self.take().text
        if mark == "(":
            period = self.take().text
            return period, self.take().end
        period, end = self._repeat_digits()
        between = ""  # undotted digits after a dot: part of the period only if another dot follows
        while mark == "\\dot" and (tok := self.peek()) is not None and not tok.spaced:
            if tok.kind == "num" and tok.text.isdigit():
                between += self.take().text
            elif tok.text == "\\dot":
                self.take()
                digits, end = self._repeat_digits()
                period, between = period + between + digits, ""
            else:
                break
        if between:
            raise Refused("digits after the last repeating dot")
        return period, end

    def _repeat_digits(self) -> tuple[str, int]:
        rep = self.argument()
        if rep.kind != "num" or rep.places is not None:
            raise Refused("a bad repeating part")
        return rep.text, rep.span[1]

    def _mixed(self, tok: Token, whole: Fraction) -> Node:
        """`918\\frac{1}{2}` is the mixed number 918 1/2 (`2\\frac{\\pi}{3}` a product); an improper part is refused."""
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
        value, end = whole + a.value / b.value, frac.span[1]  # type: ignore[operator]
        return Node("num", text=self.src[tok.start : end], value=value, places=None, span=(tok.start, end))

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
        base = integer(base_node)
        bad = base is None or not 2 <= base <= 36 or any(int(d, 36) >= base for d in digits if d != ",")
        if bad or len(digits) > MAX_DIGITS:
            raise Refused("a bad base")
        value = Fraction(int(digits.replace(",", ""), base))
        return Node("num", text=f"{digits}_{base}", value=value, places=None, span=(tok.start, base_node.span[1]))
