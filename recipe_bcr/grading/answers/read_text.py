"""What a `\\text{...}` holds, read as the tree reads it, and the units and words after a value."""

from __future__ import annotations

from recipe_bcr.grading.answers.lex import Token
from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.read_base import (
    _CHOICE_VALUE_STARTS,
    _MATH_LETTERS,
    ReaderBase,
    Refused,
    is_unit,
    literal,
    respan,
)
from recipe_bcr.grading.answers.words import TEMPERATURE_SCALES, UNITS, text_content

_POWERS = frozenset("23")  # a unit is squared or cubed (`s^2`, `cm^{3}`), or divided once to thrice (`m^{-3}`)
_INVERSE_POWERS = frozenset("123")


class TextReader(ReaderBase):
    """Texts as values, and units and words after a value."""

    def text_value(self) -> Node:
        """A `\\text{...}` as the value it holds (its kind: words.read_text)."""
        tok = self.take()
        said = self.said(tok)
        kind = said.kind
        if kind == "number":
            inner = self.nested(tok.text)
            if inner is None:
                raise Refused("bad text number")
            return respan(inner, (tok.start, tok.end))
        if kind == "numberword":  # \text{twenty-one}
            return literal(said.number, (tok.start, tok.end))  # type: ignore[arg-type]
        if kind == "quantity":  # \text{5 cm}: the number and its unit in one text
            number, unit = said.quantity  # type: ignore[misc]
            inner = self.nested(number)
            if inner is None or inner.kind != "num":
                raise Refused("bad number in a text")
            return Node("unit", (respan(inner, (tok.start, tok.end)),), text=unit, span=(tok.start, tok.end))
        if kind == "math":  # \text{$12$}: math mode inside the text (once: each level would read it again)
            body = said.content[1:-1]
            inner = None if "$" in body else self.nested(body)
            if inner is None:
                raise Refused("bad math in text")
            return respan(inner, (tok.start, tok.end))
        letter = said.letter or said.content
        if kind == "choice" or (
            kind == "letter" and letter.isupper() and not self.src.startswith(_MATH_LETTERS, tok.start)
        ):
            nxt = self.peek()
            if nxt is not None and (nxt.kind == "num" or nxt.text in _CHOICE_VALUE_STARTS):
                value = self.expr()  # \textbf{(B)}\ 32: the answer line of a multiple-choice contest
                return Node("choice", (value,), text=letter, span=(tok.start, value.span[1]))
            return Node("choice", text=letter, span=(tok.start, tok.end))  # \text{(B)}, \text{B}: a choice
        if kind == "letter":  # \mathrm{e}, \text{i}, \mathrm{B}: the letter as a name
            return self._subscripted(Node("sym", text=said.content, span=(tok.start, tok.end)))
        if kind == "function":
            return self.function("\\" + tok.text.strip(), tok)
        return Node("text", text=" ".join(tok.text.lower().split()), span=(tok.start, tok.end))

    def _units(self, node: Node) -> Node:
        """Units after a value, then words; after a degree sign, C or F is its scale."""
        if node.kind == "degree" and (scale := self._temperature_scale()) is not None:
            node = Node("unit", (node,), text=scale, span=(node.span[0], self.t[self.i - 1].end))
        units = []  # units side by side multiply (`\mathrm{~m} \mathrm{~s}^{-2}`): one unit
        while (unit := self._unit()) is not None:
            while self.is_("/") and (per := self.peek(1)) is not None and per.kind == "text" and self.said(per).unit:
                self.i += 2  # \mathrm{~km} / \mathrm{h}: one unit
                unit += "/" + self.said(per).content + self._take_unit_power()
            units.append(unit)
        if units:
            node = Node("unit", (node,), text=" ".join(units), span=(node.span[0], self.t[self.i - 1].end))
        while (tok := self.peek()) is not None and tok.kind == "text" and self.said(tok).kind == "prose":
            self.take()  # words after a value (`2 \text{ euros}`): right only where the gold carries them
            node = Node("words", (node,), text=self.said(tok).key, span=(node.span[0], tok.end))
        return node

    def _unit(self) -> str | None:
        """A unit after a value, with its power, taken (case kept); None (nothing taken) when none."""
        tok, nxt = self.peek(), self.peek(1)
        if tok is not None and tok.text == "\\mu" and nxt is not None and nxt.kind in ("text", "letter"):
            k = 2  # \mu\text{F}, \mu F, \mu m: the prefix micro, then the unit in text or in letters
            while (
                nxt.kind == "letter"
                and (more := self.peek(k)) is not None
                and more.kind == "letter"
                and not more.spaced
            ):
                k += 1
            letters = "".join(t.text for t in self.t[self.i + 1 : self.i + k])
            if is_unit("μ" + text_content(letters)):
                self.i += k
                return "μ" + text_content(letters) + self._take_unit_power()
        if tok is not None and tok.text in ("\\frac", "\\dfrac", "\\tfrac"):
            return self._unit_fraction()
        if tok is None or tok.kind != "text" or not (self.said(tok).unit or self._unit_not_called(tok)):
            return None
        self.take()
        return self.said(tok).content + self._take_unit_power()

    def _unit_fraction(self) -> str | None:
        """`\\frac{\\text{m}}{\\text{s}^2}` after a value: a unit over a unit, taken; None (nothing taken) otherwise."""
        save = self.i
        try:
            self.i += 1
            self.expect("{")
            top = self._unit()
            self.expect("}")
            self.expect("{")
            bottom = self._unit()
            self.expect("}")
        except Refused:
            top = bottom = None
        if top is None or bottom is None or "/" in bottom:
            self.i = save
            return None
        return "/".join((top, *bottom.split()))  # every unit of the denominator divides

    def _unit_not_called(self, tok: Token) -> bool:
        """A word naming a unit and a function (`9\\text{ min}`, `\\min(3, 5)`): not applied to a bracket, the unit."""
        nxt = self.peek(1)
        called = nxt is not None and nxt.text in ("(", "\\{", "\\lbrace")
        return self.said(tok).content.lower() in UNITS and not called

    def _temperature_scale(self) -> str | None:
        """The scale letter after a degree sign, taken: a lone C or F, as a letter or a text; None (nothing taken)."""
        tok, nxt = self.peek(), self.peek(1)
        if tok is None or tok.kind not in ("letter", "text"):
            return None
        letter = tok.text if tok.kind == "letter" else self.said(tok).content
        scale = TEMPERATURE_SCALES.get(letter.lower()) if letter in ("C", "F") else None
        if scale is None or (tok.kind == "letter" and nxt is not None and nxt.kind == "letter" and not nxt.spaced):
            return None
        self.take()
        return scale

    def _take_unit_power(self) -> str:
        """A unit's power after it (`^2`, `^{3}`, `^{-1}` as `^2`, `^3`, `^-1`), taken; "" when none."""
        if not self.is_("^"):
            return ""
        texts = [tok.text if (tok := self.peek(k)) is not None else "" for k in range(1, 5)]
        if texts[0] in _POWERS:
            self.i += 2
            return "^" + texts[0]
        for sign, width, powers in (("", 3, _POWERS), ("-", 4, _INVERSE_POWERS)):  # ^{2}, ^{-1}
            if texts[0] == "{" and (sign == "" or texts[1] == "-") and texts[width - 2] in powers:
                if texts[width - 1] == "}":
                    self.i += width + 1
                    return f"^{sign}{texts[width - 2]}"
        return ""
