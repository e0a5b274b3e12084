"""Issue 53, class 5: an honest answer's verdict never depends on how busy the machine is. A check that has had less
CPU than its limit when its hard deadline comes (starved by other processes, not slow) waits for the time it would
have had alone. Starvation is made certain here, not timed: the worker is stopped (SIGSTOP) past the hard deadline,
so it uses no CPU at all, and resumed later; the verdict, not a duration, is asserted."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from recipe_bcr.grading.symbolic.pool import HARD_CAP
from recipe_bcr.grading.verify import Verifier

LIMIT_S = 1.0
RESUME_AFTER_S = HARD_CAP * LIMIT_S + 0.5  # past the hard deadline


def test_a_starved_check_may_wait_past_the_resumption():
    from recipe_bcr.grading.symbolic.pool import STARVED_CAP

    assert STARVED_CAP * LIMIT_S >= RESUME_AFTER_S + 1.5  # the resumed check has seconds to finish


@pytest.fixture
def verifier():
    v = Verifier(timeout_s=LIMIT_S, workers=1, max_workers=1)
    assert v.start(wait_s=120) == 1
    yield v
    v.close()


def _stop_workers_for(verifier: Verifier, seconds: float) -> threading.Timer:
    """Stop every idle worker now and resume it after `seconds`: checks sent meanwhile get no CPU at all."""
    pids = [w.pid for w in list(verifier.pool._idle.queue)]
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    timer = threading.Timer(seconds, lambda: [os.kill(pid, signal.SIGCONT) for pid in pids])
    timer.start()
    return timer


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("1+\\sqrt{3}i", "2e^{i\\pi/3}"),  # the exponential form of a complex number: only the symbolic check says
        ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}"),
        ("(x+3)^2", "x^2+6x+9+\\sin^2 x+\\cos^2 x-1"),
    ],
)
def test_a_starved_check_keeps_its_credit(verifier, gold, pred):
    assert verifier.fast(pred, gold) is None  # it needs the symbolic check
    timer = _stop_workers_for(verifier, RESUME_AFTER_S)
    try:
        verdict = verifier.check(pred, gold)
    finally:
        timer.join()
    assert verdict.correct, verdict


def test_a_starved_wrong_answer_still_scores_nothing(verifier):
    timer = _stop_workers_for(verifier, RESUME_AFTER_S)
    try:
        verdict = verifier.check("2e^{i\\pi/4}", "1+\\sqrt{3}i")
    finally:
        timer.join()
    assert not verdict.correct


def test_a_starved_check_spends_no_budget_on_waiting(verifier):
    """The budget a check spends is its CPU time: a stopped worker's wait is no spending, so a gold list's later
    alternatives still get their time."""
    timer = _stop_workers_for(verifier, RESUME_AFTER_S)
    try:
        status, spent = verifier.pool.check_timed("1+\\sqrt{3}i", "2e^{i\\pi/3}", LIMIT_S)
    finally:
        timer.join()
    assert status == "true"
    assert spent < LIMIT_S
