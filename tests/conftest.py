"""Shared fixtures. Our tests are never imported as a package (verl ships a top-level `tests`)."""

from __future__ import annotations

import os
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
