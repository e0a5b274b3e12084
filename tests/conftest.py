"""Shared fixtures. Our tests are never imported as a package (verl ships a top-level `tests`).

Expensive things run once per session here and many small tests assert one property each of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BCR_SHARED", REPO.parent / "shared")).resolve()


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
    from recipe_bcr.toy.model import ensure_model, load_specs

    task, mspec, cfg = load_specs()
    return task, ensure_model(Path(cfg["cache_dir"]), task, mspec, progress=False)


@pytest.fixture(scope="session")
def doctor(tmp_path_factory) -> subprocess.CompletedProcess:
    """`python -m recipe_bcr doctor` on this install, run once from outside the repository."""
    return subprocess.run([sys.executable, "-m", "recipe_bcr", "doctor"], capture_output=True, text=True,
                          cwd=tmp_path_factory.mktemp("doctor"))
