"""Per-problem answer extraction from one grouped completion (paper, Algorithm 1).

Three stages of decreasing specificity, recorded per problem:
  1. inside the "### Problem i" section, the box right after "Answer i:";
  2. "Answer i:" followed by a box anywhere in the completion;
  3. the i-th top-level box of the completion by position (or, for the conventional
     single-problem prompt, the last box).
Guards close reward leaks the paper's sketch leaves open: a box labelled for another
problem ("Answer 2:") is never assigned to problem 1 by position; labelled answers for one
problem that disagree ("Answer1: \\boxed{3}" ... "Answer1: \\boxed{5}") are a hedge, so the
problem has no answer (restating the same answer is fine); a box that shows no
answer (empty to the eye: spacing, `\\phantom`, `\\text{}`; or a placeholder: `...`, `??`,
`\\square`, `[answer]`, `\\mathrm{Answer}`) is no answer at all, so it earns no format credit;
and a box that swallowed a label, a header or another box (it never closed where it should
have) is no box (recipe_bcr.grading.parse.boxed). Every scan is linear in the completion: the header and
label patterns use possessive quantifiers (no backtracking over whitespace runs), and a
label only ever names a top-level box.
For thinking models the text after the last `</think>` is read; a completion whose thinking never closed (it
ran into the token budget) is read whole, as the paper's extraction reads every completion: its stages find the
labels and boxes written inside the open think block, with the same guards (two different labelled answers for
one problem are still a hedge).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Literal

from recipe_bcr.grading.answers.gate import restatement_key, same_answer
from recipe_bcr.grading.answers.normalize import MAX_ANSWER_CHARS
from recipe_bcr.grading.parse.boxed import Box, BoxIndex

Fallback = Literal["position", "last"]

SECTION_HEADER = re.compile(r"#{2,6}[ \t]*+[*_]*+[ \t]*+Problem[ \t]*+(\d++)", re.IGNORECASE)
ANSWER_LABEL = re.compile(  # starts at the word itself so the scan is literal-led; "**" or "__" around is allowed
    r"(?<![A-Za-z])Answer[ \t]*+(\d++)[ \t]*+[*_]*+[ \t]*+[:：]\s*+[*_]*+\s*+"
    r"(?:\$\$?+|\\\(|\\\[|\\begin\{(?:equation|align|gather|displaymath|math)\*?+\})?+\s*+(?:\\displaystyle\s*+)?+",
    re.IGNORECASE,
)
# a word that offers a second candidate after the answer's box ("(alternatively 5)", "or $5$")
_HEDGE_WORD = re.compile(
    r"(?<![A-Za-z])(?:alternatively|alternative|or|otherwise|possibly|perhaps|maybe|else)(?![A-Za-z])", re.IGNORECASE
)
# what lies between two boxes that are listed as candidates: separators and hedge words only (`, ` `; ` ` / `
# ` or ` `\\quad` `(alternatively `); between an unlabelled answer's box and its neighbour on the line
_LIST_GAP = re.compile(
    r"[\s,;/$()]*+(?:(?:\\q?quad|\\text\{\s*+(?:or|and)\s*+\}|or|and|alternatively|otherwise|maybe|possibly|perhaps)"
    r"[\s,;/$()]*+)?+",
    re.IGNORECASE,
)
_HEDGE_WORDS_READ = 4  # hedge words looked at per answer line (each is one linear look at the line)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|.", re.DOTALL)
# commands whose braced arguments are never shown (how many arguments)
_HIDDEN_ARGS = {
    "\\phantom": 1,
    "\\hphantom": 1,
    "\\vphantom": 1,
    "\\hspace": 1,
    "\\hspace*": 1,
    "\\vspace": 1,
    "\\vspace*": 1,
    "\\kern": 0,
    "\\color": 1,
    "\\textcolor": 1,
    "\\rule": 2,
}
# commands that show nothing of their own (spacing, styling, wrappers whose arguments are still read, fill-in marks)
_NOTHING = frozenset(
    "\\, \\; \\: \\! \\  \\quad \\qquad \\enspace \\thinspace \\medspace \\thickspace \\negthinspace "
    "\\displaystyle \\textstyle \\left \\right \\big \\Big \\bigg \\Bigg \\text \\textbf \\textit \\textrm "
    "\\textnormal \\mathrm \\mathbf \\mathit \\mathsf \\mathtt \\mbox \\operatorname \\underline \\overline "
    "\\boxed \\fbox \\square \\Box \\blacksquare \\bigcirc \\ldots \\dots \\cdots \\vdots \\cdot \\bullet "
    "\\circ \\star \\ast \\_ \\% \\# \\& \\$ \\empty \\null \\relax \\strut \\mathstrut \\smash \\hfill \\hfil "
    "\\vfill \\newline \\linebreak \\par \\noindent \\hskip \\vskip \\mskip \\medskip \\bigskip \\smallskip "
    "\\nobreak \\allowbreak \\ensuremath \\quad".split()
) | {"\\ "}
# words of a fill-in template ("Your final answer here", "[answer]", "TBD"); a box saying only these says nothing
_PLACEHOLDER_WORDS = re.compile(
    r"(?:your|the|final|insert|put|write|answers?|ans|here|goes|fill|in|blank|placeholder|tbd|todo|to|be|"
    r"determined|value|result|n/a|na|xxx)+"
)


def visible_text(content: str) -> str:
    """What a reader sees of a box, lowercased: letters, digits and math symbols, no spacing,
    styling, punctuation, brackets or hidden arguments. One linear scan."""
    out: list[str] = []
    skip_groups, depth = 0, 0
    for m in _TOKEN.finditer(content):
        tok = m.group()
        if depth:  # inside a hidden argument
            depth += (tok == "{") - (tok == "}")
            if depth == 0:
                skip_groups -= 1
            continue
        if skip_groups and tok == "{":
            depth = 1
            continue
        if skip_groups and not tok.isspace():
            skip_groups = 0  # an argument without braces: nothing more is hidden
        if tok in _HIDDEN_ARGS:
            skip_groups = _HIDDEN_ARGS[tok]
        elif tok.startswith("\\"):
            if tok == "\\{" or tok == "\\}" or (tok not in _NOTHING and tok[1:].isalpha()):
                out.append(tok)
        elif tok.isalnum() or tok == "/":
            out.append(tok.lower())
    return "".join(out)


def is_placeholder(content: str) -> bool:
    """A box that shows no answer: empty to the eye, a fill-in mark or word copied from a template,
    or longer than any answer (MAX_ANSWER_CHARS)."""
    if len(content) > MAX_ANSWER_CHARS:
        return True
    seen = visible_text(content)
    return not seen.strip("/") or (len(seen) <= 60 and _PLACEHOLDER_WORDS.fullmatch(seen) is not None)


@dataclass(frozen=True)
class ProblemAnswer:
    """What was extracted for problem `index` (1-based)."""

    index: int
    answer: str | None
    stage: int | None
    section: tuple[int, int] | None  # character span of "### Problem i" in the completion


@dataclass(frozen=True)
class GroupExtraction:
    problems: tuple[ProblemAnswer, ...]
    answer_start: int  # where the read text starts (after the last </think>, or after an unclosed <think>)
    think_closed: bool | None  # None: no think block involved; False: it never closed (read whole)

    @property
    def answers(self) -> list[str | None]:
        return [p.answer for p in self.problems]

    @property
    def stages(self) -> list[int | None]:
        return [p.stage for p in self.problems]

    @property
    def format_ok(self) -> bool:
        """Every problem answered as "Answer i: \\boxed{...}" inside its own section."""
        return all(p.stage == 1 for p in self.problems)

    @property
    def answered(self) -> float:
        return sum(p.answer is not None for p in self.problems) / len(self.problems)


def _index(digits: str) -> int:
    """A header's or label's problem number; 0 (no problem) for one too long to be any (and for
    thousands of digits, which int() would refuse)."""
    return int(digits) if len(digits) <= 6 else 0


def _answer_text(completion: str, thinking: bool) -> tuple[int, bool | None]:
    """Offset where answers may be read, and whether a think block closed (None: no think block involved). An
    unclosed block is read from its start (after `<think>` when the completion opens it)."""
    close = completion.rfind(THINK_CLOSE)
    if close >= 0:
        return close + len(THINK_CLOSE), True
    opened = completion.find(THINK_OPEN)
    if opened >= 0:
        return opened + len(THINK_OPEN), False
    return 0, (False if thinking else None)


def _sections(heads: list[tuple[int, int]], length: int, n: int) -> dict[int, tuple[int, int]]:
    """First "### Problem i" section of each i in 1..n, ending where the next header starts."""
    spans: dict[int, tuple[int, int]] = {}
    for k, (start, num) in enumerate(heads):
        if 1 <= num <= n and num not in spans:
            end = heads[k + 1][0] if k + 1 < len(heads) else length
            spans[num] = (start, end)
    return spans


def _conflicting_labels(labelled: list[tuple[int, int, str]], n: int) -> set[int]:
    """Problems with labelled answers that disagree ("Answer1: \\boxed{3}" ... "Answer1: \\boxed{5}")."""
    first: dict[int, tuple[str, object]] = {}
    conflicted: set[int] = set()
    for num, _, content in labelled:
        if not 1 <= num <= n or num in conflicted:
            continue
        key = restatement_key(content)  # restating one answer is no hedge
        if first.setdefault(num, key) != key:
            conflicted.add(num)
    return conflicted


def _line_span(text: str, start: int, end: int, barriers: list[int]) -> tuple[int, int]:
    """The line around text[start:end], cut at the answer labels and headers on it (other problems' answers)."""
    lo, hi = text.rfind("\n", 0, start) + 1, text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    k = bisect_right(barriers, start)  # sorted: one look on each side
    if k:
        lo = max(lo, barriers[k - 1])
    k = bisect_left(barriers, end)
    if k < len(barriers):
        hi = min(hi, barriers[k])
    return lo, hi


def _value_after(tail: str) -> str | None:
    """What a hedge word offers as a value: math in `$...$` or `\\(...\\)`, else the rest of the clause when it
    holds a digit or a command; None when it states no value ("or so", "alternatively, by symmetry")."""
    tail = tail.lstrip(" \t,:;")
    for opener, closer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if tail.startswith(opener):
            end = tail.find(closer, len(opener))
            return tail[len(opener) : end if end >= 0 else len(tail)]
    clause = tail.split(")", 1)[0].rstrip(" .,;")
    return clause if any(c.isdigit() or c == "\\" for c in clause) else None


def _hedged(text: str, box: Box, line: tuple[int, int], others: list[Box]) -> bool:
    """A second candidate on the answer's line: another box (`others`, in order), or a value after "or",
    "alternatively", ..., that is not the same value. Two candidates are a hedge, whichever of them is right."""
    first = bisect_left(others, line[0], key=lambda o: o.start)
    last = bisect_left(others, line[1], key=lambda o: o.start)
    if any(o is not box and not same_answer(box.content, o.content) for o in others[first:last]):
        return True
    tail = text[box.end : line[1]]
    for k, m in enumerate(_HEDGE_WORD.finditer(tail)):
        if k == _HEDGE_WORDS_READ:
            return True  # a line of alternatives
        value = _value_after(tail[m.end() :])
        if value is not None and not same_answer(box.content, value):
            return True
    return False


def _listed(text: str, box: Box, ordered: list[Box]) -> bool:
    """An unlabelled answer's box listed beside another candidate (`\\boxed{3}, \\boxed{5}`, `\\boxed{3} or
    \\boxed{5}`): a hedge unless both state the same value. Boxes with words between them are a derivation's steps."""
    k = bisect_left(ordered, box.start, key=lambda o: o.start)
    for j in (k - 1, k + 1):
        if 0 <= j < len(ordered):
            a, b = (ordered[j], box) if j < k else (box, ordered[j])
            gap = text[a.end : b.start]
            if len(gap) <= 40 and _LIST_GAP.fullmatch(gap) and not same_answer(box.content, ordered[j].content):
                return True
    return False


def extract_group(
    completion: str, n: int, *, thinking: bool = False, fallback: Fallback = "position"
) -> GroupExtraction:
    """Extract the answers of an N-problem completion with stages and section spans."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    offset, closed = _answer_text(completion, thinking)
    text = completion[offset:]
    heads = [(m.start(), _index(m.group(1))) for m in SECTION_HEADER.finditer(text)]
    labels = list(ANSWER_LABEL.finditer(text))
    boxes = BoxIndex(text, barriers=[h for h, _ in heads] + [m.start() for m in labels])
    sections = _sections(heads, len(text), n)

    barriers = sorted([h for h, _ in heads] + [m.start() for m in labels])
    labelled: list[tuple[int, int, str]] = []  # (problem number, label start, box content)
    label_of_box: dict[int, int] = {}
    hedged: set[int] = set()
    for m in labels:
        box = boxes.by_start.get(m.end())
        if box is None or is_placeholder(box.content):
            continue
        num = _index(m.group(1))
        labelled.append((num, m.start(), box.content))
        label_of_box[box.start] = num
        if _hedged(text, box, _line_span(text, m.start(), box.end, barriers), boxes.top_level):
            hedged.add(num)

    conflicted = _conflicting_labels(labelled, n) | hedged
    found: dict[int, tuple[str, int]] = {}
    for i in range(1, n + 1):
        if i in conflicted:
            continue  # two different labelled answers for one problem: a hedge, no answer
        span = sections.get(i)
        if span and (hit := next((c for k, s, c in labelled if k == i and span[0] <= s < span[1]), None)) is not None:
            found[i] = (hit, 1)
        elif (hit := next((c for k, _, c in labelled if k == i), None)) is not None:
            found[i] = (hit, 2)

    unlabelled_ok = [b for b in boxes.top_level if label_of_box.get(b.start) is None and not is_placeholder(b.content)]
    if fallback == "last" and n == 1 and 1 not in found and 1 not in conflicted and unlabelled_ok:
        box = unlabelled_ok[-1]
        if not _listed(text, box, unlabelled_ok):
            found[1] = (box.content, 3)
    elif fallback == "position":
        ordered = boxes.top_level
        for i in range(1, n + 1):
            if i in found or i in conflicted or i > len(ordered):
                continue
            box = ordered[i - 1]
            owner = label_of_box.get(box.start)
            if owner in (None, i) and not is_placeholder(box.content):
                if n == 1 and _listed(text, box, ordered):
                    continue  # one problem, two candidates on its line (several problems' boxes may share a line)
                found[i] = (box.content, 3)

    problems = []
    for i in range(1, n + 1):
        answer, stage = found.get(i, (None, None))
        span = sections.get(i)
        problems.append(ProblemAnswer(i, answer, stage, (span[0] + offset, span[1] + offset) if span else None))
    return GroupExtraction(tuple(problems), offset, closed)


def extract_answers(completion: str, n: int) -> list[str | None]:
    """The N answers of a grouped completion (None where nothing was found)."""
    return extract_group(completion, n).answers
