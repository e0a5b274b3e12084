"""The answer policy (docs/grading.md, "Answer policy"): what one problem's text commits to.

Extraction hands each problem's text here clause by clause (a sentence or a line) as items: its boxes, bare values
and the words that say how a value stands to the answer (alternative, revision, negation, "the answer is"). Nothing
here compares values: the answer is the list of candidates the text commits to, and the grader pays it only when
every one equals the gold, so a restatement pays and two different values never do, whichever is right.
"""

from __future__ import annotations

import re
from collections import namedtuple
from dataclasses import dataclass, field

MAX_CANDIDATES = 8  # more different candidates for one problem is a list of guesses: no answer
_ALTERNATIVE = r"or|either|alternatively|alternative|otherwise|possibl[ey]|perhaps|maybe|also|unless"
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
CLAUSE_END = re.compile(r"\n|[.?!](?=\s|$)")  # a clause is a sentence or a line
SCAN = re.compile(
    rf"(?<![\\A-Za-z])(?:(?P<commit>{_COMMIT})|(?P<alt>{_ALTERNATIVE})|(?P<rev>{_REVISION})|(?P<neg>{_NEGATION}))"
    rf"(?![A-Za-z])|(?P<value>{_VALUE})",
    re.IGNORECASE,
)
REVISED = re.compile(rf"(?<![A-Za-z])(?:{_REVISION})(?![A-Za-z])", re.IGNORECASE)
_NAME = re.compile(r"(?:[A-Za-z]|\\[A-Za-z]++)(?:_\{?+\w++\}?+)?+")
OR_WORD = re.compile(r"(?<![A-Za-z])(?:or|alternatively|otherwise|maybe|possibly|perhaps)(?![A-Za-z])", re.IGNORECASE)
# what lies between two candidates listed side by side: separators and alternative words only
LIST_GAP = re.compile(
    r"[\s,;/$()]*+(?:(?:\\q?quad|\\text\{\s*+(?:or|and)\s*+\}|or|and|alternatively|otherwise|maybe|possibly|perhaps)"
    r"[\s,;/$()]*+)*+",
    re.IGNORECASE,
)


# one thing a clause says: a "box" or bare "value" (with its text), or a word of kind "alt", "rev", "neg" or
# "commit"; `stage` and `labelled` are a box's (the paper's stage 1-3; right after an answer label)
Item = namedtuple("Item", "kind start end text stage labelled", defaults=("", 3, False))


@dataclass
class Zone:
    """What one problem's text has committed to so far. `strong`: the answer was labelled or is a revision (an
    unlabelled box after it is a derivation's); `labelled`: it is a labelled box; `pending`: a revision was
    announced, so the next commitment replaces the answer."""

    candidates: list[str] = field(default_factory=list)
    stage: int | None = None
    strong: bool = False
    labelled: bool = False
    pending: bool = False
    refused: bool = False

    def commit(self, item: Item, strong: bool) -> None:
        self.candidates, self.stage, self.strong, self.pending = [item.text], item.stage, strong, False
        self.labelled = item.labelled

    def add(self, text: str) -> None:
        """One more candidate the problem commits to (a restatement or an alternative)."""
        if not self.refused and text not in self.candidates:
            self.candidates.append(text)
            self.refused |= len(self.candidates) > MAX_CANDIDATES


def bare_value(text: str) -> str | None:
    """A bare value as written, without closing punctuation or closers it never opened; None when it ends in an
    operator (`x =` before a box is no value)."""
    value = text.strip().rstrip(".,;: \t")
    excess, end = sum(map(value.count, ")]}")) - sum(map(value.count, "([{")), len(value)
    while excess > 0 and end and value[end - 1] in ")]} \t":  # one pass: the closers it never opened
        excess -= value[end - 1] in ")]}"
        end -= 1
    value = value[:end].rstrip()
    return value if value and value[-1] not in "=+-*/^_<>,([{|" else None


def read_clause(zone: Zone, items: list[Item], text: str) -> None:
    """Apply one clause to its problem's zone; a revision word parts it (what follows revises what came before)."""
    start = 0
    for k, item in enumerate(items):
        if item.kind == "rev":
            _read_part(zone, items[start:k], text)
            zone.pending, start = True, k + 1
    _read_part(zone, items[start:], text)


def _read_part(zone: Zone, items: list[Item], text: str) -> None:
    kinds = {it.kind for it in items}
    alt = "alt" in kinds and "neg" not in kinds  # "(4 is not possible)" offers nothing
    prev: Item | None = None  # the last box or value, for the list rule
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


def _listed(text: str, a: Item, b: Item) -> bool:
    """Two candidates side by side: only separators between two boxes, and an "or" word beside a bare value
    (`\\boxed{3} (or $5$)`; a bare value after a comma is a derivation's step: "since x > 2, \\boxed{3}")."""
    if LIST_GAP.fullmatch(text, a.end, b.start) is None:
        return False
    return a.kind == b.kind == "box" or OR_WORD.search(text, a.end, b.start) is not None


def _take_box(zone: Zone, box: Item, beside: bool, listed_before: Item | None) -> bool:
    """A committed value (a box, or a value named after a revision); True when it became the answer."""
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
