"""What a unit after a value measures, so that two answers in different units are never the same answer.

A unit node's text (`tree.Parser._units`: `cm`, `cm^2`, `square centimeters`, `km/h`, `miles per hour`, `$`) is
read into a quantity: base dimensions with powers and a scale to one reference unit per dimension. `5 m^2`
is then not `5 cm^2`, and `5 cents` not `$5`, while `5 centimeters` is `5 cm` and `0.5 m` is `50 cm` (the
value is compared after scaling, exactly). Count words and generic units (`units`, `square units`, `ways`)
measure nothing: an answer with or without them is compared by its value alone, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import FACTS, Node
from recipe_bcr.grading.answers.si import read_unit, unit_word
from recipe_bcr.grading.answers.words import UNITS

_SPELLINGS: dict[str, tuple[dict[str, int], Fraction]] = {}  # units the SI grammar does not read (it reads `cm`, `kg`)


def _add(base: str, scale: str, *names: str) -> None:
    """`names` measure `scale` times `base` (an SI unit, or a base of its own: `$`)."""
    dims, size = read_unit(base) or ({base: 1}, Fraction(1))
    for name in names:
        _SPELLINGS[name] = (dims, size * Fraction(scale))


_add("m", "0.0254", "in", "inch", "inches")
_add("m", "0.3048", "ft", "foot", "feet")
_add("m", "0.9144", "yd", "yard", "yards")
_add("m", "1609.344", "mi", "mile", "miles")
_add("g", "1000000", "tonne", "tonnes")
_add("g", "453.59237", "lb", "lbs", "pound", "pounds")
_add("g", "28.349523125", "oz", "ounce", "ounces")
_add("s", "1", "sec", "secs")
_add("s", "60", "mins")
_add("s", "3600", "hrs")
_add("s", "86400", "day", "days")
_add("s", "604800", "week", "weeks")
_add("$", "1", "$", "dollar", "dollars", "usd")
_add("$", "0.01", "cent", "cents")
_add("Hz", "1000", "khz")
_add("Hz", "1000000", "mhz")
_add("Hz", "1000000000", "ghz")
_SAME = {
    "mph": "mi/h",
    "kph": "km/h",
    "kmph": "km/h",
    "sq": "square",
    "deg": "degree",
    "rad": "radian",
    "ampere": "amp",
    "tbsp": "tablespoon",
    "tsp": "teaspoon",
}
_GENERIC = frozenset(("unit", "units", "ways", "people", "students"))
_POWER = re.compile(r"^(.+?)\^\{?([23])\}?$")


@dataclass(frozen=True)
class Quantity:
    dims: tuple[tuple[str, int], ...]  # base unit -> power, sorted
    scale: Fraction  # the unit in its bases' reference units


def _word(word: str) -> tuple[dict[str, int], Fraction] | None:
    """One unit word, maybe with its power (`cm^2`); a word without a scale is its own base (`gallon`)."""
    power = 1
    if m := _POWER.match(word):
        word, power = m.group(1), int(m.group(2))
    if word in _GENERIC:
        return None
    if word not in _SPELLINGS and word.endswith("s") and word[:-1] in UNITS:
        word = word[:-1]  # gallons, acres: a unit without a scale here is its own base
    dims, scale = _SPELLINGS.get(word) or unit_word(word) or ({word: 1}, Fraction(1))
    return {base: p * power for base, p in dims.items()}, scale**power


def quantity(unit: str) -> Quantity | None:
    """The quantity a unit node's text measures, or None for a generic or count unit: as the SI grammar reads it
    (recipe_bcr.grading.answers.si), else by the closed list of other units below."""
    read = read_unit(unit)
    if read is not None:
        return Quantity(tuple(sorted(read[0].items())), read[1])
    text = " ".join(_SAME.get(w, w) for w in unit.lower().split())
    dims: dict[str, int] = {}
    scale, sign, power = Fraction(1), 1, 1
    for word in text.replace("/", " / ").split():
        if word in ("/", "per"):
            sign = -1
        elif word in ("square", "cubic"):
            power = 2 if word == "square" else 3
        else:
            read = _word(word if power == 1 else f"{word}^{power}")
            if read is None:
                return None
            for base, p in read[0].items():
                dims[base] = dims.get(base, 0) + sign * p
            scale = scale * read[1] if sign > 0 else scale / read[1]
            power = 1
    if power > 1 or not dims:  # `square` with nothing after it
        return None
    return Quantity(tuple(sorted((b, p) for b, p in dims.items() if p)), scale)


def _unit_quantity(node: Node) -> Quantity | None:
    return quantity(node.text) if node.kind == "unit" else None


FACTS["quantity"] = _unit_quantity
