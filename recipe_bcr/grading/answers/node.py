"""A node of an answer tree: plain data. A fact about a node (value.py, poly.py, regions.py, units.py) is
computed once by its module and kept in `memo`; a node calls nothing back."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class Node:
    kind: str
    children: tuple[Node, ...] = ()
    text: str = ""  # an operator, a name, a relation, a container's brackets, a unit, prose words
    value: Fraction | None = None  # numbers: the exact value of the literal as written
    places: int | None = None  # numbers: digits after the point less the exponent; None for an integer literal
    span: tuple[int, int] = (0, 0)  # where it is written in the answer (names are read back from the source)
    paren: bool = False  # written in parentheses of its own: `f(x)` is not `f x` to every reader
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # facts read so far

    def walk(self) -> list[Node]:
        """Every node of the tree, this one first (kept: a tree never changes)."""
        memo = self.memo
        if "walk" not in memo:
            out, stack = [], [self]
            while stack:
                node = stack.pop()
                out.append(node)
                stack.extend(reversed(node.children))
            memo["walk"] = out
        return memo["walk"]

    @property
    def ops(self) -> tuple[str, ...]:
        """The operators of a relation or a connective, in order (`2 < x \\le 5`: `<`, `<=`); none for other nodes."""
        return tuple(self.text.split(",")) if self.kind in ("rel", "conn") else ()
