"""A pool of kill-able symbolic-check processes, safe to call from any thread.

verl runs the reward in worker threads and Ray actors, where `signal.alarm` cannot be
used, and a SymPy computation (10^{10^{10^{10}}}) cannot be interrupted from another
thread. So each check goes to a separate process (recipe_bcr.symbolic_worker); when the
hard deadline passes, the process is killed and a replacement starts in the background,
and the check reports "timeout" (no credit, and counted, never silent).
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import os
import queue
import select
import subprocess
import sys
import threading
import time
from typing import Any

logger = logging.getLogger(__name__)


class _Worker:
    def __init__(self, rel_tol: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "recipe_bcr.symbolic_worker", repr(rel_tol)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self._buf = b""

    def send(self, payload: dict[str, Any]) -> bool:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(payload) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def recv(self, deadline: float) -> dict[str, Any] | None:
        """One JSON line, or None if the deadline passes or the process died."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - already gone
            pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


class SymbolicPool:
    """`size` worker processes, all started at the first check (or by start()), replaced when killed."""

    def __init__(self, size: int = 2, rel_tol: float = 1e-6, startup_timeout_s: float = 120.0) -> None:
        if size < 1:
            raise ValueError(f"symbolic pool size must be >= 1, got {size}")
        self.size = size
        self.rel_tol = rel_tol
        self.startup_timeout_s = startup_timeout_s
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._alive = 0
        self._all: set[_Worker] = set()
        self._ids = itertools.count()
        self._ready_once = threading.Event()  # set when the first worker is ready
        self._failed_starts = 0
        self._closed = False
        atexit.register(self.close)

    def _start_one(self) -> None:
        """Start a worker and put it in the idle queue once it says ready."""
        worker = _Worker(self.rel_tol)
        with self._lock:
            self._all.add(worker)
        hello = worker.recv(time.monotonic() + self.startup_timeout_s)
        if hello and hello.get("ready"):
            self._ready_once.set()
            self._idle.put(worker)
        else:
            code = worker.proc.poll()
            if self._closed:
                return
            logger.warning(
                "a symbolic worker did not start (%s); symbolic checks time out (no credit, counted in "
                "verify_timeouts) until one does. See why: %s -m recipe_bcr.symbolic_worker < /dev/null",
                "no reply in %.0f s" % self.startup_timeout_s if code is None else f"exit code {code}",
                sys.executable,
            )
            worker.kill()
            with self._lock:
                self._all.discard(worker)
                self._alive -= 1
                self._failed_starts += 1

    def _replace_in_background(self, worker: _Worker) -> None:
        """Kill a stuck worker and start its replacement; the pool's size never changes."""
        worker.kill()
        with self._lock:
            self._all.discard(worker)
        threading.Thread(target=self._start_one, daemon=True).start()

    def _acquire(self, deadline: float) -> _Worker | None:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        failures = self._failed_starts
        # start every missing worker at once: with one stuck or being replaced, the others serve
        self.start()
        if not self._ready_once.is_set():
            # the pool's very first start is not the check's fault: it may use the startup allowance
            deadline = max(deadline, time.monotonic() + self.startup_timeout_s)
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                return self._idle.get(timeout=min(remaining, 0.25))
            except queue.Empty:
                if not self._ready_once.is_set() and self._failed_starts > failures:
                    return None  # no worker has ever started and one just failed: do not wait out the allowance
        return None

    def start(self, wait_s: float = 0.0) -> int:
        """Start every worker not yet started; wait up to `wait_s` for all to be ready.

        Returns how many are ready. Lets a caller pay the start-up (imports and parser warm-up,
        a few seconds) before the first batch instead of during it."""
        with self._lock:
            missing = self.size - self._alive
            self._alive = self.size
        for _ in range(missing):
            threading.Thread(target=self._start_one, daemon=True).start()
        deadline = time.monotonic() + wait_s
        while self._idle.qsize() < self._alive and time.monotonic() < deadline:  # failed starts leave _alive
            time.sleep(0.05)
        return self._idle.qsize()

    def check(self, gold: str, pred: str, timeout_s: float, hints: dict[str, Any] | None = None) -> str:
        """"true", "false", "gold_unparsed", "pred_unparsed", "error" or "timeout".

        `hints` may carry `gold_number` / `pred_number` ([numerator, denominator, approximate])
        for a side already read as a plain number, which the worker then does not parse."""
        cold = not self._ready_once.is_set()
        deadline = time.monotonic() + timeout_s
        worker = self._acquire(deadline)
        if worker is None:
            return "timeout"
        if cold:  # waiting for the first worker does not eat into the check's own time
            deadline = time.monotonic() + timeout_s
        req_id = next(self._ids)
        if not worker.send({"id": req_id, "gold": gold, "pred": pred, "timeout": timeout_s, **(hints or {})}):
            self._replace_in_background(worker)
            return "error"
        reply = worker.recv(deadline)
        if reply is None or reply.get("id") != req_id:
            self._replace_in_background(worker)
            return "timeout"
        self._idle.put(worker)
        return str(reply["status"])

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers = list(self._all)
        for w in workers:
            w.kill()
