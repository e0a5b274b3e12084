"""A unit read by a small grammar (SI prefix, base unit, exponent) into base dimensions and a scale (symbols keep
their case: `mW` is not `MW`; names do not), and what a unit after a value measures: two answers in different units
are one answer only as one quantity."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from recipe_bcr.grading.answers.node import Node

Dims = dict[str, int]

_PREFIX_SYMBOLS = {
    "Y": 24, "Z": 21, "E": 18, "P": 15, "T": 12, "G": 9, "M": 6, "k": 3, "h": 2, "da": 1,
    "d": -1, "c": -2, "m": -3, "μ": -6, "µ": -6, "u": -6, "n": -9, "p": -12, "f": -15,
}  # fmt: skip
_PREFIX_NAMES = {
    "yotta": 24, "zetta": 21, "exa": 18, "peta": 15, "tera": 12, "giga": 9, "mega": 6, "kilo": 3, "hecto": 2,
    "deka": 1, "deca": 1, "deci": -1, "centi": -2, "milli": -3, "micro": -6, "nano": -9, "pico": -12, "femto": -15,
}  # fmt: skip


def _u(dims: str, scale: str = "1") -> tuple[Dims, Fraction]:
    """`"kg m2 s-2"`: base dimensions with powers, and the unit's size in them."""
    out: Dims = {}
    for part in dims.split():
        name = part.rstrip("-0123456789")
        out[name] = int(part[len(name) :] or 1)
    return out, Fraction(scale)


# symbol -> (dimensions, scale); mass in grams, so that the prefixes apply to "g" as written
_SYMBOLS = {
    "m": _u("m"), "g": _u("g"), "s": _u("s"), "A": _u("A"), "K": _u("K"), "mol": _u("mol"), "cd": _u("cd"),
    "Hz": _u("s-1"), "N": _u("g m s-2", "1000"), "J": _u("g m2 s-2", "1000"), "W": _u("g m2 s-3", "1000"),
    "Pa": _u("g m-1 s-2", "1000"), "C": _u("A s"), "V": _u("g m2 s-3 A-1", "1000"), "F": _u("g-1 m-2 s4 A2", "0.001"),
    "Ω": _u("g m2 s-3 A-2", "1000"), "H": _u("g m2 s-2 A-2", "1000"), "T": _u("g s-2 A-1", "1000"),
    "Wb": _u("g m2 s-2 A-1", "1000"), "S": _u("g-1 m-2 s3 A2", "0.001"), "L": _u("m3", "0.001"), "l": _u("m3", "0.001"),
    "eV": _u("g m2 s-2", "1.602176634e-16"), "erg": _u("g m2 s-2", "0.0001"), "dyn": _u("g m s-2", "0.01"),
    "pc": _u("m", "30856775814913673"), "ly": _u("m", "9460730472580800"), "AU": _u("m", "149597870700"),
    "au": _u("m", "149597870700"), "min": _u("s", "60"), "h": _u("s", "3600"), "hr": _u("s", "3600"),
    "yr": _u("s", "31557600"), "cal": _u("g m2 s-2", "4184"), "atm": _u("g m-1 s-2", "101325000"),
    "bar": _u("g m-1 s-2", "100000000"), "Å": _u("m", "1e-10"), "in": _u("m", "0.0254"), "ft": _u("m", "0.3048"),
    "yd": _u("m", "0.9144"), "mi": _u("m", "1609.344"), "lb": _u("g", "453.59237"), "lbs": _u("g", "453.59237"),
    "oz": _u("g", "28.349523125"), "t": _u("g", "1000000"), "sec": _u("s"), "secs": _u("s"), "mins": _u("s", "60"),
    "hrs": _u("s", "3600"), "d": _u("s", "86400"), "wk": _u("s", "604800"), "$": _u("$"), "usd": _u("$"),
    "¢": _u("$", "0.01"),
}  # fmt: skip
_UNPREFIXED = frozenset("min h hr hrs mins sec secs d wk yr in ft yd mi lb lbs oz t $ usd ¢ AU au ly Å".split())
_NAMES = {
    "meter": "m", "metre": "m", "gram": "g", "second": "s", "ampere": "A", "amp": "A", "kelvin": "K", "mole": "mol",
    "candela": "cd", "hertz": "Hz", "newton": "N", "joule": "J", "watt": "W", "pascal": "Pa", "coulomb": "C",
    "volt": "V", "farad": "F", "ohm": "Ω", "henry": "H", "tesla": "T", "weber": "Wb", "siemens": "S", "liter": "L",
    "litre": "L", "electronvolt": "eV", "erg": "erg", "dyne": "dyn", "parsec": "pc", "lightyear": "ly",
    "minute": "min", "hour": "h", "year": "yr", "calorie": "cal", "atmosphere": "atm", "bar": "bar",
    "angstrom": "Å", "inch": "in", "inche": "in", "foot": "ft", "feet": "ft", "yard": "yd", "mile": "mi",
    "pound": "lb", "ounce": "oz", "tonne": "t", "day": "d", "week": "wk", "dollar": "$", "cent": "¢",
}  # fmt: skip


def unit_word(word: str) -> tuple[Dims, Fraction] | None:
    """One unit without its exponent (`kpc`, `μF`, `microfarads`, `g`), or None."""
    if word in _SYMBOLS:
        return _SYMBOLS[word]
    for symbol, power in _PREFIX_SYMBOLS.items():
        base = word[len(symbol) :]
        if word.startswith(symbol) and base in _SYMBOLS and base not in _UNPREFIXED:
            dims, scale = _SYMBOLS[base]
            return dims, scale * Fraction(10) ** power
    name = word.lower()
    for singular in (name, name.removesuffix("s"), name.removesuffix("es")):
        for prefix, power in (("", 0), *_PREFIX_NAMES.items()):
            base = singular[len(prefix) :]
            if singular.startswith(prefix) and base in _NAMES and (not prefix or _NAMES[base] not in _UNPREFIXED):
                dims, scale = _SYMBOLS[_NAMES[base]]
                return dims, scale * Fraction(10) ** power
    return None


def read_unit(text: str, own_bases: bool = False) -> tuple[Dims, Fraction] | None:
    """A unit phrase's dimensions and scale, or None; with `own_bases`, an unknown word is a base of its own."""
    tokens = text.replace("\\cdot", " ").replace("*", " ").replace("/", " / ").replace("\\mu ", "μ").split()
    dims: Dims = {}
    scale, sign, power = Fraction(1), 1, 1
    for k, token in enumerate(tokens):
        if token in ("/", "per"):
            if k == 0 or sign < 0 or power != 1:
                return None  # a division with nothing before it, or twice in a row
            sign = -1
            continue
        if token.lower() in ("square", "cubic"):
            power = 2 if token.lower() == "square" else 3
            continue
        word, _, exponent = token.partition("^")
        exp = _exponent(exponent) if exponent else 1
        read = unit_word(word) or (({word.removesuffix("s") or word: 1}, Fraction(1)) if own_bases else None)
        if read is None or exp is None:
            return None
        for base, p in read[0].items():
            dims[base] = dims.get(base, 0) + sign * p * exp * power
        scale *= read[1] ** (sign * exp * power)
        sign, power = 1, 1
    if power != 1 or sign < 0 or not dims:
        return None
    return {b: p for b, p in dims.items() if p}, scale


def _exponent(text: str) -> int | None:
    """`2`, `{3}`, `-1`, `{-3}`: a unit squared or cubed, or divided once to thrice; None for any other power."""
    digits = text.strip("{}")
    return int(digits) if digits in ("2", "3", "-1", "-2", "-3") else None


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
