"""A node of an answer tree: plain data, its structural reads, and the facts other modules compute about it,
each once (`Fact`: a read after the first is a lookup here)."""

from __future__ import annotations

from collections.abc import Callable
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

    def same(self, other: Node) -> bool:
        """The same tree, literal for literal (where it is written aside)."""
        mine, theirs = (
            (self.kind, self.text, self.value, self.places),
            (other.kind, other.text, other.value, other.places),
        )
        if mine != theirs or len(self.children) != len(other.children):
            return False
        return all(a.same(b) for a, b in zip(self.children, other.children))

    @property
    def unsigned(self) -> tuple[int, Node]:
        """(sign, node) without the leading minus signs: `-40^\\circ C` is -1 times 40 degrees C."""
        sign, node = 1, self
        while node.kind == "neg":
            sign, node = -sign, node.children[0]
        return sign, node

    @property
    def infinite(self) -> int:
        """+1 for `\\infty`, -1 for `-\\infty`, 0 for anything else."""
        sign, node = self.unsigned
        return sign if node.kind == "const" and node.text == "infty" else 0

    @property
    def ops(self) -> tuple[str, ...]:
        """The operators of a relation or a connective, in order (`2 < x \\le 5`: `<`, `<=`); none for other nodes."""
        return tuple(self.text.split(",")) if self.kind in ("rel", "conn") else ()


def substitute(node: Node, name: str, value: Node) -> Node:
    """`node` with the unknown `name` replaced by `value` everywhere (where the name was written)."""
    if node.kind == "sym" and node.text == name:
        return Node(
            value.kind, value.children, value.text, value.value, value.places, node.span, node.paren or value.paren
        )
    if not node.children:
        return node
    kids = tuple(substitute(c, name, value) for c in node.children)
    return Node(node.kind, kids, node.text, node.value, node.places, node.span, node.paren)


class Fact:
    """A fact about a node: `compute` runs once per node (and variant), its result kept in the node's memo."""

    def __init__(self, name: str, compute: Callable[..., Any]) -> None:
        self.name = name
        self.compute = compute

    def __call__(self, node: Node, *variant: Any) -> Any:
        key = (self.name, *variant) if variant else self.name
        memo = node.memo
        if key not in memo:
            memo[key] = self.compute(node, *variant)
        return memo[key]
