"""The load test of the suite: the tests that time something (marker `timing`: linearity as CPU-time
ratios, deadlines of the symbolic pool against references from the same run, threads that must not
wait) pass while two CPU-bound processes compete for this machine's cores, as CI's neighbours and a
developer's other jobs do. This test is not marked `timing`, so the run it starts does not start it again.

Run the whole suite under the same load with `python tests/test_under_load.py [pytest args]`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
TESTS = Path(__file__).resolve().parent
BURNERS = 2
FUSE_S = 900  # the timing tests take one to three minutes beside the burners here; past this one of them hangs


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


def run_pytest(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """pytest with this interpreter and environment, from the repository root (so its configuration applies)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=FUSE_S,
    )


def timing_modules() -> list[str]:
    """The test modules that hold `timing` tests: pytest then collects (imports) those alone, not the whole suite
    (~15 s of a 43 s run on 2 quiet cores, beside the burners longer)."""
    here = Path(__file__).name
    return [str(p) for p in sorted(TESTS.glob("test_*.py")) if p.name != here and "mark.timing" in p.read_text()]


def test_timing_tests_pass_beside_two_cpu_bound_processes():
    modules = timing_modules()
    assert modules, "no test module marks a test `timing`"
    with cpu_burners():
        try:
            proc = run_pytest(["-m", "timing", *modules])
        except subprocess.TimeoutExpired as hung:
            tail = (hung.stdout or b"").decode(errors="replace")[-6000:]  # bytes, whatever text= says
            pytest.fail(f"the timing tests ran past {FUSE_S} s beside the burners:\n{tail}")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]


if __name__ == "__main__":
    with cpu_burners():
        sys.exit(
            subprocess.call(
                [sys.executable, "-m", "pytest", f"--ignore={Path(__file__)}", *sys.argv[1:]], cwd=TESTS.parent
            )
        )
