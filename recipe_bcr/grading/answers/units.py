"""What a unit after a value measures, so that answers in different units are never one answer."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import Node
from recipe_bcr.grading.answers.si import read_unit

_SAME = {"mph": "mi/h", "kph": "km/h", "kmph": "km/h", "sq": "square", "deg": "degree", "rad": "radian"}
_SAME |= {"tbsp": "tablespoon", "tsp": "teaspoon"}  # one unit, two spellings the grammar does not read
_GENERIC = frozenset(("unit", "units", "ways", "people", "students"))


@dataclass(frozen=True)
class Quantity:
    dims: tuple[tuple[str, int], ...]  # base unit -> power, sorted
    scale: Fraction  # the unit in its bases' reference units


def quantity(unit: str) -> Quantity | None:
    """The quantity a unit measures (case kept first, then any case), or None for a generic unit."""
    text = " ".join(_SAME.get(w.lower(), w) for w in unit.split())
    if not text or any(w.lower() in _GENERIC for w in text.replace("/", " ").split()):
        return None
    read = read_unit(text) or read_unit(text.lower()) or read_unit(text.lower(), own_bases=True)
    return None if read is None else Quantity(tuple(sorted(read[0].items())), read[1])


def unit_quantity(node: Node) -> Quantity | None:
    """What a unit node measures (None for any other node)."""
    return quantity(node.text) if node.kind == "unit" else None
