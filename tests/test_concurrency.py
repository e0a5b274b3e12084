"""verl calls the reward from worker threads: pathological inputs must finish in bounded time."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from recipe_bcr.grading.symbolic.pool import HARD_CAP
from reward_fns.bcr import compute_score

PATHOLOGICAL = [
    "\\boxed{" + "{" * 200_000 + "}" * 199_999,
    "Answer1: \\boxed{10^{10^{10^{10}}}} Answer2: \\boxed{10^{10^{10^{10}}}} Answer3: \\boxed{(10^{100})!}",
    "\\boxed{1}" * 10_000,
    "\\boxed{" * 10_000,
    "Answer1: \\boxed{\\frac{1}{0}} Answer2: \\boxed{x^{10^{100}}-1}",
    "\x00\udcff日本語🙂" * 2000,
    "",
    None,
]


@pytest.mark.timing
def test_eight_threads_on_pathological_inputs():
    timeout_s = 2.0
    compute_score("bcr", "\\boxed{x+1}", ["1+x", "2", "3"], timeout_s=timeout_s)  # start the pool
    jobs = PATHOLOGICAL * 2

    def run(text):
        t0 = time.monotonic()
        out = compute_score("bcr", text, ["5", "7", "9"], {"n": 3}, timeout_s=timeout_s)
        return time.monotonic() - t0, out

    t0 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, jobs))
    wall = time.monotonic() - t0
    assert all(out["acc"] == 0 for _, out in results)
    # each completion has one deadline for its symbolic checks, HARD_CAP x timeout_s at most, and
    # waiting for a free worker is inside it; the rest of a call is in-process reading, whose cost
    # under this run's contention (and this machine's load) the calls that ran no check to its
    # deadline show. A check that ignored its deadline would never return.
    in_process = [latency for latency, out in results if out["verify_timeouts"] == 0]
    assert len(in_process) >= len(jobs) // 2
    bound = HARD_CAP * timeout_s + max(in_process)
    assert max(latency for latency, _ in results) <= bound
    assert wall <= 2 * bound  # 16 calls on 8 threads: two rounds at most


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
    not a check that waits out the two-minute start-up allowance."""
    import sys

    from recipe_bcr.grading.symbolic.pool import SymbolicPool

    monkeypatch.setattr(sys, "executable", "/bin/false")
    pool = SymbolicPool(size=2, startup_timeout_s=60)
    try:
        with caplog.at_level("WARNING", logger="recipe_bcr.grading.symbolic.pool"):
            t0 = time.perf_counter()
            assert pool.check("x+1", "1+x", 2.0) == "timeout"
            assert time.perf_counter() - t0 < 60 / 4  # a fraction of the start-up allowance
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
    (120 symbolic checks) and 4 completions with an answer that runs to the deadline, 8 at a time."""
    from recipe_bcr.grading.reward import score_completion
    from recipe_bcr.grading.verify import Verifier

    timeout_s = 2.0
    verifier = Verifier(timeout_s=timeout_s, workers=2)
    try:
        assert verifier.start(wait_s=120) == 2
        # an answer the in-process reading cannot refute (an irrational base), so its check runs to the deadline
        slow = "### Problem 1\nAnswer1: \\boxed{\\sqrt{2}^{\\sqrt{2}^{\\sqrt{2}^{100}}}}\n### Problem 2\nAnswer2: \\boxed{7}\n"
        jobs = [(slow, ["5", "7", "9"])] * 4 + [_honest_group(k) for k in range(3, 43)]
        jobs = jobs[::2] + jobs[1::2]  # slow ones early in both halves, while honest ones run

        def run(job):
            t0 = time.monotonic()
            scored = score_completion(job[0], job[1], verifier)
            return time.monotonic() - t0, scored

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(run, jobs))
        honest = [s for (text, _), (_, s) in zip(jobs, results) if text != slow]
        assert len(honest) == 40
        lost = [(s.answers, s.methods) for s in honest if not all(s.correct)]
        assert lost == []
        assert all(s.breakdown["verify_timeouts"] == 0 for s in honest)
        slow_scored = [s for (text, _), (_, s) in zip(jobs, results) if text == slow]
        assert [s.correct for s in slow_scored] == [[False, True, False]] * 4
        # a slow answer's call ends at its deadline plus what an honest call costs in this same run
        honest_latency = max(latency for (text, _), (latency, _) in zip(jobs, results) if text != slow)
        assert max(latency for latency, _ in results) <= HARD_CAP * timeout_s + honest_latency
    finally:
        verifier.close()
