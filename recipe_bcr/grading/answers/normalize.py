"""LaTeX answer normalisation and exact numbers: the in-process fast paths of verification.

Everything here is cheap string work. `canonical` is the form two answers are compared in
as strings; `as_number` reads plain numbers (integers, decimals with thousands separators,
integer fractions, a percent or currency sign) exactly, as Fractions, and says whether the
text was a decimal approximation, so the caller can decide between exact and 1e-6 matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

MAX_ANSWER_CHARS = 2000  # a longer answer is no answer (and reading it would cost time on every step)

_WRAPPERS = [
    (re.compile(r"^\$\$(.*)\$\$$", re.DOTALL), 1),
    (re.compile(r"^\$(.*)\$$", re.DOTALL), 1),
    (re.compile(r"^\\\((.*)\\\)$", re.DOTALL), 1),
    (re.compile(r"^\\\[(.*)\\\]$", re.DOTALL), 1),
]
_BOX_WRAP = re.compile(r"^\\(?:boxed|fbox)\s*\{(.*)\}$", re.DOTALL)
_COLOR = re.compile(r"\\(?:text)?color\s*\{[^{}]*\}")
_TEXT_CMDS = re.compile(r"\\(?:text|textbf|textit|textnormal|textrm|mathrm|mathbf|mathit|mbox|operatorname)\s*\{([^{}]*)\}")
_SPACING = re.compile(r"\\[,;:! ]|\\q?quad\b|\\displaystyle\b|\\left\b|\\right\b|~")
_FRAC_VARIANTS = re.compile(r"\\[dtc]frac\b")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
_MATHRM_LETTER = re.compile(r"\\(?:mathrm|rm|mathit)\s*\{\s*([A-Za-z])\s*\}")
_EMPTY_SET = re.compile(r"\\varnothing\b|\\\{\s*\\\}")
_REPEATING = re.compile(r"^([+-]?)(\d*)\.(\d*)\\overline\s*\{(\d+)\}$")
ELLIPSIS = re.compile(r"\\[lcv]?dots[bc]?\b|\.\.\.|…")


_UNICODE_MATH = str.maketrans(
    {"∞": "\\infty ", "π": "\\pi ", "√": "\\sqrt ", "≤": "\\le ", "≥": "\\ge ", "≠": "\\ne ", "×": "\\times ", "·": "\\cdot ", "÷": "\\div "}
)


def strip_wrappers(s: str) -> str:
    """Remove math delimiters and an outer box, repeatedly; trailing sentence periods too."""
    prev = None
    s = s.strip()
    while s != prev:
        prev = s
        for pat, g in _WRAPPERS:
            m = pat.match(s)
            if m:
                s = m.group(g).strip()
        m = _BOX_WRAP.match(s)
        if m and _balanced(m.group(1)):
            s = m.group(1).strip()
        s = s.rstrip(".").rstrip().rstrip("\\").rstrip()  # a trailing line break or stray backslash
    return s


def for_parser(s: str) -> str:
    """What the symbolic parser reads: no wrappers, and upright single letters (\\mathrm{e}) as letters."""
    text = _COLOR.sub("", _MATHRM_LETTER.sub(r"\1", strip_wrappers(s))).translate(_UNICODE_MATH)
    return " ".join(text.split())  # the LaTeX reader stops at a newline


def _balanced(s: str) -> bool:
    depth = 0
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def _light(s: str) -> str:
    """Normalise commands but keep the spaces, which still separate list items from digits."""
    return _light_cached(s) if len(s) <= 256 else _light_text(s)  # long answers would fill the cache


@lru_cache(maxsize=65536)
def _light_cached(s: str) -> str:
    return _light_text(s)


def _light_text(s: str) -> str:
    # one space for any whitespace run: every later pattern then scans in linear time
    s = " ".join(strip_wrappers(s).translate(_UNICODE_MATH).split()).replace("\u2212", "-")  # unicode minus
    s = _EMPTY_SET.sub(r"\\emptyset", _COLOR.sub("", s))
    s = re.sub(r",\\!\s*", ",", s)  # 11,\! 111 is a thousands separator
    s = re.sub(r"\s*\{\s*,\s*\}\s*", ",", s)  # so is 14{,}916 (and 14 {, }916)
    s = _FRAC_VARIANTS.sub(r"\\frac", s)
    s = _SPACING.sub(" ", s)
    for _ in range(3):
        s = _TEXT_CMDS.sub(r"\1", s)
    s = _DEGREES.sub("", s)
    s = s.replace("\\%", "%").replace("\\$", "").replace("\\{", "{").replace("\\}", "}")
    s = s.strip().rstrip(".").strip()
    return s[1:].lstrip() if s.startswith("+") else s  # a leading plus sign says nothing: +\infty is \infty


@lru_cache(maxsize=65536)
def canonical(s: str) -> str:
    """String-comparison form: no delimiters, spacing, text wrappers, \\left/\\right, degrees."""
    s = _light(s)
    s = re.sub(r"(?<=\d) (?=\d{3}(?!\d))", "", s)  # "1 000": a thousands separator
    s = re.sub(r"(?<=\d)\s+(?=\d)", " ", s)  # keep "5 6" distinct from "56"
    s = re.sub(r",\s+", ", ", s)  # keep "32, 349" (a list) distinct from "32,349"
    return re.sub(r"(?<![\d,])\s+|\s+(?!\d)", "", s)


@dataclass(frozen=True)
class Number:
    value: Fraction
    approximate: bool  # written with a decimal point or exponent
    percent: bool = False  # written with %, "percent" or "pct"
    places: int = 0  # digits after the point, less the exponent: 1.25 has 2, 1.2e3 has -2


# ASCII digits only: int() and \d accept every script's digits, which no gold answer uses
_NUM = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")
MAX_DIGITS = 1000  # an exact number is never expanded beyond this many digits (1e100000000 would take minutes)
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_SPACE_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_FRAC = re.compile(r"^([+-]?)\\frac\s*\{\s*([+-]?\d+)\s*\}\s*\{\s*([+-]?\d+)\s*\}$")
_SLASH = re.compile(r"^([+-]?\d+)\s*/\s*([+-]?\d+)$")


@lru_cache(maxsize=65536)
def as_number(s: str) -> Number | None:
    """Read a plain number exactly, or None if the text is anything more than a number."""
    t = _light(s).replace("$", "")
    stripped = re.sub(r"\s*(?:%|percentage|percent|pct)$", "", t).strip()
    percent = stripped != t
    t = stripped
    if _SPACE_THOUSANDS.match(t):
        t = t.replace(" ", "")
    elif _THOUSANDS.match(t):
        t = t.replace(",", "")
    m = _NUM.fullmatch(t)
    if m and (m.group(2) or m.group(3)):
        return _decimal(m, percent)
    m = _REPEATING.match(t)
    if m:  # 0.1\overline{6} = 1/6: exact, not an approximation
        sign, whole, fixed, period = m.groups()
        value = Fraction(int(whole or 0)) + Fraction(int(fixed or 0), 10 ** len(fixed))
        value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
        return Number(-value if sign == "-" else value, False, percent)
    m = _FRAC.match(t)
    if m:
        sign, num, den = m.groups()
        value = _fraction(num, den)
        return None if value is None else Number(-value if sign == "-" else value, False, percent)
    m = _SLASH.match(t)
    if m:
        value = _fraction(*m.groups())
        return None if value is None else Number(value, False, percent)
    return None


def _decimal(m: re.Match[str], percent: bool) -> Number | None:
    """A decimal literal read exactly, or None when its exact value would exceed MAX_DIGITS."""
    sign, whole, frac, exp = m.groups()
    frac = frac or ""
    if exp is not None and len(exp.lstrip("+-").lstrip("0")) > 6:
        return None
    shift = int(exp or 0)
    digits = (whole + frac).lstrip("0")
    if digits and (len(digits) - len(frac) + shift > MAX_DIGITS or len(frac) - shift > MAX_DIGITS):
        return None
    approx = m.group(3) is not None or exp is not None
    if not digits:  # zero, whatever its exponent
        return Number(Fraction(0), approx, percent, len(frac))
    value = Fraction(int(whole + frac), 10 ** len(frac))
    value = value * 10**shift if shift >= 0 else value / 10**-shift
    return Number(-value if sign == "-" else value, approx, percent, len(frac) - shift)


def is_oversized_number(s: str) -> bool:
    """A decimal literal whose exact value is too large or too small to expand (1e100000000)."""
    m = _NUM.fullmatch(_light(s).replace("$", ""))
    return bool(m and (m.group(2) or m.group(3)) and _decimal(m, False) is None)


def terminates(q: Fraction) -> bool:
    """True when `q` has a finite decimal expansion (its denominator has no prime but 2 and 5)."""
    d = q.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def decimal_matches(exact: Fraction, written: Fraction, places: int, rel_tol: float) -> bool:
    """Does a decimal written with `places` digits after the point stand for `exact`?

    Only if it is `exact`, or, when `exact` has no finite decimal expansion (1/3, 1/7), if it
    is `exact` rounded or cut at its own last digit and within `rel_tol` relative. A value
    that can be written exactly must be: 1000000.0 is not 1000001, 0.0 is not 10^{-9}."""
    if written == exact:
        return True
    if terminates(exact) or exact == 0:
        return False
    return rounds_to(exact, written, places) and abs(written - exact) <= Fraction(rel_tol) * abs(exact)


def rounds_to(exact: Fraction, written: Fraction, places: int) -> bool:
    """`written` is `exact` cut (toward zero) or rounded to nearest at its own last digit,
    `places` after the point (a tie may go either way)."""
    step = Fraction(10) ** places
    scaled = written * step
    if scaled.denominator != 1:
        return False
    return scaled.numerator in rounding_candidates(exact * step)


def rounding_candidates(x: Fraction) -> set[int]:
    """The integers `x` is cut to (toward zero) or rounded to (nearest; both on a tie)."""
    low = x.numerator // x.denominator
    frac = x - low
    cut = low if x >= 0 else (low if frac == 0 else low + 1)
    nearest = {low} if frac < Fraction(1, 2) else {low + 1} if frac > Fraction(1, 2) else {low, low + 1}
    return {cut} | nearest


def _top_level_separators(s: str) -> bool:
    """A comma or semicolon outside every bracket, or inside a bracket that encloses the whole
    answer: a list, tuple or interval (but not the arguments of a function, as in \\max(3, 5))."""
    depth = 0
    enclosing = False
    for i, c in enumerate(s):
        if c in "([{":
            if depth == 0:
                enclosing = not s[:i].strip() or s[:i].strip() in ("\\left", "\\")
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c in ",;" and (depth <= 0 or (depth == 1 and enclosing)):
            return True
    return False


def is_compound(s: str) -> bool:
    """Several values (list, tuple, interval, set, matrix) rather than one scalar."""
    t = _light(s)
    return "\\begin{" in t or "\\cup" in t or _top_level_separators(t)


def _fraction(num: str, den: str) -> Fraction | None:
    d = int(den)
    return None if d == 0 else Fraction(int(num), d)


def numbers_match(a: Number, b: Number, rel_tol: float) -> bool:
    """Exact, or a decimal standing for the other side's exact value (see decimal_matches).

    A percent sign may be read either way (MATH drops it: "28%" is 28; "25%" is also 0.25), so
    when exactly one side carries one, its value divided by 100 is accepted too.
    """
    if _values_match(a, b, rel_tol):
        return True
    if a.percent != b.percent:
        return _values_match(_hundredth(a), _hundredth(b), rel_tol)
    return False


def _hundredth(n: Number) -> Number:
    """A percent as the fraction it stands for (25% -> 0.25, two more places); others unchanged."""
    return Number(n.value / 100, n.approximate, False, n.places + 2) if n.percent else n


def _values_match(a: Number, b: Number, rel_tol: float) -> bool:
    if a.value == b.value:
        return True
    return (b.approximate and decimal_matches(a.value, b.value, b.places, rel_tol)) or (
        a.approximate and decimal_matches(b.value, a.value, a.places, rel_tol)
    )
