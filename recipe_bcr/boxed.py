"""Stack-based `\\boxed{...}` parser (paper, Algorithm 2).

Braces are matched once per text with one left-to-right scan in which a backslash escapes
the next character (so `\\{` and `\\}` never count), which keeps the cost linear even on
adversarial input such as 10,000 unclosed boxes. `\\boxed {x}` (space before the brace) and
`\\fbox{x}` count as boxes; an unclosed box has no content (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

BOX_OPEN = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*\{")
# Only escapes that can change brace counting need a token: \{ \} and \\ (a backslash escaping a
# letter, as in \frac, never touches a brace), which keeps the scan short on LaTeX-heavy text.
_BRACE_TOKENS = re.compile(r"\\[{}\\]|[{}]")


def match_braces(text: str) -> dict[int, int]:
    """Map the index of every balanced `{` to the index of its `}`; escapes skip a character."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE_TOKENS.finditer(text):
        tok = m.group()
        if tok == "{":
            stack.append(m.start())
        elif tok == "}" and stack:
            pairs[stack.pop()] = m.start()
    return pairs


def extract_boxed_at(text: str, pos: int) -> str | None:
    """Paper's Algorithm 2: content from `pos` (just past an opening brace) to its match, or None."""
    depth = 1
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[pos:i]
        elif c == "\\" and i + 1 < n:
            i += 1
        i += 1
    return None


@dataclass(frozen=True)
class Box:
    """One closed box: `start` is the backslash, `end` is one past the closing brace."""

    start: int
    end: int
    content: str


class BoxIndex:
    """All boxes of one text, with the brace table computed once and only if needed."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def _pairs(self) -> dict[int, int]:
        return match_braces(self.text)

    def box_at(self, match: re.Match[str]) -> Box | None:
        """The box opened by a BOX_OPEN match, or None when it never closes."""
        brace = match.end() - 1
        close = self._pairs.get(brace)
        if close is None:
            return None
        return Box(match.start(), close + 1, self.text[brace + 1 : close])

    def box_after(self, pos: int) -> Box | None:
        """The closed box whose `\\boxed` starts exactly at `pos`, if any."""
        m = BOX_OPEN.match(self.text, pos)
        return self.box_at(m) if m else None

    @cached_property
    def top_level(self) -> list[Box]:
        """Closed boxes in order of appearance, skipping boxes nested inside an earlier one."""
        boxes: list[Box] = []
        covered_until = -1
        for m in BOX_OPEN.finditer(self.text):
            if m.start() < covered_until:
                continue
            box = self.box_at(m)
            if box is not None:
                boxes.append(box)
                covered_until = box.end
        return boxes


def last_boxed(text: str) -> str | None:
    """Content of the last top-level closed box (the conventional single-answer rule)."""
    boxes = BoxIndex(text).top_level
    return boxes[-1].content if boxes else None
