"""Shared fixtures. Our tests are never imported as a package (verl ships a top-level `tests`).

Expensive things run once per session here and many small tests assert one property each of them.
Under pytest-xdist (`-n 2`; `--dist loadscope` is in pyproject's addopts) a module's or a class's tests
stay on one worker, so a module- or class-wide run happens once; the longest runs start first, and each
worker keeps its own toy-model cache."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BCR_SHARED", REPO.parent / "shared")).resolve()
# The longest runs and modules (about 2-5 min each on 2 cores), started first so that the two workers end together.
LONGEST_FIRST = ("test_train_e2e.py", "test_demo.py", "test_vllm_cpu.py")

# OpenMP threads that sleep when idle, in the test processes and every command they start (set before
# anything imports torch): libgomp's default spins, and on 2 cores the in-process toy rebuild's spinning threads
# stalled the other worker's GRPO run for 2.5 min (a Ray start that takes 25 s alone). verl's CPU preset sets
# the same for its Ray workers (hydra_configs/bcr_device/cpu.yaml).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if WORKER := os.environ.get("PYTEST_XDIST_WORKER"):
    # A cache per worker: two workers (and the commands they start) never copy the toy model into one folder at once.
    _cache = Path(os.environ.get("BCR_CACHE", "~/.cache/bcr-recipe")).expanduser()
    os.environ["BCR_CACHE"] = str(_cache / f"xdist-{WORKER}")


# Under CI (`CI=1` or `CI=true`, as CI services set it) a dependency that .ci/setup installs must be there.
CI = os.environ.get("CI", "").strip().lower() in {"1", "true"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "requires(*modules): the test needs these modules, which .ci/setup installs: missing, it fails under CI "
        "(CI=1/true) and is skipped, with the reason, elsewhere",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.requires("vllm")`: a missing module fails the test under CI, where .ci/setup installs it (a
    skip there would hide a broken setup), and skips it with the reason elsewhere."""
    import importlib.util

    for mark in item.iter_markers("requires"):
        for module in mark.args:
            if importlib.util.find_spec(module) is not None:
                continue
            why = f"{module} is not installed (bash .ci/setup installs it)"
            if CI:
                pytest.fail(f"{why}; CI={os.environ['CI']} requires it", pytrace=False)
            pytest.skip(why)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `committed` tests (re-judging the committed run) only when `-m` names them; then, on xdist workers, the
    slow tests first, the longest runs first among them (xdist hands out whole modules or classes,
    `--dist loadscope`, in the order their first test appears)."""
    if "committed" not in (config.option.markexpr or ""):
        opted_out = [item for item in items if item.get_closest_marker("committed")]
        if opted_out:
            config.hook.pytest_deselected(items=opted_out)
            items[:] = [item for item in items if not item.get_closest_marker("committed")]
    if not WORKER:
        return

    def rank(item: pytest.Item) -> int:
        slow = item.get_closest_marker("slow") is not None
        if slow and item.path.name in LONGEST_FIRST:
            return LONGEST_FIRST.index(item.path.name)
        return len(LONGEST_FIRST) + (not slow)

    items.sort(key=rank)  # stable: the collection order within each rank


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"../shared not found at {SHARED}; set BCR_SHARED to the shared data folder")
    return SHARED


@pytest.fixture(scope="session")
def verifier():
    from recipe_bcr.grading.verify import default_verifier

    return default_verifier()


@pytest.fixture(scope="session")
def toy():
    """The toy task and the warm-started tiny Qwen3 (the committed copy, in BCR_CACHE)."""
    from recipe_bcr.miniature.toy.model import ensure_model, load_specs

    task, mspec, cfg = load_specs()
    return task, ensure_model(Path(cfg["cache_dir"]), task, mspec, progress=False)


@pytest.fixture(scope="session")
def doctor(tmp_path_factory) -> subprocess.CompletedProcess:
    """`python -m recipe_bcr doctor` on this install, run once per test session from outside the
    repository: the first worker to ask runs it (about 10 s) and the other reads its result."""
    shared_tmp = tmp_path_factory.getbasetemp().parent if WORKER else tmp_path_factory.getbasetemp()
    record = shared_tmp / "doctor.json"
    with (shared_tmp / "doctor.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            proc = subprocess.run(
                [sys.executable, "-m", "recipe_bcr", "doctor"],
                capture_output=True,
                text=True,
                cwd=tmp_path_factory.mktemp("doctor"),
            )
            staged = record.with_suffix(".tmp")
            staged.write_text(
                json.dumps(
                    {"args": proc.args, "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
                )
            )
            staged.replace(record)
    return subprocess.CompletedProcess(**json.loads(record.read_text()))


def _fake_smi(bin_dir: Path, rows: list[str], exit_code: int = 0) -> None:
    """An `nvidia-smi` that prints `rows` (name, driver version) to any query."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text("#!/bin/sh\n" + "".join(f"echo '{row}'\n" for row in rows) + f"exit {exit_code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """A fake nvidia-smi first on PATH (also for subprocesses): smi(rows[, exit_code]) writes it; the driver
    cache is cleared before and after the test."""
    from recipe_bcr.verl_ext import platform_cpu

    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    platform_cpu.nvidia_gpus.cache_clear()
    yield lambda rows, exit_code=0: _fake_smi(tmp_path / "bin", rows, exit_code)
    platform_cpu.nvidia_gpus.cache_clear()
