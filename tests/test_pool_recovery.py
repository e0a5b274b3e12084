"""The symbolic pool keeps its size whatever happens between taking a worker and returning it."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from recipe_bcr.grading.symbolic.pool import NICE_AFTER_CPU_S, STARVED_CAP, SymbolicPool

SIZE = 2


def _back_to_full(pool: SymbolicPool, within_s: float = 10.0) -> bool:
    """Every kept worker idle and ready again (a replacement is a fork: it should take milliseconds)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if pool.idle >= SIZE and pool.live >= SIZE:
            return True
        time.sleep(0.02)
    return False


def _honest_check_passes(pool: SymbolicPool) -> bool:
    return pool.check("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}", 2.0) == "true"


@pytest.fixture(scope="module")
def pool():
    p = SymbolicPool(size=SIZE)
    assert p.start(wait_s=120) == SIZE
    yield p
    p.close()


def _timed_runaway(pool: SymbolicPool, limit_s: float) -> tuple[str, float]:
    """A check that never finishes by itself, with this limit: its status and the CPU seconds it used. A check
    still running at twice the starvation guard ignored its own limit: the pool is closed (killing the worker ends
    the check) and the test fails instead of hanging."""
    result: list[tuple[str, float]] = []
    checker = threading.Thread(target=lambda: result.append(pool.check_timed("5", "10^{10^{10^{10}}}", limit_s)))
    t0 = time.monotonic()
    checker.start()
    checker.join(timeout=2 * STARVED_CAP * limit_s)
    elapsed = time.monotonic() - t0
    if checker.is_alive():
        try:
            pool.close()
        finally:  # closing races the check for its worker and may raise: the verdict is this
            pytest.fail(f"a check with a {limit_s} s limit still ran after {elapsed:.0f} s")
    return result[0]


@pytest.mark.timing
def test_after_a_timeout_kill(pool):
    """A check past its limit is ended by its limit, in CPU time, not by finishing: it has had its time (a starved
    check is given it), and with four times the limit it has had more (a slow one is cut once it has used
    NICE_AFTER_CPU_S past the hard cap, so on a loaded machine about 1.5x, alone 4x; load cannot fake either);
    the pool is whole again afterwards."""
    short_status, short = _timed_runaway(pool, 0.5)
    assert _back_to_full(pool)
    long_status, long = _timed_runaway(pool, 2.0)
    assert (short_status, long_status) == ("timeout", "timeout")
    assert 0.4 <= short <= 0.5 + 0.3, short
    assert long >= min(2.0, NICE_AFTER_CPU_S) - 0.05 and long >= 1.3 * short, (short, long)
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_after_a_worker_dies_while_idle(pool):
    """A worker killed behind the pool's back (OOM killer, a crash) is found dead and the check is
    retried on another: the honest answer keeps its credit."""
    assert _back_to_full(pool)
    victims = [w.pid for w in list(pool._idle.queue)]
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    assert _honest_check_passes(pool)
    assert _back_to_full(pool)


@pytest.mark.parametrize(
    "hints",
    [
        {"pred_number": [10**5000, 1, False, 0]},  # json cannot write an int this long: raises before sending
        {"pred_number": [object(), 1, False, 0]},  # not JSON at all
    ],
)
def test_after_an_exception_between_checkout_and_return(pool, hints):
    assert pool.check("5", "7", 2.0, hints) == "error"
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_after_a_garbled_reply(pool, monkeypatch):
    from recipe_bcr.grading.symbolic import pool as symbolic

    def garbled(self, own_s, hard_deadline):
        raise RuntimeError("garbled reply")

    with monkeypatch.context() as m:
        m.setattr(symbolic._Worker, "recv", garbled)
        assert pool.check("5", "x+1", 2.0) == "error"
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_after_a_check_that_kills_its_worker(pool):
    """A check whose worker dies mid-way (here: killed while busy) is retried once, then reported."""

    def kill_busy_soon():
        time.sleep(0.3)
        for w in list(pool._busy):
            os.kill(w.pid, signal.SIGKILL)

    threading.Thread(target=kill_busy_soon).start()
    assert pool.check("5", "10^{10^{10^{10}}}", 1.0) in ("error", "timeout")
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_after_the_fork_server_dies(pool):
    """Its workers die with it; the next check waits for the restart (not its own fault) and scores."""
    assert _back_to_full(pool)
    pool._server.proc.kill()
    pool._server.proc.wait()
    time.sleep(0.2)
    assert _honest_check_passes(pool)
    assert _back_to_full(pool, within_s=60)
    assert pool.check("5", "10^{10^{10^{10}}}", 1.0) == "timeout"
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_the_pool_grows_with_concurrency(pool):
    """Four slow checks at once hold four workers; honest checks beside them get workers of their own
    (with a fixed pool of two they would wait out their deadline behind the slow ones)."""
    from concurrent.futures import ThreadPoolExecutor

    assert _back_to_full(pool)
    jobs = [("5", "10^{10^{10^{10}}}")] * 4 + [
        (f"\\frac{{\\sqrt{{{k}}}}}{{2}}", f"\\frac{{1}}{{2}}\\sqrt{{{k}}}") for k in (2, 3, 5, 6)
    ]
    with ThreadPoolExecutor(len(jobs)) as ex:
        statuses = list(ex.map(lambda job: pool.check(*job, 2.0), jobs))
    assert statuses == ["timeout"] * 4 + ["true"] * 4
    assert _back_to_full(pool) and _honest_check_passes(pool)


def test_after_forks_that_raise(pool, monkeypatch):
    """A replacement that cannot be forked (say, out of file descriptors) leaves no phantom worker:
    the pool counts only real ones and refills once forking works again."""
    from recipe_bcr.grading.symbolic import pool as symbolic

    assert _back_to_full(pool)

    def broken(self, timeout_s=10.0):
        raise OSError("too many open files")

    with monkeypatch.context() as m:
        m.setattr(symbolic._ForkServer, "fork", broken)
        assert pool.check("5", "10^{10^{10^{10}}}", 1.0) == "timeout"
        deadline = time.monotonic() + 5
        while pool.live != pool.idle and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.live == pool.idle  # every worker it counts is one it has
    assert _honest_check_passes(pool)
    assert _back_to_full(pool)
