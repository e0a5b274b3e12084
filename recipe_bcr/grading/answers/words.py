"""The words an answer may carry, as closed lists (units, magnitudes, "or"/"and"); anything else is prose."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from recipe_bcr.grading.answers.si import read_unit

UNITS = frozenset(
    """
    cm m km mm in inch inches ft feet foot yd yard yards mi mile miles meter meters metre metres centimeter
    centimeters kilometer kilometers millimeter millimeters square sq cubic units unit degree degrees deg
    radian radians rad dollar dollars cent cents s sec secs second seconds min mins minute minutes h hr hrs
    hour hours day days week weeks month months year years g kg gram grams kilogram kilograms lb lbs pound
    pounds oz ounce ounces l ml liter liters litre litres gallon gallons mph kph km/h m/s ways people students
    usd kilometre kilometres millimetre millimetres centimetre centimetres acre acres hectare hectares
    milligram milligrams ton tons tonne tonnes cup cups pint pints quart quarts tablespoon tablespoons tbsp
    teaspoon teaspoons tsp kmph knot knots millisecond milliseconds hertz khz mhz ghz watt watts
    kwh kilowatt kilowatts joule joules newton newtons volt volts amp amps ampere amperes ohm ohms pascal
    pascals calorie calories kcal byte bytes bit bits celsius fahrenheit kelvin
    """.split()
)  # no letter pair a product of names could be (`mg`, `ms`, `cc`, `kb`: `5mg`, `\\begin{array}{cc}`)
MAGNITUDES = frozenset(
    "hundred hundreds thousand thousands million millions billion billions trillion trillions dozen dozens".split()
)  # words that change a value: never dropped, never added
CONNECTIVE_WORDS = {"or": "or", "and": "and"}
PERCENT_WORDS = frozenset(("percent", "percentage", "pct", "%", "\\%"))  # read as a percent sign (also `\\text{\\%}`)
WORDS_IN_MATH = frozenset(CONNECTIVE_WORDS)  # written without \\text, still words
FUNCTION_NAMES = frozenset(
    "lcm gcd arcsin arccos arctan sin cos tan cot sec csc sinh cosh tanh log ln exp max min".split()
)
TEMPERATURE_SCALES = {"c": "°c", "f": "°f"}  # after a degree sign: 25^\\circ C, 25^\\circ\\text{F}
_WORD = re.compile(r"[A-Za-z]+(?:/[A-Za-z]+)?")
_UNIT_POWER = re.compile(r"\^(?:[23]|\{[23]\})$")
_NUMBERISH = re.compile(r"[0-9.,\s+-]+")


_TEX_SPACE = re.compile(r"\\[,;:! ]|~")
_CHOICE = re.compile(r"\(\s*([A-Za-z])\s*\)")


def text_content(content: str) -> str:
    """What a `\\text{...}` shows, with TeX's spacing (`~`, `\\,`, `\\ `) as plain spaces."""
    return " ".join(_TEX_SPACE.sub(" ", content).split())


def choice_letter(content: str) -> str | None:
    """`(B)` in a `\\text{...}`, `\\textbf{...}` or `\\mathrm{...}`: the choice letter, case kept."""
    m = _CHOICE.fullmatch(text_content(content))
    return None if m is None else m.group(1)


def connective(content: str) -> str | None:
    """The word "or"/"and" a `\\text{...}` holds, maybe after the list's comma (`\\text{, and }`)."""
    words = text_content(content).lstrip(",").split()
    return CONNECTIVE_WORDS.get(words[0].lower()) if len(words) == 1 else None


def text_kind(content: str) -> str:
    """What a `\\text{...}` holds: empty, number, math, choice, letter, function, connective, quantity, unit, prose."""
    content = text_content(content)
    words = content.split()
    if not words:
        return "empty"
    if _NUMBERISH.fullmatch(content) and any(c.isdigit() for c in content):
        return "number"
    if len(content) > 2 and content[0] == "$" and content[-1] == "$":
        return "math"
    if choice_letter(content) is not None:
        return "choice"
    if len(words) == 1 and len(words[0]) == 1 and words[0].isalpha():
        return "letter"
    if len(words) == 1 and words[0] in FUNCTION_NAMES:
        return "function"
    if connective(content) is not None:
        return "connective"
    if quantity_parts(content) is not None:
        return "quantity"
    if number_words(content) is not None:
        return "numberword"
    # `\\text{ ways.}` closes the sentence; `\\mathrm{cm^2}`, `\\mathrm{m/s^{2}}` square or cube the unit
    if is_unit_phrase(content.removesuffix("."), grammar=True):
        return "unit"
    return "prose"


def quantity_parts(content: str) -> tuple[str, str] | None:
    """`\\text{5 cm}`, `\\text{12meters}`, `\\mathrm{60~km/h}`: (the number, the unit) a text holds; None otherwise."""
    text = text_content(content)
    k = 0
    while k < len(text) and (text[k].isdigit() or text[k] in ".,"):
        k += 1
    number, unit = text[:k], text[k:].strip().removesuffix(".")
    if not number or not number[0].isdigit() or not unit or not is_unit_phrase(unit, grammar=True):
        return None
    return number, unit


_ONES = {
    w: k
    for k, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * k for k, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}


def number_words(content: str) -> int | None:
    """A whole number in English words (`three hundred and five`); None for anything else."""
    words = text_content(content).lower().replace("-", " ").split()
    sign = -1 if words and words[0] in ("negative", "minus") else 1
    words = words[1:] if sign < 0 else words
    total, group, last = 0, 0, ""  # last: the kind of the previous word, which fixes what may follow
    for k, w in enumerate(words):
        if w == "and" and last == "hundred" and k + 1 < len(words):
            continue
        if w in _ONES and last in ("", "tens", "hundred", "scale"):
            if last == "tens" and _ONES[w] >= 10 or (_ONES[w] == 0 and (last or len(words) > 1)):
                return None
            group, last = group + _ONES[w], "ones"
        elif w in _TENS and last in ("", "hundred", "scale"):
            group, last = group + _TENS[w], "tens"
        elif w == "hundred" and last in ("ones",) and group % 100:
            group, last = group * 100, "hundred"
        elif w in _SCALES and last in ("ones", "tens", "hundred") and group and (not total or total > _SCALES[w]):
            total, group, last = total + group * _SCALES[w], 0, "scale"
        else:
            return None
    return sign * (total + group) if last else None


def is_unit_phrase(text: str, grammar: bool = False) -> bool:
    """Units from the closed list (`km/h`, `miles per hour`); with `grammar`, any the SI grammar reads."""
    if grammar and read_unit(text) is not None:
        return True
    words = [_UNIT_POWER.sub("", w.lower()) for w in text.split()]
    pers = words[1::2]
    if len(words) > 1 and len(words) % 2 == 1 and all(w == "per" for w in pers):
        words = words[::2]  # miles per hour: "per" between units only
    return bool(words) and all(_WORD.fullmatch(w) and all(part in UNITS for part in w.split("/")) for w in words)


def words_key(text: str) -> str:
    """Words as compared between an answer and its gold: lowercase letters and digits, single spaces."""
    return " ".join("".join(c for c in w.lower() if c.isascii() and c.isalnum()) for w in text.split()).strip()


@dataclass(frozen=True)
class Text:
    """A `\\text{...}` read once: what it shows, its kind, and what that kind carries."""

    content: str
    kind: str
    letter: str | None  # a choice's letter (`(B)`)
    connective: str | None  # "or" / "and"
    number: int | None  # a number in words
    quantity: tuple[str, str] | None  # a number and its unit (`5 cm`)
    key: str  # the words as compared (words_key)
    unit: bool  # a unit: words from the closed list, or one letter of it or of the SI grammar (`8 \\text{ m}`)


def read_text(content: str) -> Text:
    shown, kind = text_content(content), text_kind(content)
    unit = kind == "unit" or (kind == "letter" and (shown in UNITS or read_unit(shown) is not None))
    number = number_words(content) if kind == "numberword" else None
    quantity = quantity_parts(content) if kind == "quantity" else None
    return Text(shown, kind, choice_letter(content), connective(content), number, quantity, words_key(content), unit)


def read_texts(contents: Iterable[str]) -> dict[str, Text]:
    """The readings of the `\\text{...}` contents of the answers a check reads (each read once)."""
    return {content: read_text(content) for content in set(contents)}
