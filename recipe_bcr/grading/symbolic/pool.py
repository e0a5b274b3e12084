"""A pool of kill-able symbolic-check processes (forks of a warm server), safe from any thread. A check's deadline
is its own CPU time; the pool grows with slow and waiting checks, and a worker is always returned or replaced."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import logging
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_MAX_SIZE = 32  # forks of one warmed-up server share most of their memory
HARD_CAP = 1.75  # a slow check never runs past this multiple of its limit (the call's target is twice the limit)
STARVED_CAP = 10.0  # a starved check ends by its CPU time; this multiple of the limit only guards against a hang
NICE_AFTER_CPU_S = 0.75  # honest checks take tens of milliseconds (an exponential form of a complex number 0.3 s)
GROW_AFTER_S = 0.3  # a check that waited this long for a worker forks one (a warm worker is worth a short wait)
_POLL_S = 0.05
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read_line(sock: socket.socket, buf: bytearray, deadline: float) -> bytes | None:
    """One line from `sock` (bytes after it stay in `buf`), or None at the deadline or EOF."""
    while b"\n" not in buf:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([sock], [], [], remaining)
        if not ready:
            return None
        try:
            chunk = sock.recv(65536)
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line


class _Worker:
    """One forked checker process, reached over its own socket; `pidfd` kills it without pid reuse races."""

    def __init__(self, conn: socket.socket, pid: int, pidfd: int | None) -> None:
        self.conn = conn
        self.pid = pid
        self.pidfd = pidfd
        self.niced = False  # moved to the lowest CPU priority (never moved back: it is replaced after its check)
        self.cpu_used: float | None = None  # CPU seconds the last check took, where they can be read
        self._buf = bytearray()

    def send(self, payload: bytes) -> bool:
        try:
            self.conn.sendall(payload)
            return True
        except OSError:
            return False

    def cpu_seconds(self) -> float | None:
        """CPU time the process has used (user + system), or None if it cannot be read."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _CLK_TCK
        except (OSError, IndexError, ValueError):
            return None

    def recv(
        self, own_s: float, hard_deadline: float, ceiling: float, on_slow: Callable[[], None] | None = None
    ) -> dict[str, Any] | None:
        """The reply, or None when the check used `own_s` of CPU (a starved one waits to `ceiling`), died or garbled."""
        cpu0 = self.cpu_seconds()
        self.cpu_used = None
        soft = min(time.monotonic() + own_s, hard_deadline)
        while True:
            wake = soft if self.niced or cpu0 is None else min(soft, time.monotonic() + _POLL_S)
            line = _read_line(self.conn, self._buf, wake)
            cpu = self.cpu_seconds()
            self.cpu_used = None if cpu is None or cpu0 is None else cpu - cpu0
            if line is not None:
                try:
                    reply = json.loads(line)
                except ValueError:
                    return None
                return reply if isinstance(reply, dict) else None
            now = time.monotonic()
            if self.cpu_used is None or self.dead():
                return None
            used = self.cpu_used
            if not self.niced and used >= NICE_AFTER_CPU_S:
                self._renice()
                soft = min(soft, hard_deadline)  # slow: the wall-clock deadline again
                if on_slow is not None:
                    on_slow()
            if now < soft:
                continue
            if self.niced or own_s - used <= 0.01 or now >= ceiling:
                return None  # it had its CPU time (or the most wall time any check gets)
            soft = min(now + own_s - used, ceiling)  # starved, not slow: the unused CPU time is still its own

    def _renice(self) -> None:
        with contextlib.suppress(OSError):  # gone, or not allowed: it keeps its priority
            os.setpriority(os.PRIO_PROCESS, self.pid, 19)
        self.niced = True

    def dead(self) -> bool:
        """The process has exited (its socket reads end-of-file)."""
        ready, _, _ = select.select([self.conn], [], [], 0)
        if not ready:
            return False
        try:
            return self.conn.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # already gone
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self.conn.close()


class _ForkServer:
    """The process that imports math-verify once and forks a worker per request."""

    def __init__(self, rel_tol: float) -> None:
        control, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "recipe_bcr.grading.symbolic.worker", repr(rel_tol), str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.control = control
        self._lock = threading.Lock()
        self._buf = bytearray()

    def wait_ready(self, timeout_s: float) -> bool:
        line = _read_line(self.control, self._buf, time.monotonic() + timeout_s)
        return line is not None and b"ready" in line

    def fork(self, timeout_s: float = 10.0) -> _Worker | None:
        """A new worker, ready to serve; None if the server is gone."""
        mine, theirs = socket.socketpair()
        try:
            with self._lock:
                socket.send_fds(self.control, [b"f"], [theirs.fileno()])
        except OSError:
            mine.close()
            return None
        finally:
            theirs.close()
        deadline = time.monotonic() + timeout_s
        try:
            ready, _, _ = select.select([mine], [], [], timeout_s)
            msg, fds, _, _ = socket.recv_fds(mine, 4096, 1) if ready else (b"", [], 0, None)
        except OSError:
            msg, fds = b"", []
        buf = bytearray(msg)
        pidfd = fds[0] if fds else None
        line = _read_line(mine, buf, deadline) if msg else None
        try:
            hello = json.loads(line) if line else {}
        except ValueError:
            hello = {}
        if not isinstance(hello, dict) or not hello.get("ready"):
            if pidfd is not None:
                os.close(pidfd)
            mine.close()
            return None
        return _Worker(mine, int(hello["pid"]), pidfd)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        self.control.close()  # the server exits on EOF; its idle workers exit when their sockets close
        with contextlib.suppress(Exception):  # already gone
            self.proc.kill()
            self.proc.wait(timeout=5)


class SymbolicPool:
    """At least `size` workers, growing with demand up to `max_size`, each replaced at once when killed."""

    def __init__(
        self, size: int = 2, rel_tol: float = 1e-6, startup_timeout_s: float = 120.0, max_size: int | None = None
    ) -> None:
        if size < 1:
            raise ValueError(f"symbolic pool size must be >= 1, got {size}")
        self.size = size
        self.max_size = max(size, max_size or DEFAULT_MAX_SIZE)
        self.rel_tol = rel_tol
        self.startup_timeout_s = startup_timeout_s
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._live = 0  # workers idle, busy or being forked
        self._busy: set[_Worker] = set()
        self._waiting = 0  # checks that have waited more than GROW_AFTER_S for a worker
        self._slow = 0  # busy workers whose check is past NICE_AFTER_CPU_S
        self._server: _ForkServer | None = None
        self._server_lock = threading.Lock()
        self._ids = itertools.count()
        self._serving = threading.Event()  # the fork server is up (clear while it starts or restarts)
        self._server_starts = 0
        self._failed_starts = 0
        self._closed = False
        atexit.register(self.close)

    def _get_server(self) -> _ForkServer | None:
        """The running fork server, started (and waited for) if there is none; None if it cannot start."""
        with self._server_lock:
            if self._server is not None and self._server.alive():
                return self._server
            self._serving.clear()
            if self._server is not None:
                self._server.close()
            if self._closed:
                return None
            server = _ForkServer(self.rel_tol)
            if server.wait_ready(self.startup_timeout_s):
                self._server = server
                self._server_starts += 1
                self._serving.set()
                return server
            try:
                code: int | None = server.proc.wait(timeout=2)  # it may be exiting right now
            except subprocess.TimeoutExpired:
                code = None
            server.close()
            self._server = None
            self._failed_starts += 1
        logger.warning(
            "the symbolic fork server did not start (%s); symbolic checks time out (no credit, counted in "
            "verify_timeouts) until it does. See why: %s -m recipe_bcr.grading.symbolic.worker < /dev/null",
            "no reply in %.0f s" % self.startup_timeout_s if code is None else f"exit code {code}",
            sys.executable,
        )
        return None

    def _grow(self, wanted_live: int) -> None:
        """Fork workers in the background until `wanted_live` (capped at max_size) exist."""
        with self._lock:
            missing = min(wanted_live, self.max_size) - self._live
            if missing <= 0 or self._closed:
                return
            self._live += missing
        threading.Thread(target=self._fork_workers, args=(missing,), daemon=True).start()

    def _fork_workers(self, count: int) -> None:
        for _ in range(count):
            try:
                worker = self._fork_one()
            except Exception:  # noqa: BLE001 - e.g. out of file descriptors: this slot is given back below
                logger.exception("could not fork a symbolic worker")
                worker = None
            if worker is None or self._closed:
                with self._lock:
                    self._live -= 1
                if worker is not None:
                    worker.kill()
                continue
            self._idle.put(worker)

    def _fork_one(self) -> _Worker | None:
        server = self._get_server()
        worker = server.fork() if server is not None else None
        if worker is None and server is not None and not server.alive():
            server = self._get_server()  # the server died: one restart, then this fork
            worker = server.fork() if server is not None else None
        return worker

    def _top_up(self) -> None:
        """`size` workers beyond those slow checks hold, plus one for every check that waited too long."""
        with self._lock:
            target = max(self.size + self._slow, len(self._busy) + self._waiting)
        self._grow(target)

    def _mark_slow(self) -> None:
        with self._lock:
            self._slow += 1
        self._top_up()

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            self._slow -= worker.niced
            short = self._live < self.size
        self._idle.put(worker)
        if short:  # a replacement could not be forked earlier (say, out of file descriptors): refill now
            self._top_up()

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker whose state is unknown and fork its replacement."""
        with self._lock:
            if worker in self._busy:
                self._busy.discard(worker)
                self._slow -= worker.niced
            self._live -= 1
        worker.kill()
        self._top_up()

    def _acquire(self, deadline: float) -> _Worker | None:
        """An idle worker known to be alive (dead ones found on the way are replaced)."""
        while True:
            try:
                worker = self._idle.get(timeout=max(0.0, min(GROW_AFTER_S, deadline - time.monotonic())))
            except queue.Empty:
                worker = self._wait_for_worker(deadline)
            if worker is None:
                return None
            with self._lock:
                self._busy.add(worker)
            if not worker.dead():
                return worker
            self._discard(worker)

    def _wait_for_worker(self, deadline: float) -> _Worker | None:
        failures = self._failed_starts
        with self._lock:
            self._waiting += 1
        try:
            self._top_up()
            extended = False
            while (remaining := deadline - time.monotonic()) > 0 or (not extended and not self._serving.is_set()):
                if not extended and not self._serving.is_set():
                    # the server's start or restart is not the check's fault: it may use the startup allowance
                    deadline = max(deadline, time.monotonic() + self.startup_timeout_s)
                    extended = True
                    continue
                try:
                    return self._idle.get(timeout=min(remaining, 0.25))
                except queue.Empty:
                    if self._failed_starts > failures and self._idle.empty():
                        return None  # the server cannot start: fail fast rather than wait
            return None
        finally:
            with self._lock:
                self._waiting -= 1

    def start(self, wait_s: float = 0.0) -> int:
        """Start the fork server and `size` workers, waiting up to `wait_s`; returns how many are ready."""
        self._grow(self.size)
        deadline = time.monotonic() + wait_s
        while self._idle.qsize() < min(self._live, self.size) and time.monotonic() < deadline:
            time.sleep(0.02)
        return self._idle.qsize()

    @property
    def live(self) -> int:
        """Workers alive or being forked (idle and busy)."""
        with self._lock:
            return self._live

    @property
    def idle(self) -> int:
        return self._idle.qsize()

    def check(self, gold: str, pred: str, timeout_s: float, hints: dict[str, Any] | None = None) -> str:
        """ "true", "false", "gold_unparsed", "pred_unparsed", "error" or "timeout" (`hints`: a side's number)."""
        return self.check_timed(gold, pred, timeout_s, hints)[0]

    def check_timed(
        self,
        gold: str,
        pred: str,
        timeout_s: float,
        hints: dict[str, Any] | None = None,
        hard_deadline: float | None = None,
    ) -> tuple[str, float]:
        """The status and the check's own CPU seconds; `hard_deadline` ends a slow check, STARVED_CAP a starved one."""
        called = time.monotonic()
        cap = called + HARD_CAP * timeout_s if hard_deadline is None else hard_deadline
        ceiling = max(cap, called + STARVED_CAP * timeout_s)
        status, spent = "timeout", 0.0
        request = {"gold": gold, "pred": pred, "timeout": timeout_s, **(hints or {})}
        for _ in range(3):  # a check whose worker died without an answer is tried again on another
            starts = self._server_starts
            cold = not self._serving.is_set()
            worker = self._acquire(ceiling)  # waiting for a worker is not the check's time
            if worker is None:
                return "timeout", spent
            started = time.monotonic()
            cold = cold or self._server_starts != starts  # the server (re)started meanwhile: not this check's time
            hard = started + HARD_CAP * timeout_s if cold else cap
            status, retry = self._run(worker, request, hard, max(hard, ceiling))
            used = worker.cpu_used
            spent += time.monotonic() - started if used is None else used
            if not retry:
                break
        return status, spent

    def _run(self, worker: _Worker, request: dict[str, Any], hard_deadline: float, ceiling: float) -> tuple[str, bool]:
        """One check on a worker, returned or replaced whatever happens; (status, whether to retry elsewhere)."""
        healthy = False
        try:
            req_id = next(self._ids)
            if not worker.send((json.dumps({"id": req_id, **request}) + "\n").encode()):
                return "error", True
            reply = worker.recv(request["timeout"], hard_deadline, ceiling, self._mark_slow)
            if reply is None:
                return ("error", True) if worker.dead() else ("timeout", False)
            if reply.get("id") != req_id:
                return "error", False
            healthy = True
            return str(reply.get("status")), False
        except Exception:  # noqa: BLE001 - a check that cannot even be sent earns nothing, the pool keeps its size
            logger.exception("symbolic check could not be run; it earns no credit")
            return "error", False
        finally:
            if healthy and not worker.niced:
                self._release(worker)
            else:
                self._discard(worker)

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().kill()
            except queue.Empty:
                break
        with self._lock:
            busy = list(self._busy)
        for w in busy:
            w.kill()
        with self._server_lock:
            if self._server is not None:
                self._server.close()
                self._server = None
