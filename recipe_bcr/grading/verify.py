"""Answer verification: the trees first (recipe_bcr.grading.answers.gate), the symbolic pool for the rest."""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from recipe_bcr.grading.answers.gate import Question, tree_verdict
from recipe_bcr.grading.answers.normalize import MAX_ANSWER_CHARS
from recipe_bcr.grading.symbolic.pool import HARD_CAP, SymbolicPool

logger = logging.getLogger(__name__)

Gold = str | Sequence[str]


@dataclass(frozen=True)
class Verdict:
    correct: bool
    # string | numeric | structure | symbolic | hedge | invalid | no_answer | too_long | timeout | unparsed (not read)
    method: str


_INVISIBLE = {"Cf", "Mn", "Me", "Cc", "Co", "Cs"}  # zero-width, combining, control, private, surrogate


def has_invisible(s: str) -> bool:
    """Zero-width, combining, control or private-use characters: nothing an honest answer needs."""
    return any(unicodedata.category(c) in _INVISIBLE and c not in "\t\n\r" for c in s)


class Verifier:
    r"""Is an extracted answer the gold answer? Thread-safe; the tree rules decide most pairs in process, and only
    what they cannot goes to a symbolic worker, under a hard time limit. Call `close()` when done.

    Args:
        timeout_s: symbolic CPU time per check (a call ends by 1.75x this, a starved one when it had it: pool.py).
        workers: symbolic worker processes kept ready (the pool grows with demand up to `max_workers`, default 32).
        rel_tol: how close a decimal must be to an exact value it rounds (`0.3333333` for `1/3`).
        max_answer_chars: a longer answer is no answer (`too_long`).
        cache_size: symbolic verdicts remembered (GRPO rollouts often repeat an answer).

    Returns:
        `check(pred, gold)` returns a `Verdict`: `correct` and the `method` that decided it. `gold` may be one
        answer or a list of acceptable ones.

    Example:
        >>> verifier = Verifier(workers=1)
        >>> verifier.check("\\frac{1}{2}", "0.5")
        Verdict(correct=True, method='numeric')
        >>> verifier.check("\\tan^{-1} 1", "\\frac{\\pi}{4}").correct
        True
        >>> verifier.check("0.6", "\\frac{2}{3}").correct, verifier.check("x = 3", ["3", "-3"]).correct
        (False, True)
        >>> verifier.close()
    """

    def __init__(
        self,
        timeout_s: float = 2.0,
        workers: int = 2,
        rel_tol: float = 1e-6,
        max_answer_chars: int = MAX_ANSWER_CHARS,
        cache_size: int = 100_000,
        max_workers: int | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.rel_tol = rel_tol
        self.max_answer_chars = max_answer_chars
        self._pool = SymbolicPool(size=workers, rel_tol=rel_tol, max_size=max_workers)
        self._fanout = ThreadPoolExecutor(max_workers=4 * self._pool.max_size, thread_name_prefix="bcr-verify")
        self._warned: set[str] = set()
        self._warn_lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    def _warn_unparsed_gold(self, gold: str) -> None:
        with self._warn_lock:
            if gold in self._warned:
                return
            self._warned.add(gold)
        logger.warning("ground truth %r cannot be read as an answer; nothing matches it (fix the gold)", gold)

    def _read(self, pred: str | None, gold: str) -> Verdict | list[Question]:
        """The trees' verdict or the symbolic questions; refused before reading: missing, too long, invisible."""
        if not isinstance(pred, str) or not pred.strip():
            return Verdict(False, "no_answer")
        if len(pred) > self.max_answer_chars:
            return Verdict(False, "too_long")
        if has_invisible(pred):
            return Verdict(False, "invalid")
        decided = tree_verdict(pred, gold, self.rel_tol)
        if isinstance(decided, list):
            return decided
        if decided[1] == "gold_unparsed":
            self._warn_unparsed_gold(gold)
            return Verdict(False, "unparsed")
        return Verdict(*decided)

    def fast(self, pred: str | None, gold: str) -> Verdict | None:
        """The in-process verdict, or None when only the symbolic check can decide."""
        read = self._read(pred, gold)
        return None if isinstance(read, list) else read

    def _ask(self, question: Question, gold: str, budget: float, hard: float) -> tuple[Verdict, float]:
        """One question to the symbolic check (or its cache); also returns the symbolic seconds spent."""
        hints: dict[str, Any] = {"gold_number": question.gold_number, "pred_number": question.pred_number}
        hints = {key: value for key, value in hints.items() if value is not None}
        hints["pred_rounding"] = question.rounding and bool(question.pred_number and question.pred_number[2])
        key = (question.gold, question.pred + ("\0~" if hints["pred_rounding"] else ""))
        with self._cache_lock:
            status = self._cache.get(key)
            if status is not None:
                self._cache.move_to_end(key)
        used = 0.0
        if status is None and budget <= 0:
            status = "timeout"
        elif status is None:
            limit = min(budget, self.timeout_s)
            status, used = self._pool.check_timed(question.gold, question.pred, limit, hints, hard_deadline=hard)
            if status in ("true", "false", "gold_unparsed", "pred_unparsed") and len(question.pred) <= 256:
                with self._cache_lock:  # long answers are rarely repeated and would fill the memory
                    self._cache[key] = status
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        if status == "gold_unparsed":
            self._warn_unparsed_gold(gold)
        if status in ("gold_unparsed", "pred_unparsed", "error", "timeout"):
            return Verdict(False, "timeout" if status == "timeout" else "unparsed"), used
        return Verdict(status == "true", "symbolic"), used

    def _limits(self, deadline: float | None) -> tuple[float, float]:
        """The symbolic work allowed, and the hard cut-off: HARD_CAP times the limit after the call started."""
        started = time.monotonic() if deadline is None else deadline - self.timeout_s
        return self.timeout_s, started + HARD_CAP * self.timeout_s

    def check_many(self, pairs: Sequence[tuple[str | None, Gold]], deadline: float | None = None) -> list[Verdict]:
        """Check several (pred, gold) pairs, the slow ones in parallel; `deadline` anchors the hard cut-off."""
        budget, hard = self._limits(deadline)
        reads = [[(g, self._read(p, g)) for g in _golds(g)] for p, g in pairs]
        verdicts: list[Verdict | None] = [_settled(r) for r in reads]
        slow = [i for i, v in enumerate(verdicts) if v is None]
        if len(slow) == 1:
            verdicts[slow[0]] = self._check(reads[slow[0]], budget, hard)
        elif slow:
            futures = {i: self._fanout.submit(self._check, reads[i], budget, hard) for i in slow}
            for i, f in futures.items():
                verdicts[i] = f.result()
        return [v for v in verdicts if v is not None]

    def _check(self, reads: list[tuple[str, Verdict | list[Question]]], budget: float, hard: float) -> Verdict:
        """The first gold matched; the golds share one budget, and every stated value must be the answer."""
        last = Verdict(False, "no_answer")  # no gold: unreachable, _golds refuses an empty list
        for gold, read in reads:
            last = Verdict(False, "no_answer") if isinstance(read, list) else read
            for question in read if isinstance(read, list) else ():
                last, used = self._ask(question, gold, budget, hard)
                budget -= used
                if not last.correct:
                    break
            if last.correct:
                return last
        return last

    def check(self, pred: str | None, gold: Gold, deadline: float | None = None) -> Verdict:
        """Compare with a gold answer or with any of a list of acceptable gold answers."""
        return self._check([(g, self._read(pred, g)) for g in _golds(gold)], *self._limits(deadline))

    def start(self, wait_s: float = 0.0) -> int:
        """Start the symbolic workers now (see SymbolicPool.start); returns how many are ready."""
        return self._pool.start(wait_s)

    @property
    def pool(self) -> SymbolicPool:
        return self._pool

    def close(self) -> None:
        self._fanout.shutdown(wait=False)
        self._pool.close()


def _golds(gold: Gold) -> list[str]:
    golds = [gold] if isinstance(gold, str) else [str(g) for g in gold]
    if not golds:
        raise ValueError("empty list of acceptable gold answers")
    return golds


def _settled(reads: list[tuple[str, Verdict | list[Question]]]) -> Verdict | None:
    """A fast match with any gold, or a fast rejection by every gold; None otherwise."""
    verdicts = [read for _, read in reads if not isinstance(read, list)]
    hit = next((v for v in verdicts if v.correct), None)
    return hit or (verdicts[-1] if len(verdicts) == len(reads) else None)


_default: Verifier | None = None
_default_lock = threading.Lock()


def default_verifier() -> Verifier:
    """The process-wide verifier (one worker pool per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Verifier()
        return _default


def configure_default(timeout_s: float, workers: int) -> Verifier:
    """Replace the process-wide verifier when the configured limits differ."""
    global _default
    with _default_lock:
        if _default is None or _default.timeout_s != timeout_s or _default.pool.size != workers:
            if _default is not None:
                _default.close()
            _default = Verifier(timeout_s=timeout_s, workers=workers)
        return _default
