"""verl calls the reward from worker threads: pathological inputs must finish in bounded time.

Times are held to the deadline the code sets plus a reference from the same run, never to fixed
seconds: a call's symbolic checks are killed HARD_CAP times the limit after the call started once they
have had their CPU time, and STARVED_CAP times the limit after it at the latest when the machine starved
them (issue 53: an honest answer's verdict does not depend on the load); what it takes to return after
that is a share of the process like any other call's, so a call that runs a check to its deadline may
take that deadline plus the longest of the other calls of the same batch (which a loaded machine slows
alike). tests/test_under_load.py runs these beside CPU-bound processes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

import pytest

from recipe_bcr.grading import verify
from recipe_bcr.grading.symbolic.pool import STARVED_CAP
from recipe_bcr.grading.verify import Verifier
from reward_fns.bcr import compute_score

Job = TypeVar("Job")
Result = TypeVar("Result")

# an answer the in-process reading cannot refute (an irrational base): its symbolic check runs to the deadline
TO_THE_DEADLINE = "Answer1: \\boxed{\\sqrt{2}^{\\sqrt{2}^{\\sqrt{2}^{100}}}} Answer2: \\boxed{8}"
PATHOLOGICAL = [
    "\\boxed{" + "{" * 200_000 + "}" * 199_999,
    "Answer1: \\boxed{10^{10^{10^{10}}}} Answer2: \\boxed{10^{10^{10^{10}}}} Answer3: \\boxed{(10^{100})!}",
    "\\boxed{1}" * 10_000,
    "\\boxed{" * 10_000,
    "Answer1: \\boxed{\\frac{1}{0}} Answer2: \\boxed{x^{10^{100}}-1}",
    "\x00\udcff日本語🙂" * 2000,
    "",
    None,
    TO_THE_DEADLINE,
]


def _timed_calls(call: Callable[[Job], Result], jobs: Sequence[Job], verifier: Verifier) -> list[tuple[float, Result]]:
    """(seconds, result) of every job, 8 threads at a time. Calls still running after five hard
    deadlines per round of 8 jobs ignored theirs: the verifier is closed (which kills its workers and
    so ends the calls) and the test fails instead of hanging."""

    def timed(job: Job) -> tuple[float, Result]:
        t0 = time.monotonic()
        out = call(job)
        return time.monotonic() - t0, out

    fuse_s = 5 * -(-len(jobs) // 8) * STARVED_CAP * verifier.timeout_s
    with ThreadPoolExecutor(8) as threads:
        futures = [threads.submit(timed, job) for job in jobs]
        running = wait(futures, timeout=fuse_s).not_done
        if running:
            try:
                verifier.close()
            finally:  # closing races the calls for their workers and may raise: the verdict is this
                pytest.fail(
                    f"{len(running)} of {len(jobs)} calls still running after {fuse_s:.0f} s: a deadline did not hold"
                )
    return [f.result() for f in futures]


@pytest.mark.timing
def test_eight_threads_on_pathological_inputs(monkeypatch):
    """Each pathological completion twice, 8 at a time, through verl's entry point: all return, none
    earns credit, exactly the checks that cannot finish end as timeouts, and those calls end by the
    deadline plus the longest other call of the batch."""
    timeout_s = 2.0
    verifier = Verifier(timeout_s=timeout_s, workers=2)
    monkeypatch.setattr(verify, "_default", verifier)  # compute_score's process-wide verifier, here started first
    try:
        assert verifier.start(wait_s=120) == 2
        jobs = PATHOLOGICAL * 2
        results = _timed_calls(
            lambda text: compute_score("bcr", text, ["5", "7", "9"], {"n": 3}, timeout_s=timeout_s), jobs, verifier
        )
    finally:
        verifier.close()
    assert all(out["acc"] == 0 for _, out in results)
    assert [out["verify_timeouts"] for _, out in results] == [float(text == TO_THE_DEADLINE) for text in jobs]
    to_deadline = [latency for (latency, _), text in zip(results, jobs) if text == TO_THE_DEADLINE]
    others = max(latency for (latency, _), text in zip(results, jobs) if text != TO_THE_DEADLINE)
    assert max(to_deadline) <= STARVED_CAP * timeout_s + others, (to_deadline, others)


def test_pool_start_readies_every_worker():
    """start() pays the workers' start-up (imports, parser warm-up) before the first check."""
    from recipe_bcr.grading.symbolic.pool import SymbolicPool

    pool = SymbolicPool(size=2)
    try:
        assert pool.start(wait_s=120) == 2
        assert pool.start(wait_s=0) == 2  # nothing more to start
        assert pool.check("\\left(1, 2\\right)", "(1,2)", 5.0) == "true"
    finally:
        pool.close()


@pytest.mark.timing
def test_a_worker_that_cannot_start_is_reported_and_does_not_hang_checks(monkeypatch, caplog):
    """A broken environment (the worker exits at once) gives a warning and a prompt "timeout",
    not a check that waits out the start-up allowance."""
    import sys

    from recipe_bcr.grading.symbolic.pool import SymbolicPool

    allowance_s = 60.0
    monkeypatch.setattr(sys, "executable", "/bin/false")
    pool = SymbolicPool(size=2, startup_timeout_s=allowance_s)
    try:
        with caplog.at_level("WARNING", logger="recipe_bcr.grading.symbolic.pool"):
            t0 = time.monotonic()
            assert pool.check("x+1", "1+x", 2.0) == "timeout"
            assert time.monotonic() - t0 < allowance_s / 4  # failed fast: the allowance was not waited out
            assert pool.start(wait_s=5) == 0
        assert any("did not start (exit code 1)" in r.getMessage() for r in caplog.records)
    finally:
        pool.close()


def _honest_group(k: int) -> tuple[str, list[str]]:
    """Three right answers, each written differently from its gold so that only the symbolic check can
    tell (distinct per k, so no verdict comes from the cache)."""
    golds = [f"\\frac{{\\sqrt{{{k}}}}}{{2}}", f"(x+{k})^2", f"{k}\\sqrt{{2}}"]
    preds = [f"\\frac{{1}}{{2}}\\sqrt{{{k}}}", f"x^2+{2 * k}x+{k * k}", f"\\sqrt{{{2 * k * k}}}"]
    text = "".join(f"### Problem {i}\nAnswer{i}: \\boxed{{{p}}}\n" for i, p in enumerate(preds, start=1))
    return text, golds


@pytest.mark.timing
def test_honest_answers_keep_credit_beside_slow_ones_from_eight_threads():
    """A correct answer's credit does not depend on what else is in the batch: 40 honest completions
    (120 symbolic checks) and 4 completions with an answer that runs to the deadline, 8 at a time.
    The slow ones end by the deadline plus the longest honest call of the batch."""
    from recipe_bcr.grading.reward import score_completion

    timeout_s = 2.0
    verifier = Verifier(timeout_s=timeout_s, workers=2)
    try:
        assert verifier.start(wait_s=120) == 2
        jobs = [(TO_THE_DEADLINE, ["5", "8", "9"])] * 4 + [_honest_group(k) for k in range(3, 43)]
        jobs = jobs[::2] + jobs[1::2]  # slow ones early in both halves, while honest ones run
        results = _timed_calls(lambda job: score_completion(job[0], job[1], verifier), jobs, verifier)
    finally:
        verifier.close()
    honest = [(latency, s) for (text, _), (latency, s) in zip(jobs, results) if text != TO_THE_DEADLINE]
    assert len(honest) == 40
    lost = [(s.answers, s.methods) for _, s in honest if not all(s.correct)]
    assert lost == []
    assert all(s.breakdown["verify_timeouts"] == 0 for _, s in honest)
    slow_calls = [(latency, s) for (text, _), (latency, s) in zip(jobs, results) if text == TO_THE_DEADLINE]
    assert [(s.correct, s.methods[0]) for _, s in slow_calls] == [([False, True, False], "timeout")] * 4
    slowest = max(latency for latency, _ in slow_calls)
    honest_latency = max(latency for latency, _ in honest)
    assert slowest <= STARVED_CAP * timeout_s + honest_latency, (slowest, honest_latency)


def _exponential_group(k: int) -> tuple[str, list[str]]:
    """Three right answers that only the symbolic check accepts, the first an exponential form of a complex number
    (its check takes a few tenths of a second of CPU), distinct per k (no verdict from the cache)."""
    golds = [f"\\frac{{{k}}}{{2}}+\\frac{{{k}\\sqrt{{3}}}}{{2}}i", f"\\frac{{\\sqrt{{{k}}}}}{{2}}", f"(x+{k})^2"]
    preds = [f"{k}e^{{i\\pi/3}}", f"\\frac{{1}}{{2}}\\sqrt{{{k}}}", f"x^2+{2 * k}x+{k * k}"]
    text = "".join(f"### Problem {i}\nAnswer{i}: \\boxed{{{p}}}\n" for i, p in enumerate(preds, start=1))
    return text, golds


@pytest.mark.timing
def test_honest_answers_keep_credit_with_one_pathological_completion_in_three():
    """Issue 53: one completion in three runs to the deadline, 8 threads at once; every honest answer keeps its
    credit (the verdicts are asserted, not the times: tests/test_under_load.py runs this beside CPU-bound
    processes)."""
    from recipe_bcr.grading.reward import score_completion

    verifier = Verifier(timeout_s=2.0, workers=2)
    try:
        assert verifier.start(wait_s=120) == 2
        jobs: list[tuple[str, list[str]]] = []
        for k in range(2, 18):
            jobs.append(_exponential_group(k))
            if k % 2:
                jobs.append((TO_THE_DEADLINE, ["5", "8", "9"]))
        results = _timed_calls(lambda job: score_completion(job[0], job[1], verifier), jobs, verifier)
    finally:
        verifier.close()
    honest = [s for (text, _), (_, s) in zip(jobs, results) if text != TO_THE_DEADLINE]
    assert len(honest) == 16
    assert [(s.answers, s.methods) for s in honest if not all(s.correct)] == []
