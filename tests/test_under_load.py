"""The load test of the suite: the tests that time something (marker `timing`: linearity as time
ratios, deadlines of the symbolic pool, threads that must not wait) pass while two CPU-bound
processes compete for this machine's cores, as CI's neighbours and a developer's other jobs do.

Run the whole suite under the same load with `python tests/test_under_load.py [pytest args]`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BURNERS = 2


@contextmanager
def cpu_burners(count: int = BURNERS) -> Iterator[None]:
    """`count` processes that spin on a core until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def run_pytest(args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *args],
        cwd=TESTS.parent, capture_output=True, text=True, env=dict(os.environ),
    )


def test_timing_tests_pass_beside_two_cpu_bound_processes():
    with cpu_burners():
        proc = run_pytest(["-m", "timing", str(TESTS)])
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


if __name__ == "__main__":
    with cpu_burners():
        sys.exit(subprocess.call([sys.executable, "-m", "pytest", f"--ignore={Path(__file__)}", *sys.argv[1:]], cwd=TESTS.parent))
