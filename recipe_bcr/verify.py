"""Answer verification: string, then exact numbers, then symbolic equivalence.

The two fast paths run in-process and settle most answers (MATH-style integers and
fractions); everything else goes to math-verify (latex2sympy2_extended + SymPy) in a
kill-able worker process with a hard time limit (recipe_bcr.symbolic). Rules that hold at
every stage: no credit for overlap ("1331 and 1728" vs "1728", "\\pm 2021" vs "2021"),
decimals match to 1e-6 relative (0.333 is not 1/3), exact values match exactly (1/2004!
is not 1/2006!), sequences with an ellipsis match only as normalised strings.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from recipe_bcr.normalize import ELLIPSIS, as_number, canonical, for_parser, is_compound, numbers_match
from recipe_bcr.symbolic import SymbolicPool

logger = logging.getLogger(__name__)

Gold = str | Sequence[str]


@dataclass(frozen=True)
class Verdict:
    correct: bool
    method: str  # string | numeric | structure | symbolic | no_answer | too_long | timeout | unparsed


class Verifier:
    """Equivalence checks with a hard per-check time limit; thread-safe."""

    def __init__(
        self,
        timeout_s: float = 2.0,
        workers: int = 2,
        rel_tol: float = 1e-6,
        max_answer_chars: int = 2000,
        cache_size: int = 100_000,
    ) -> None:
        self.timeout_s = timeout_s
        self.rel_tol = rel_tol
        self.max_answer_chars = max_answer_chars
        self._pool = SymbolicPool(size=workers, rel_tol=rel_tol)
        self._fanout = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bcr-verify")
        self._warned: set[str] = set()
        self._warn_lock = threading.Lock()
        # GRPO samples several rollouts per prompt and they often agree: symbolic verdicts repeat.
        self._cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    def _warn_unparsed_gold(self, gold: str) -> None:
        with self._warn_lock:
            if gold in self._warned:
                return
            self._warned.add(gold)
        logger.warning("ground truth %r cannot be parsed as math; it is compared as a normalised string", gold)

    def fast(self, pred: str | None, gold: str) -> Verdict | None:
        """The in-process verdict, or None when only the symbolic check can decide."""
        if not isinstance(pred, str) or not pred.strip():
            return Verdict(False, "no_answer")
        if len(pred) > self.max_answer_chars:
            return Verdict(False, "too_long")
        c_gold = canonical(gold)
        if c_gold and canonical(pred) == c_gold:
            return Verdict(True, "string")
        if ELLIPSIS.search(pred) or ELLIPSIS.search(gold):
            return Verdict(False, "string")
        num_p, num_g = as_number(pred), as_number(gold)
        if num_p is not None and num_g is not None:
            return Verdict(numbers_match(num_g, num_p, self.rel_tol), "numeric")
        if (num_g is not None and is_compound(pred)) or (num_p is not None and is_compound(gold)):
            return Verdict(False, "structure")  # one number never equals a list, tuple or interval
        return None

    def check_one(self, pred: str | None, gold: str, deadline: float | None = None) -> Verdict:
        """Compare one prediction with one gold answer."""
        gold = str(gold)
        verdict = self.fast(pred, gold)
        if verdict is not None:
            return verdict
        assert isinstance(pred, str)
        hints = {}
        for key, text in (("gold_number", gold), ("pred_number", pred)):
            num = as_number(text)
            if num is not None and not num.percent:
                hints[key] = [num.value.numerator, num.value.denominator, num.approximate]
        status = self._symbolic(for_parser(gold), for_parser(pred), deadline, hints)
        if status == "gold_unparsed":
            self._warn_unparsed_gold(gold)
            return Verdict(False, "unparsed")
        if status in ("pred_unparsed", "error"):
            return Verdict(False, "unparsed")
        if status == "timeout":
            return Verdict(False, "timeout")
        return Verdict(status == "true", "symbolic")

    def _symbolic(self, gold: str, pred: str, deadline: float | None, hints: dict[str, Any]) -> str:
        key = (gold, pred)
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        remaining = min(self.timeout_s, deadline - time.monotonic())
        if remaining <= 0:
            return "timeout"
        status = self._pool.check(gold, pred, remaining, hints)
        if status in ("true", "false", "gold_unparsed", "pred_unparsed"):
            with self._cache_lock:
                self._cache[key] = status
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return status

    def check_many(self, pairs: Sequence[tuple[str | None, Gold]], deadline: float | None = None) -> list[Verdict]:
        """Check several (pred, gold) pairs under one deadline, the slow ones in parallel."""
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        verdicts: list[Verdict | None] = [self._settled(p, g) for p, g in pairs]
        slow = [i for i, v in enumerate(verdicts) if v is None]
        if len(slow) == 1:
            verdicts[slow[0]] = self.check(*pairs[slow[0]], deadline)
        elif slow:
            futures = {i: self._fanout.submit(self.check, *pairs[i], deadline) for i in slow}
            for i, f in futures.items():
                verdicts[i] = f.result()
        return [v for v in verdicts if v is not None]

    def _settled(self, pred: str | None, gold: Gold) -> Verdict | None:
        """A verdict reached without the symbolic check: a fast match with any gold, or a fast
        rejection by every gold; None otherwise."""
        golds = [gold] if isinstance(gold, str) else [str(g) for g in gold]
        verdicts = [self.fast(pred, g) for g in golds]
        hit = next((v for v in verdicts if v is not None and v.correct), None)
        if hit is not None:
            return hit
        return verdicts[-1] if verdicts and all(v is not None for v in verdicts) else None

    def check(self, pred: str | None, gold: Gold, deadline: float | None = None) -> Verdict:
        """Compare with a gold answer or with any of a list of acceptable gold answers."""
        golds = [gold] if isinstance(gold, str) else [str(g) for g in gold]
        if not golds:
            raise ValueError("empty list of acceptable gold answers")
        if deadline is None:
            deadline = time.monotonic() + self.timeout_s
        last = Verdict(False, "no_answer")
        for g in golds:
            last = self.check_one(pred, g, deadline)
            if last.correct:
                return last
        return last

    def start(self, wait_s: float = 0.0) -> int:
        """Start the symbolic workers now (see SymbolicPool.start); returns how many are ready."""
        return self._pool.start(wait_s)

    @property
    def pool_size(self) -> int:
        return self._pool.size

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()

    def close(self) -> None:
        self._fanout.shutdown(wait=False)
        self._pool.close()


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
        if _default is None or _default.timeout_s != timeout_s or _default.pool_size != workers:
            if _default is not None:
                _default.close()
            _default = Verifier(timeout_s=timeout_s, workers=workers)
        return _default


def is_equivalent(pred: str, gold: Gold) -> bool:
    """True when `pred` is mathematically the same answer as `gold` (or one of a gold list)."""
    return default_verifier().check(pred, gold).correct
