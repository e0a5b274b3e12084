"""Stack-based `\\boxed{...}` parser (paper, Algorithm 2), linear on any input: braces matched once by one scan."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Box:
    """One closed box: `start` is the backslash, `brace` its opening brace, `end` is one past the closing brace."""

    start: int
    brace: int
    end: int
    text: str = field(repr=False, compare=False)

    @property
    def content(self) -> str:
        return self.text[self.brace + 1 : self.end - 1]


class BoxIndex:
    """All boxes of one text, with the brace table computed once and only if needed."""

    def __init__(self, text: str, barriers: Sequence[int] = ()) -> None:
        self.text = text
        self._barriers = sorted(barriers)
        # computed on first use; not functools.cached_property, whose one lock per class (Python < 3.12)
        # would make every reward thread wait while one of them indexes a long completion
        self._pair_table: dict[int, int] | None = None
        self._top: list[Box] | None = None
        self._by_start: dict[int, Box] | None = None
        self._outer: dict[int, Box] = {}  # a box holding only a box, by its start: the box it holds

    @property
    def _pairs(self) -> dict[int, int]:
        if self._pair_table is None:
            self._pair_table = match_braces(self.text)
        return self._pair_table

    def box_at(self, match: re.Match[str]) -> Box | None:
        """The box opened by a BOX_OPEN match, or None when it never closes."""
        brace = match.end() - 1
        close = self._pairs.get(brace)
        return None if close is None else Box(match.start(), brace, close + 1, self.text)

    def _holds_barrier(self, box: Box) -> bool:
        k = bisect_right(self._barriers, box.start)
        return k < len(self._barriers) and self._barriers[k] < box.end

    def _only_holds(self, box: Box, inner: re.Match[str]) -> bool:
        """The box holds exactly one other box and nothing else (`\\boxed{\\boxed{5}}`)."""
        inside = self.box_at(inner)
        return (
            inside is not None
            and inside.end < box.end
            and not self.text[box.brace + 1 : inner.start()].strip()
            and not self.text[inside.end : box.end - 1].strip()
        )

    @property
    def top_level(self) -> list[Box]:
        """Closed boxes in order, none inside another; a box holding a barrier is skipped (its boxes are read)."""
        if self._top is None:
            self._top = self._find_top_level()
        return self._top

    def _find_top_level(self) -> list[Box]:
        opens = list(BOX_OPEN.finditer(self.text))
        boxes: list[Box] = []
        covered_until = -1
        wrappers: list[int] = []  # starts of the boxes that hold only the next one
        for k, m in enumerate(opens):
            if m.start() < covered_until:
                continue
            box = self.box_at(m)
            if box is None or self._holds_barrier(box):
                wrappers = []
                continue
            if k + 1 < len(opens) and opens[k + 1].start() < box.end and self._only_holds(box, opens[k + 1]):
                wrappers.append(box.start)
                continue
            boxes.append(box)
            self._outer.update(dict.fromkeys(wrappers, box))  # Answer 1: \boxed{\boxed{5}} labels the 5
            wrappers = []
            covered_until = box.end
        return boxes

    @property
    def by_start(self) -> dict[int, Box]:
        """Top-level boxes by the position of their backslash (or of the boxes that hold only them)."""
        if self._by_start is None:
            self._by_start = {b.start: b for b in self.top_level}
            self._by_start.update(self._outer)
        return self._by_start


def last_boxed(text: str) -> str | None:
    """Content of the last top-level closed box (the conventional single-answer rule)."""
    boxes = BoxIndex(text).top_level
    return boxes[-1].content if boxes else None
