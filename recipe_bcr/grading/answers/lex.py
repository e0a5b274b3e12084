"""The tokens of an answer, one left-to-right scan: every character is part of one token, or the answer is refused;
spacing TeX does not render is a space flag on the next token, so "5 6" is never 56."""

from __future__ import annotations

import re
from dataclasses import dataclass

from recipe_bcr.grading.answers.words import PERCENT_WORDS, UNITS, WORDS_IN_MATH, is_unit_phrase

# numbers: "12", "1.5", ".5", "1,234,567" (groups of three, no space after a comma), "1e-12" handled by the parser
_DIGITS = re.compile(r"[0-9]+")
# a digit-group mark: "{,}", ",", ",\\!", TeX's spacing between groups ("\\,", "~", "\\ "), also braced ("{\\,}")
_SPACE_MARK = r"(?:(?:\\[,! ]|~) ?|\{ ?(?:\\[,! ]|~) ?\} ?)"
_MARK = r"(?: ?\{ ?, ?\} ?|,(?:\\[!,] ?)?|" + _SPACE_MARK + ")"
# 10,080 / 10{,}080 / 10\\,080 / 10~080 / 10,\\! 080, and "1 000" (one space, thin or narrow too): groups of exactly three digits
_THOUSANDS_GROUP = re.compile(_MARK + r"[0-9]{3}(?![0-9])|[ \u2009\u202f][0-9]{3}(?![0-9.])")
# inside brackets a plain comma separates elements ("(12,102)" is a pair): only the other marks group digits there
_MARKED_GROUP = re.compile(r"(?: ?\{ ?, ?\} ?|,\\[!,] ?|" + _SPACE_MARK + r")[0-9]{3}(?![0-9])")
# after the decimal point: 0.000\\,1, 3.141\\,592\\,65 (TeX or thin spacing after each full group of three)
_DECIMAL_GROUP = re.compile(r"(?:" + _SPACE_MARK + r"|[\u2009\u202f] ?)([0-9]{1,3})(?![0-9])")
_LETTERS = re.compile(r"[A-Za-z]+")
_UNIT_PHRASE = re.compile(r"[A-Za-z]+(?:/[A-Za-z]+)?(?: +per +[A-Za-z]+(?:/[A-Za-z]+)?)*")  # checked by is_unit_phrase
_COMMAND = re.compile(r"\\[A-Za-z]+")
_SPACING = frozenset(
    "\\, \\; \\: \\! \\> \\quad \\qquad \\enspace \\thinspace \\medspace \\thickspace \\displaystyle \\textstyle "
    "\\left \\right \\bigl \\bigr \\Bigl \\Bigr \\biggl \\biggr \\big \\Big \\bigg \\Bigg \\limits".split()
) | {"\\ "}
_MATH_DELIMITERS = frozenset(("\\(", "\\)", "\\[", "\\]", "\\"))  # math mode opens or closes: no content
_UNICODE = dict(  # a symbol written as a character is its command
    zip(
        "∞π√≤≥≠×·÷−°±∓≈∨∧⇒→⇔∪∩∣≡∼⊕∈∖∅Øμµ⊙",
        (
            "\\infty \\pi \\sqrt \\le \\ge \\ne \\times \\cdot \\div - \\degree \\pm \\mp \\approx \\lor \\land "
            "\\Rightarrow \\to \\iff \\cup \\cap \\mid \\equiv \\sim \\oplus \\in \\setminus \\emptyset \\emptyset \\mu \\mu \\odot"
        ).split(),
    )
)
_BLACKBOARD = {"ℝ": "R", "ℤ": "Z", "ℕ": "N", "ℚ": "Q", "ℂ": "C"}  # ℝ is \mathbb{R}
_INFINITY_WORDS = frozenset(("infinity", "infty"))  # [2, infinity), \text{infinity}: the sign in words
_VULGAR = {
    c: tuple(f.split("/"))
    for c, f in zip(
        "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒", ("1/2 1/3 2/3 1/4 3/4 1/5 2/5 3/5 4/5 1/6 5/6 1/7 1/8 3/8 5/8 7/8 1/9 1/10".split())
    )
}  # ½ is \frac{1}{2}
_TEMPERATURES = {"℃": "C", "℉": "F"}
_ALIASES = {"\\infin": "\\infty", "\\smallsetminus": "\\setminus", "\\backslash": "\\setminus", "\\O": "\\emptyset"}
_SUPERSCRIPTS = {c: str(d) for d, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}  # x², 10⁻⁶: raised digits are an exponent
_CHARS = frozenset("+-*/^_!'=<>()[]{}|,;:&.%?")  # ASCII math characters a token may be; "?" is always refused later


@dataclass(frozen=True)
class Token:
    kind: str  # "num" (digits, maybe a point and thousands commas), "cmd" (\\name), "letter", "char", "text"
    text: str  # the token as written (for "text": the braced content of \\text{...})
    start: int
    end: int
    spaced: bool  # spacing came right before it


def _text_group(s: str, i: int) -> int | None:
    """End (after the closing brace) of a balanced {...} starting at s[i] == "{"; None if unbalanced."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None


TEXT_COMMANDS = frozenset(
    "\\text \\textrm \\textnormal \\textbf \\textit \\textsf \\texttt \\mbox \\mathrm \\operatorname".split()
)


def tokens_all(texts: list[str]) -> list[list[Token] | None]:
    """The tokens of each text (see `tokens`)."""
    return [tokens(text) for text in texts]


def tokens(s: str) -> list[Token] | None:
    """The tokens of `s`, or None when some character is outside the answer vocabulary."""
    out: list[Token] = []
    i, n, spaced, depth = 0, len(s), False, 0
    parens, roots = 0, []  # roots: the parenthesis depth around each open `√(`, back to which its ")" closes the root
    while i < n:
        c = s[i]
        parens += (c == "(") - (c == ")")
        if c in "([" or s.startswith("\\{", i):
            depth += 1
        elif c in ")]" or s.startswith("\\}", i):
            depth = max(depth - 1, 0)
        if c.isspace() or c == "~" or c == "$":  # a dollar only opens or closes math mode
            spaced, i = True, i + 1
            continue
        if c == "√" and i + 1 < n and "0" <= s[i + 1] <= "9":  # √32 is the root of 32 (the digits under the sign)
            j = _DIGITS.match(s, i + 1).end()  # type: ignore[union-attr]
            out += [
                _command_token("\\sqrt", i, i + 1, spaced),
                Token("char", "{", i + 1, i + 1, False),
                Token("num", s[i + 1 : j], i + 1, j, False),
                Token("char", "}", j, j, False),
            ]
            spaced, i = False, j
            continue
        if c == "√" and i + 1 < n and s[i + 1] == "(":  # √(x+1): the parentheses are the root's braces
            out += [_command_token("\\sqrt", i, i + 1, spaced), Token("char", "{", i + 1, i + 2, False)]
            roots.append(parens)
            depth, parens = depth + 1, parens + 1
            spaced, i = False, i + 2
            continue
        if c == ")" and roots and roots[-1] == parens:
            roots.pop()
            out.append(Token("char", "}", i, i + 1, spaced))
            spaced, i = False, i + 1
            continue
        if c in _SUPERSCRIPTS or (c == "⁻" and i + 1 < n and s[i + 1] in _SUPERSCRIPTS):
            j = _superscript(out, s, i, spaced)  # x², 10⁻⁶: the exponent ^{...} written as raised digits
            spaced, i = False, j
            continue
        if c == "{" and i + 2 < n and s[i + 1] in "+-" and s[i + 2] == "}":  # TeX's braced sign: {-}3 is -3
            out.append(Token("char", s[i + 1], i, i + 3, spaced))
            spaced, i = False, i + 3
            continue
        if c in _VULGAR:  # ½: \frac{1}{2} (after digits, the mixed number 1½)
            num, den = _VULGAR[c]
            out += [
                _command_token("\\frac", i, i, spaced),
                Token("char", "{", i, i, False),
                Token("num", num, i, i, False),
                Token("char", "}", i, i, False),
                Token("char", "{", i, i, False),
                Token("num", den, i, i + 1, False),
                Token("char", "}", i + 1, i + 1, False),
            ]
            spaced, i = False, i + 1
            continue
        if c in _TEMPERATURES:  # ℃: degrees Celsius
            out += [_command_token("\\degree", i, i, spaced), Token("letter", _TEMPERATURES[c], i, i + 1, False)]
            spaced, i = False, i + 1
            continue
        if c in _BLACKBOARD:
            out += [
                _command_token("\\mathbb", i, i, spaced),
                Token("char", "{", i, i, False),
                Token("letter", _BLACKBOARD[c], i, i + 1, False),
                Token("char", "}", i + 1, i + 1, False),
            ]
            spaced, i = False, i + 1
            continue
        if c in _UNICODE:
            out.append(_command_token(_UNICODE[c], i, i + 1, spaced))
            spaced, i = False, i + 1
            continue
        if "0" <= c <= "9":
            m = _DIGITS.match(s, i)
            assert m is not None
            j = m.end()
            if j - i <= 3:  # 1,234,567: every group after the first has exactly three digits
                groups = _THOUSANDS_GROUP if depth == 0 else _MARKED_GROUP
                while (g := groups.match(s, j)) is not None:
                    j = g.end()
            if j < n and s[j] == "." and j + 1 < n and "0" <= s[j + 1] <= "9":
                j = _decimals(s, j + 1)
            elif s.startswith((".\\overline", ".\\bar", ".\\dot", ".("), j):  # 0.\overline{3}, 0.\bar{3}, 0.(3)
                j += 1
            _add_digits(out, Token("num", s[i:j], i, j, spaced))
            spaced, i = False, j
            continue
        if c == "." and i + 1 < n and "0" <= s[i + 1] <= "9":
            j = _decimals(s, i + 1)
            out.append(Token("num", s[i:j], i, j, spaced))
            spaced, i = False, j
            continue
        if c == "\\":
            m = _COMMAND.match(s, i)  # else a stray backslash (closing the answer: spacing) and what follows it
            name, j = (m.group(), m.end()) if m is not None else (s[i : i + 2], i + 2)
            name = _ALIASES.get(name, name)
            if name in _SPACING or name in _MATH_DELIMITERS:
                spaced, i = True, j
                continue
            digits = _styled_digits(s, name, j)
            if digits is not None:  # \mathbf{1}\mathbf{2} renders as 12: digits, joined to digits written right before
                _add_digits(out, Token("num", digits[0], i, digits[1], spaced))
                spaced, i = False, digits[1]
                continue
            if name in TEXT_COMMANDS:
                k = j
                while k < n and s[k] == " ":
                    k += 1
                if k >= n or s[k] != "{":
                    return None
                end = _text_group(s, k)
                if end is None:
                    return None
                content = s[k + 1 : end - 1]
                if content.strip() in _UNICODE:  # \text{∞}: the sign, in text mode
                    out.append(_command_token(_UNICODE[content.strip()], i, end, spaced))
                elif content.strip().lower().lstrip("+-") in _INFINITY_WORDS | {"inf"}:  # \text{-infinity}, \text{inf}
                    if content.strip().startswith("-"):
                        out.append(Token("char", "-", i, i, spaced))
                    out.append(_command_token("\\infty", i, end, spaced))
                elif content.strip().lower() in PERCENT_WORDS:
                    out.append(_command_token("\\%", i, end, spaced))
                elif content.strip() == "\\$":  # \text{\$}12.50 is \$12.50: a dollar sign before the value
                    out.append(_command_token("\\$", i, end, spaced))
                elif content.strip() == ",":  # x = 2 \text{, } x = 3: the comma of a list
                    out.append(Token("char", ",", i, end, spaced))
                else:
                    out.append(Token("text", content, i, end, spaced))
                spaced, i = False, end
                continue
            out.append(_command_token(name, i, j, spaced))
            spaced, i = False, j
            continue
        if ("a" <= c <= "z") or ("A" <= c <= "Z"):
            m = _LETTERS.match(s, i)
            assert m is not None
            word = m.group()
            if word.lower() in PERCENT_WORDS or word.lower() in _INFINITY_WORDS:  # 28 percent, [2, infinity)
                name = "\\%" if word.lower() in PERCENT_WORDS else "\\infty"
                out.append(_command_token(name, i, m.end(), spaced))
                spaced, i = False, m.end()
                continue
            # only right after a number (one scan per number, so the lexer stays linear)
            phrase = _UNIT_PHRASE.match(s, i) if out and out[-1].kind == "num" else None
            if phrase is not None and phrase.end() > m.end() and is_unit_phrase(phrase.group()):
                out.append(Token("text", phrase.group(), i, phrase.end(), spaced))  # 60 miles per hour, 5 m/s, 60 km/h
                spaced, i = False, phrase.end()
                continue
            if (word in WORDS_IN_MATH or (len(word) > 1 and word.lower() in UNITS)) and (i == 0 or s[i - 1] != "\\"):
                out.append(Token("text", word, i, m.end(), spaced))  # "12 and 13", "125 miles": words, not products
                spaced, i = False, m.end()
                continue
            for k in range(i, m.end()):
                out.append(Token("letter", s[k], k, k + 1, spaced and k == i))
            spaced, i = False, m.end()
            continue
        elif c in _CHARS:
            out.append(Token("char", c, i, i + 1, spaced))
        else:
            return None
        spaced, i = False, i + 1
    return out


_STYLED_DIGITS = re.compile(r"\{([0-9]+(?:\.[0-9]+)?)\}")
DIGIT_STYLES = frozenset(
    "\\mathbf \\boldsymbol \\bm \\mathit \\mathsf \\mathnormal \\mathrm \\text \\textbf \\textrm".split()
)


def _styled_digits(s: str, name: str, j: int) -> tuple[str, int] | None:
    """`\\mathbf{12}` (a style or text command holding only digits): the digits and where the group ends."""
    if name not in DIGIT_STYLES:
        return None
    m = _STYLED_DIGITS.match(s, j)
    return None if m is None else (m.group(1), m.end())


def _decimals(s: str, i: int) -> int:
    """End of the digits after a decimal point at s[i], spaced groups of three included (the last may be shorter)."""
    j = _DIGITS.match(s, i).end()  # type: ignore[union-attr]
    group = j - i
    while group == 3 and (g := _DECIMAL_GROUP.match(s, j)) is not None:
        j, group = g.end(), len(g.group(1))
    return j


def _superscript(out: list[Token], s: str, i: int, spaced: bool) -> int:
    """Append `^{-12}` for the raised run `⁻¹²` at s[i]; return where the run ends."""
    j = i + (s[i] == "⁻")
    k = j
    while k < len(s) and s[k] in _SUPERSCRIPTS:
        k += 1
    digits = "".join(_SUPERSCRIPTS[c] for c in s[j:k])
    out += [Token("char", "^", i, i, spaced), Token("char", "{", i, i, False)]
    if j > i:
        out.append(Token("char", "-", i, j, False))
    out += [Token("num", digits, j, k, False), Token("char", "}", k, k, False)]
    return k


def _add_digits(out: list[Token], tok: Token) -> None:
    """Digits written right after digits (no space, as `\\mathbf{1}\\mathbf{2}` or `\\mathbf{1}2`) are one number."""
    prev = out[-1] if out else None
    if prev is not None and prev.kind == "num" and prev.end == tok.start and prev.text.isdigit() and tok.text.isdigit():
        out[-1] = Token("num", prev.text + tok.text, prev.start, tok.end, prev.spaced)
    else:
        out.append(tok)


def _command_token(name: str, start: int, end: int, spaced: bool) -> Token:
    return Token("cmd", name, start, end, spaced)
