"""The shape of an answer: which parts of it are values, and which make it a hedge.

Rules (each decided by one linear token scan, never by a regex that can backtrack):
  * An answer is one claim. Two candidates joined by a connective or a relation
    (`3 \\lor 5`, `3 \\Rightarrow 5`, `3 \\\\ 5`, `\\substack{3 \\\\ 5}`, `\\neq 5`, `\\ge 5`) are a
    hedge unless the gold answer is itself written with that kind of connective (an
    inequality gold may be answered with an inequality).
  * `a \\approx b` claims both: `a` must be the answer and `b` a rounding of it at its own
    last digit (`\\frac{\\sqrt3}{3} \\approx 0.577` is right, `3 \\approx 5` is not).
  * `label = value` states the value: `x = 5`, `P(A) = 0.2`, `f(x) = 3`, `a_n = 2^n`, `|AB| = 5`,
    `f^{-1}(2) = 3`.
    A label is a name (letters, a subscript, an argument list, absolute bars), never a sum or a
    product: `x + y = 1`, `2x = 6` are equations between values. Every value in a chain must be
    the answer (`x = \\frac{10}{2} = 5` is 5; `x = 3 = 5` is nothing). When the gold answer is
    itself an equation, the answer is compared whole.
  * A one-element set or bracket (`\\{5\\}`, `(5)`) holds its element, which is then held to the
    same exact-number rules as a bare value (see unwrap_singleton; hedges are looked for before
    unwrapping, so `(3 \\approx 5)` is one).
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.", re.DOTALL)
_OPEN = {"{", "(", "[", "\\{", "\\lbrace", "\\langle", "\\lbrack", "\\lvert"}
_CLOSE = {"}", ")", "]", "\\}", "\\rbrace", "\\rangle", "\\rbrack", "\\rvert"}

RELATIONS = frozenset(
    "< > ≤ ≥ ≠ ≡ ∼ ≃ ≅ \\lt \\gt \\le \\leq \\leqq \\leqslant \\ge \\geq \\geqq \\geqslant \\ne \\neq \\not "
    "\\nleq \\ngeq \\nless \\ngtr \\sim \\simeq \\cong \\equiv \\propto \\ll \\gg "
    "\\lessgtr \\gtrless \\doteq \\lesssim \\gtrsim \\backsim".split()
)
APPROX = frozenset(("\\approx", "\\thickapprox", "≈"))  # "exact \\approx decimal": both claims must hold
# connectives, each with the family a gold answer must use for an answer to use it too
JOINERS = {
    **dict.fromkeys(("\\lor", "\\vee", "∨"), "or"),
    **dict.fromkeys(("\\land", "\\wedge", "∧"), "and"),
    **dict.fromkeys(("\\oplus", "\\otimes", "⊕", "\\veebar", "\\barwedge"), "oplus"),
    **dict.fromkeys(("\\Rightarrow", "\\implies", "\\Longrightarrow", "⇒", "\\therefore", "\\because"), "implies"),
    **dict.fromkeys(("\\to", "\\rightarrow", "\\longrightarrow", "\\mapsto", "→", "\\Leftarrow", "\\leftarrow"), "to"),
    **dict.fromkeys(("\\iff", "\\Leftrightarrow", "\\Longleftrightarrow", "⇔"), "iff"),
    **dict.fromkeys(("\\mid", "∣"), "mid"),
    **dict.fromkeys(("\\pm", "\\mp", "±", "∓"), "pm"),
    **dict.fromkeys(("\\cup", "∪"), "cup"),
    **dict.fromkeys(("\\cap", "∩"), "cap"),
    "\\substack": "substack",
    "\\\\": "linebreak",  # only outside \begin ... \end (a matrix row break is structure)
    "\\boxed": "box",
    "\\fbox": "box",
    "$": "dollar",  # an unescaped dollar inside an answer starts a second formula
}
_NOT_IN_LABEL = frozenset(
    "+ - * / ^ ! = \\cdot \\times \\div \\frac \\dfrac \\tfrac \\sqrt \\pm \\mp \\sum \\prod \\int \\binom "
    "\\log \\ln \\lg \\exp \\infty".split()
)
_INVISIBLE = {"Cf", "Mn", "Me", "Cc", "Co", "Cs"}  # zero-width, combining, control, private, surrogate


def _scan(s: str) -> list[tuple[int, str, int, int]]:
    """(position, token, bracket depth, environment depth) for every token, in one pass."""
    out = []
    depth = env = 0
    for m in _TOKEN.finditer(s):
        tok = m.group()
        if tok in _CLOSE:
            depth = max(depth - 1, 0)
        elif tok == "\\end":
            env = max(env - 1, 0)
        out.append((m.start(), tok, depth, env))
        if tok in _OPEN:
            depth += 1
        elif tok == "\\begin":
            env += 1
    return out


def _families(tokens: list[tuple[int, str, int, int]]) -> set[str]:
    """The connective families used, and "relation" for any relation sign."""
    found = set()
    prev = ""
    for _, tok, depth, env in tokens:
        if tok in RELATIONS or (tok == "=" and prev == "!"):
            found.add("relation")
        elif tok in APPROX and depth > 0:  # values() splits only top-level ones: (3 \approx 5) is a hedge
            found.add("approx")
        elif tok in JOINERS and (tok != "\\\\" or env == 0):
            found.add(JOINERS[tok])
        if not tok.isspace():
            prev = tok
    return found


def hedge(pred: str, gold: str) -> bool:
    """True when `pred` joins candidates with a connective or relation the gold answer does not use."""
    extra = _families(_scan(pred)) - _families(_scan(gold))
    if "cup" in extra or "cap" in extra:  # an interval union may answer an inequality gold
        extra -= {"cup", "cap"} if "relation" in _families(_scan(gold)) else set()
    return bool(extra)


def has_invisible(s: str) -> bool:
    """Zero-width, combining, control or private-use characters: nothing an honest answer needs."""
    return any(unicodedata.category(c) in _INVISIBLE and c not in "\t\n\r" for c in s)


def _top_level_cuts(tokens: list[tuple[int, str, int, int]], *seps: str) -> list[tuple[int, str]]:
    """(position, token) of each separator outside every bracket and environment ("=" not in <=, >=, !=)."""
    cuts = []
    prev = ""
    for pos, tok, depth, env in tokens:
        if tok in seps and depth == 0 and env == 0 and not (tok == "=" and prev in ("<", ">", "!", ":")):
            cuts.append((pos, tok))
        if not tok.isspace():
            prev = tok
    return cuts


_THOUSANDS = re.compile(r"\d,(?:\\!|\\,|\s){0,3}\d{3}(?!\d)")  # 10,080 and 10,\!080 are one number


def _split(s: str, cuts: list[tuple[int, str]]) -> list[tuple[str, bool]]:
    """The parts between cuts, each with True when an approximation sign precedes it."""
    parts = []
    start, approx = 0, False
    for pos, tok in cuts:
        parts.append((s[start:pos].strip(), approx))
        start, approx = pos + len(tok), tok in APPROX
    parts.append((s[start:].strip(), approx))
    return parts


_NAME_MARKS = re.compile(r"\^\s*\{\s*(?:-1|\*|\\prime)\s*\}|\^\s*(?:\*|\\prime)")  # f^{-1}, x^*, f^\prime


def is_label(s: str) -> bool:
    """A name that a value can be assigned to: no arithmetic outside its brackets, not a number."""
    s = _NAME_MARKS.sub("", s.strip())
    if not s or len(s) > 80 or s[0].isdigit() or not any(c.isalpha() for c in s):
        return False
    return not any(depth == 0 and tok in _NOT_IN_LABEL for _, tok, depth, _ in _scan(s))


def has_equation(s: str) -> bool:
    return bool(_top_level_cuts(_scan(s), "=", *APPROX))


def values(pred: str, gold: str) -> list[tuple[str, bool]] | None:
    """The values `pred` states, each with True where it is only claimed approximately (after
    `\\approx`); every one must be the gold answer. None if a side is empty.

    "x = 5" states 5; "x = \\frac{10}{2} = 5" states both; "x + y = 1" states x + y and 1;
    "\\frac{\\sqrt3}{3} \\approx 0.577" states the exact value and a rounding of it. Left whole
    when the gold answer is itself an equation."""
    tokens = _scan(pred)
    lists = [pos for pos, _ in _top_level_cuts(tokens, ",", ";") if not _THOUSANDS.match(pred, pos - 1)]
    if has_equation(gold) or lists or word_list(pred):
        return [(pred, False)]  # an equation, or a list of them ("x = 1, y = 2", "x = 1 or x = 2"), is compared whole
    parts = _split(pred, _top_level_cuts(tokens, "=", *APPROX))
    if len(parts) > 1 and (is_label(parts[0][0]) or (not parts[0][0] and not parts[1][1])):
        parts = parts[1:]  # "x = 5", and a bare leading "= 5"
    if any(not p for p, _ in parts):
        return None
    if all(approx for _, approx in parts):  # only approximations stated: held to the exact rules
        parts = [(p, False) for p, _ in parts]
    return parts


_SINGLETON = (("\\{", "\\}"), ("\\left\\{", "\\right\\}"), ("(", ")"), ("\\left(", "\\right)"))


def unwrap_singleton(s: str) -> str:
    """`\\{5\\}` and `(5)` hold 5; anything with a top-level comma, or unmatched brackets, is kept."""
    t = s.strip()
    for left, right in _SINGLETON:
        if t.startswith(left) and t.endswith(right) and len(t) > len(left) + len(right):
            inner = t[len(left) : -len(right)]
            tokens = _scan(inner)
            if tokens and _closes(tokens) and not _top_level_cuts(tokens, ",") and not _top_level_cuts(tokens, ";"):
                return inner.strip()
    return s


def _closes(tokens: list[tuple[int, str, int, int]]) -> bool:
    """The brackets inside are balanced (so the outer pair really encloses everything)."""
    depth = 0
    for _, tok, _, _ in tokens:
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_WORD_LIST = re.compile(r"(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])")


def word_list(s: str) -> bool:
    """"3 or 5", "3 \\text{ and } 5": candidates joined by words."""
    return bool(_WORD_LIST.search(s))
