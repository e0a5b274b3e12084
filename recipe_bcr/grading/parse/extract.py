"""Per-problem answer extraction from one grouped completion (paper, Algorithm 1), under the answer policy
(docs/grading.md): one linear pass says whose text each stretch is, and each problem's text goes clause by
clause to the policy; the paper's position order decides only for boxes no text assigns."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import namedtuple
from dataclasses import dataclass, field
from functools import lru_cache

from recipe_bcr.grading.answers.gate import same_answer
from recipe_bcr.grading.answers.normalize import MAX_ANSWER_CHARS
from recipe_bcr.grading.parse.boxed import Box, BoxIndex

# literal-led patterns, one pass each (an alternation of them would lose the engine's literal search)
SECTION_HEADER = re.compile(r"#{2,6}[ \t]*+[*_]*+[ \t]*+Problem[ \t]*+(\d++)", re.IGNORECASE)
ANSWER_LABEL = re.compile(  # the number may be "to Problem 2", "(2)", "#2", and a note may follow
    r"Answer[ \t]*+(?:(?:to|for|of)[ \t]++)?+(?:(?:Problem|Question|Q)\.?+[ \t]*+)?+(?:(?:\#|No\.)[ \t]*+)?+"
    r"\(?+(\d++)\)?+[ \t]*+(?:\(([A-Za-z][A-Za-z \t]{0,30}+)\)[ \t]*+)?+[*_]*+[ \t]*+[:：]",
    re.IGNORECASE,
)
_TO_PROBLEM = re.compile(r"to[ \t]++(?:Problem|Question)[ \t]*+(\d++)", re.IGNORECASE)
# what may stand between a bare label and its box: markup, display math, styling, a name and "="
_LEAD = re.compile(
    r"(?:\s++|[*_$&]++|\\[(\[\\]|\\begin\{[A-Za-z]++\*?+\}|\\(?!boxed|fbox)[A-Za-z]++(?:\{\s*+\})?+|"
    r"[A-Za-z](?:_\{?+\w++\}?+)?+[ \t&]*+=)*+"
)
_BACK = re.compile(r"(?<![A-Za-z])(?:back|return(?:ing)?+)[ \t]++\Z", re.IGNORECASE)  # on the 12 characters before
_BEFORE_BOX = 64  # characters read before a problem's first box, for a candidate listed beside it
_PARAGRAPH = re.compile(r"\n[ \t]*+\n")
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|.", re.DOTALL)
# commands whose braced arguments are never shown (how many arguments)
_HIDDEN_ARGS = {
    **dict.fromkeys(
        "\\phantom \\hphantom \\vphantom \\hspace \\hspace* \\vspace \\vspace* \\color \\textcolor".split(), 1
    ),
    "\\kern": 0,
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
    """What a reader sees of a box, lowercased: letters, digits and math symbols, nothing hidden or spacing."""
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
        elif tok.isalnum() or tok == "/" or (tok > "\x7f" and unicodedata.category(tok)[0] == "S"):
            out.append(tok.lower())  # a math symbol written as a character (∞, ∅, ≤) is as visible as its command
    return "".join(out)


def is_placeholder(content: str) -> bool:
    """A box that shows no answer: empty to the eye, a template's fill-in, or longer than any answer."""
    return len(content) > MAX_ANSWER_CHARS or _shows_nothing(content)


@lru_cache(maxsize=65536)
def _shows_nothing(content: str) -> bool:
    seen = visible_text(content)
    return not seen.strip("/") or (len(seen) <= 60 and _PLACEHOLDER_WORDS.fullmatch(seen) is not None)


# -- the answer policy (docs/grading.md): the candidates one problem's text commits to, clause by clause; nothing
# here compares values (the grader pays a problem only when every candidate equals the gold)
_MAX_CANDIDATES = 8  # more different candidates for one problem is a list of guesses: no answer
_ALTERNATIVE = r"or|either|alternatively|alternative|otherwise|possibl[ey]|perhaps|maybe|also|unless|could|might"
_REVISION = (
    r"actually|wait|oops|instead|rather|final(?:ly)?+|correct(?:ion|ed|ing)?+|revis(?:ed?+|ion|ing)|"
    r"revisit(?:ed|ing)?+|mistake|erred|wrong|incorrect|re-?+(?:check|consider|compute|calculat|evaluat|do)[a-z]*+|"
    r"second[ \t]++thought|scratch[ \t]++that"
)
_NEGATION = r"not|than|except|excluding|nor|neither"
# "the answer is", "it's", "value =": after a revision, the value that follows is the new answer
_COMMIT = (
    r"(?:answer|value|result|solution|it|this)(?:'s|[ \t]++(?:is|equals|should[ \t]++be|must[ \t]++be|becomes)|"
    r"[ \t]*+[:=])(?:[ \t]++(?:actually|really|simply|just|exactly|indeed))?+"
)
# commands that are prose, spacing or a box, never part of a bare value
_NOT_MATH = (
    r"\\(?:text\w*+|math(?:rm|bf|it)|mbox|boxed|fbox|q?quad|implies|[Rr]ightarrow|therefore|because)(?![A-Za-z])"
)
# a bare value: a number, a command or a one-letter name before a relation, then math up to the next prose word
_VALUE = (
    rf"[-+]?+(?:\d|(?!{_NOT_MATH})\\[A-Za-z]++|(?<![A-Za-z\\])[A-Za-z](?=[ \t]*+[=<>^_]))"
    rf"(?:\d|\.(?=\d)|,[ \t]*+(?=[-+]?+[\d\\])|[-+*/^_=<>|!'()\[\]{{}}]|\\[{{}}]|(?!{_NOT_MATH})\\[A-Za-z]++|"
    r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])|[ \t]++(?=[-+*/^_=<>(\[\d\\]|[A-Za-z](?![A-Za-z])))*+"
)
_CLAUSE_END = re.compile(r"\n|[.?!](?=\s|$)")  # a clause is a sentence or a line
_SCAN = re.compile(
    rf"(?<![\\A-Za-z])(?:(?P<commit>{_COMMIT})|(?P<alt>{_ALTERNATIVE})|(?P<rev>{_REVISION})|(?P<neg>{_NEGATION}))"
    rf"(?![A-Za-z])|(?P<value>{_VALUE})",
    re.IGNORECASE,
)
_REVISED = re.compile(rf"(?<![A-Za-z])(?:{_REVISION})(?![A-Za-z])", re.IGNORECASE)
_NAME = re.compile(r"(?:[A-Za-z]|\\[A-Za-z]++)(?:_\{?+\w++\}?+)?+")
_OR_WORD = re.compile(r"(?<![A-Za-z])(?:or|alternatively|otherwise|maybe|possibly|perhaps)(?![A-Za-z])", re.IGNORECASE)
# what lies between two candidates listed side by side: separators and alternative words only
_LIST_GAP = re.compile(
    r"[\s,;/$()]*+(?:(?:\\q?quad|\\text\{\s*+(?:or|and)\s*+\}|or|and|alternatively|otherwise|maybe|possibly|perhaps)"
    r"[\s,;/$()]*+)*+",
    re.IGNORECASE,
)


# one thing a clause says: a "box" or bare "value" (with its text), or a word of kind "alt", "rev", "neg" or
# "commit"; `stage` and `labelled` are a box's (the paper's stage 1-3; right after an answer label)
_Item = namedtuple("Item", "kind start end text stage labelled", defaults=("", 3, False))


@dataclass
class _Zone:
    """What one problem's text has committed to (`strong`: labelled or revised; `pending`: a revision announced)."""

    candidates: list[str] = field(default_factory=list)
    stage: int | None = None
    strong: bool = False
    labelled: bool = False
    pending: bool = False
    refused: bool = False

    def commit(self, item: _Item, strong: bool) -> None:
        self.candidates, self.stage, self.strong, self.pending = [item.text], item.stage, strong, False
        self.labelled = item.labelled

    def add(self, text: str) -> None:
        """One more candidate the problem commits to (a restatement or an alternative)."""
        if not self.refused and text not in self.candidates:
            self.candidates.append(text)
            self.refused |= len(self.candidates) > _MAX_CANDIDATES


def _bare_value(text: str) -> str | None:
    """A bare value without closing punctuation or unopened closers; None when it ends in an operator."""
    value = text.strip().rstrip(".,;: \t")
    excess, end = sum(map(value.count, ")]}")) - sum(map(value.count, "([{")), len(value)
    while excess > 0 and end and value[end - 1] in ")]} \t":  # one pass: the closers it never opened
        excess -= value[end - 1] in ")]}"
        end -= 1
    value = value[:end].rstrip()
    return value if value and value[-1] not in "=+-*/^_<>,([{|" else None


def _read_clause(zone: _Zone, items: list[_Item], text: str) -> None:
    """Apply one clause to its problem's zone; a revision word parts it (what follows revises what came before)."""
    start = 0
    for k, item in enumerate(items):
        if item.kind == "rev":
            _read_part(zone, items[start:k], text)
            zone.pending, start = True, k + 1
    _read_part(zone, items[start:], text)


def _read_part(zone: _Zone, items: list[_Item], text: str) -> None:
    """One stretch of a clause with no revision word in it: its boxes and values against the zone's answer."""
    kinds = {it.kind for it in items}
    alt = "alt" in kinds and "neg" not in kinds  # "(4 is not possible)" offers nothing
    prev: _Item | None = None  # the last box or value, for the list rule
    negated = committed_here = False
    named_at = -1  # where a committing phrase ("the answer is") ends, after a revision of an answer
    for it in items:
        if it.kind in ("alt", "neg", "commit"):
            negated |= it.kind == "neg"
            named_at = it.end if it.kind == "commit" and zone.pending and zone.candidates else named_at
            continue
        listed = prev is not None and _listed(text, prev, it)
        if negated:  # "not 4", "rather than \\boxed{4}": a value the text rejects
            negated = False
            continue
        if it.kind == "box" or (named_at >= 0 and not text[named_at : it.start].strip(" \t$:(\\")):
            beside = listed or (alt and (zone.strong or committed_here))
            committed_here |= _take_box(zone, it, beside, prev if listed else None)
        elif zone.candidates and not zone.pending and (listed or (alt and not _computation(it.text))):
            zone.add(it.text)
        prev, named_at = it, -1


def _computation(value: str) -> bool:
    """An equation whose left side is no name (`5 \\cdot 2 = 10`): a check's arithmetic, not an answer offered."""
    left, eq, _ = value.partition("=")
    return bool(eq) and _NAME.fullmatch(left.strip()) is None


def _listed(text: str, a: _Item, b: _Item) -> bool:
    """Two candidates side by side: separators between two boxes, or an "or" word beside a bare value."""
    if _LIST_GAP.fullmatch(text, a.end, b.start) is None:
        return False
    return a.kind == b.kind == "box" or _OR_WORD.search(text, a.end, b.start) is not None


def _take_box(zone: _Zone, box: _Item, beside: bool, listed_before: _Item | None) -> bool:
    """A committed value (a box, or a value named after a revision); True when it became the answer."""
    if zone.pending and zone.candidates == [box.text]:
        zone.pending = False  # a revision that restates the answer keeps it (and its label's format)
        return True
    if zone.pending or not zone.candidates:
        zone.commit(box, box.labelled or zone.pending)
        if listed_before is not None:
            zone.add(listed_before.text)  # "either 4 or \\boxed{3}"
        return True
    if beside or (box.labelled and zone.labelled):
        zone.add(box.text)  # offered beside the answer, or a second labelled answer with nothing revising the first
    elif box.labelled or not zone.strong:
        zone.commit(box, box.labelled)  # a label outranks unlabelled boxes and values; of boxes, the last is final
        return True
    return False


@dataclass(frozen=True)
class ProblemAnswer:
    """Problem `index`'s candidates (paid only when every one is right) and its answer (None when they differ)."""

    index: int
    answer: str | None
    candidates: tuple[str, ...]
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
    """A header's or label's problem number; 0 for one too long to be any."""
    return int(digits) if len(digits) <= 6 else 0


def _answer_text(completion: str, thinking: bool) -> tuple[int, bool | None]:
    """Where answers may be read, and whether a think block closed (None: none involved)."""
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


# a header ("head"), an answer label ("label"), a "back to Problem i" ("back") or the blank line ending it ("para");
# `revised`: a label whose note revises ("Answer 2 (revised):")
_Mark = namedtuple("_Mark", "start end kind num revised", defaults=(False,))


def _marks(text: str) -> list[_Mark]:
    """Headers, labels and "back to"s in order; a "back to"'s text ends at the next blank line ("para")."""
    marks = [_Mark(m.start(), m.end(), "head", _index(m[1])) for m in SECTION_HEADER.finditer(text)]
    for m in ANSWER_LABEL.finditer(text):
        if not (m.start() and text[m.start() - 1].isascii() and text[m.start() - 1].isalpha()):  # not "...answer"
            marks.append(_Mark(m.start(), m.end(), "label", _index(m[1]), bool(m[2] and _REVISED.search(m[2]))))
    low = text.lower()  # "to Problem i" is looked for only where a problem is named beyond the headers
    mentions = low.count("problem") + low.count("question") > sum(m.kind == "head" for m in marks)
    backs = [
        _Mark(m.start(), m.end(), "back", _index(m[1]))
        for m in (_TO_PROBLEM.finditer(text) if mentions else ())
        if _BACK.search(text, max(0, m.start() - 12), m.start())
    ]
    breaks = [(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)] if backs else []
    ends = {bisect_left(breaks, (b.end, 0)) for b in backs} - {len(breaks)}
    return sorted(marks + backs + [_Mark(*breaks[k], "para", 0) for k in ends], key=lambda m: m.start)


class _Reader:
    """One pass over the answer text: whose text each stretch is, and each problem's zone, clause by clause."""

    def __init__(self, text: str, n: int, boxes: BoxIndex) -> None:
        self.text, self.n, self.boxes = text, n, boxes
        self.zones: dict[int, _Zone] = {}
        self.section: int | None = None  # the problem whose "### Problem i" section this is
        self.base: int | None = 1 if n == 1 else None  # whose text this is when no label or "back to" says
        self.owner, self.back_scope = self.base, False
        self.clause: list[_Item] = []
        self.labelled: dict[int, tuple[int, int]] = {}  # box start -> (problem number as written, stage)
        self.box_owner: dict[int, int | None] = {}

    def _problem(self, num: int) -> int | None:
        return num if 1 <= num <= self.n else None

    def flush(self) -> None:
        """The clause ends: its items go to the policy of the problem whose text it is."""
        if not self.clause:
            return
        if self.owner is not None:
            _read_clause(self.zones.setdefault(self.owner, _Zone()), self.clause, self.text)
        self.clause = []

    def mark(self, mark: _Mark) -> None:
        self.flush()
        num = self._problem(mark.num)
        if mark.kind == "para":
            self.owner = self.base if self.back_scope else self.owner
            self.back_scope = False
            return
        if mark.kind == "head":
            self.section = self.base = self.owner = num
            self.back_scope = False
            return
        self.owner, self.back_scope = num, mark.kind == "back"
        if num is not None and (mark.kind == "back" or mark.revised):
            self.zones.setdefault(num, _Zone()).pending = True  # coming back to a problem revises its answer
        box = self._label_box(mark)
        if box is not None:
            self.labelled[box.start] = (mark.num, 1 if self.section == num else 2)

    def _label_box(self, mark: _Mark) -> Box | None:
        """The box a label names: the first box after it, with only markup, display math or `name =` between."""
        return self.boxes.by_start.get(_LEAD.match(self.text, mark.end).end()) if mark.kind == "label" else None

    def box(self, box: Box) -> None:
        num, stage = self.labelled.get(box.start, (self.owner, 3))
        self.box_owner[box.start] = num
        if self.owner is not None and not is_placeholder(box.content):
            self.add(_Item("box", box.start, box.end, box.content, stage, box.start in self.labelled))

    def token(self, m: re.Match[str]) -> None:
        if m.lastgroup != "value":
            self.add(_Item(str(m.lastgroup), m.start(), m.end()))
        elif (value := _bare_value(m.group())) is not None:
            self.add(_Item("value", m.start(), m.end(), value))

    def add(self, item: _Item) -> None:
        """One more item of the clause under way; a line break or a sentence's end before it starts a new clause."""
        if self.clause and _CLAUSE_END.search(self.text, self.clause[-1].end, item.start):
            self.flush()
        self.clause.append(item)

    def read(self, marks: list[_Mark]) -> None:
        """Boxes and marks in order, and between them the text that can change an answer."""
        events: list[Box | _Mark] = sorted([*self.boxes.top_level, *marks], key=lambda e: e.start)
        pos = 0
        for event in [*events, None]:
            start = len(self.text) if event is None else event.start
            if start < pos:
                continue  # inside a box already read
            lo = self._scan_from(pos, start, event)
            while lo < start and (m := _SCAN.search(self.text, lo, start)):
                self.token(m)
                lo = m.end()
            if event is None:
                break
            self.box(event) if isinstance(event, Box) else self.mark(event)
            pos = event.end
        self.flush()

    def _scan_from(self, pos: int, start: int, event: Box | _Mark | None) -> int:
        """Where the text before the next event matters: a problem's text once answered, or an "or" near its box."""
        zone = self.zones.get(self.owner) if self.owner is not None else None
        if isinstance(event, _Mark) and self._outranks(event, zone):
            return start
        if self.clause or (zone is not None and zone.candidates):  # a clause under way, or an answer to revise
            return pos
        near = max(pos, start - _BEFORE_BOX)
        if self.owner is None or not isinstance(event, Box) or not _OR_WORD.search(self.text, near, start):
            return start
        return near if near == pos else self.text.find(" ", near, start) + 1 or start  # from a word's start

    def _outranks(self, mark: _Mark, zone: _Zone | None) -> bool:
        """The mark is this problem's label with a box, and no labelled box is its answer yet (policy rule 3)."""
        if self.owner is None or self._problem(mark.num) != self.owner or (zone is not None and zone.labelled):
            return False
        box = self._label_box(mark)
        return box is not None and not is_placeholder(box.content) and not any(it.labelled for it in self.clause)

    def answer(self, i: int) -> tuple[tuple[str, ...], int | None]:
        """Problem i's candidates and stage; position order only for a problem no text answers."""
        zone = self.zones.get(i, _Zone())
        if zone.refused or zone.candidates:
            return (() if zone.refused else tuple(zone.candidates)), zone.stage
        top = self.boxes.top_level
        box = top[i - 1] if i <= len(top) else None
        if box is None or self.box_owner.get(box.start) not in (None, i) or is_placeholder(box.content):
            return (), None
        return (box.content,), 3


def extract_group(completion: str, n: int, *, thinking: bool = False) -> GroupExtraction:
    """The candidates each of the N problems of a completion commits to, with stages and section spans."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    offset, closed = _answer_text(completion, thinking)
    text = completion[offset:]
    marks = _marks(text)
    heads = [(m.start, m.num) for m in marks if m.kind == "head"]
    boxes = BoxIndex(text, barriers=[m.start for m in marks if m.kind in ("head", "label")])
    reader = _Reader(text, n, boxes)
    reader.read(marks)
    sections = _sections(heads, len(text), n)
    problems = []
    for i in range(1, n + 1):
        candidates, stage = reader.answer(i)
        span = sections.get(i)
        answer = candidates[0] if candidates and all(same_answer(candidates[0], c) for c in candidates[1:]) else None
        problems.append(
            ProblemAnswer(i, answer, candidates, stage, (span[0] + offset, span[1] + offset) if span else None)
        )
    return GroupExtraction(tuple(problems), offset, closed)
