"""A node of an answer tree, and the facts about it each rule reads: computed once per node, on first read.

The reader (recipe_bcr.grading.answers.tree) builds nodes; the modules that know how to compute a fact (value: its
exact value, its unknowns, its 50-digit value; poly: its polynomial; regions: the set of reals it states; units: what
its unit measures) register the function in `FACTS` when they are imported, and the reader imports them all, so a
tree never exists without them. A rule reads `node.exact`, `node.names`, ...: the first read computes and keeps the
fact on the node, every later read (by any rule, or by a parent's computation) is a lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

FACTS: dict[str, Callable[[Node], Any]] = {}  # name -> how to compute it, registered by the module that knows


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

    def fact(self, name: str) -> Any:
        """The fact `name` about this node, computed on first read and kept."""
        memo = self.memo
        if name not in memo:
            memo[name] = FACTS[name](self)
        return memo[name]

    @property
    def exact(self) -> Fraction | None:
        """The exact rational value, or None (an irrational, an unknown, a size guard): value.exact."""
        return self.fact("exact")

    @property
    def names(self) -> frozenset[str]:
        """The unknowns written in it (`e`, `i` included): value.unknowns."""
        return self.fact("names")

    @property
    def approx(self) -> tuple[Any, Any] | None:
        """Its 50-digit value with unknowns at fixed points, and the largest magnitude met: value.numeric."""
        return self.fact("approx")

    @property
    def approx_i(self) -> tuple[Any, Any] | None:
        """As `approx`, with `i` the imaginary unit."""
        return self.fact("approx_i")

    @property
    def tower(self) -> float | None:
        """A lower bound of log10 of a power tower, or None: value.log10_floor."""
        return self.fact("tower")

    @property
    def poly(self) -> dict[Any, Fraction] | None:
        """Its exact expansion as a polynomial, or None: poly.polynomial."""
        return self.fact("poly")

    @property
    def interval(self) -> Node | None:
        """The interval an inequality states (`2 \\le x < 5`, `\\mathbb{R}`), or None: regions.as_interval."""
        return self.fact("interval")

    @property
    def region(self) -> list[Any] | None:
        """The set of reals it states as sorted disjoint intervals, or None: regions.region."""
        return self.fact("region")

    @property
    def infinity(self) -> int:
        """+1 for `\\infty`, -1 for `-\\infty`, 0 for anything else: regions.infinite."""
        return self.fact("infinity")

    @property
    def complement(self) -> Node | None:
        """The other half of the line beside a half-line, or None: regions.complement."""
        return self.fact("complement")

    @property
    def quantity(self) -> Any:
        """What a unit node measures (dimensions and scale), or None: units.quantity."""
        return self.fact("quantity")
