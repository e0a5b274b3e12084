"""verl's "engine is not available" import warnings are hidden by exact message, nothing else."""

from __future__ import annotations

import warnings

import pytest

from recipe_bcr.verl_ext.quiet import OPTIONAL_VERL_ENGINES, hide_missing_engine_warnings


def shown(message: str, category: type[Warning] = UserWarning) -> bool:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hide_missing_engine_warnings()
        warnings.warn(message, category, stacklevel=1)
    return bool(caught)


@pytest.mark.parametrize("engine", OPTIONAL_VERL_ENGINES)
def test_verl_missing_engine_warnings_are_hidden(engine):
    assert not shown(f"{engine} engine is not available: ModuleNotFoundError(\"No module named '{engine}'\")")


@pytest.mark.parametrize(
    "message, category",
    [
        ("fsdp engine is not available: ImportError()", UserWarning),  # an engine the recipe uses
        ("torchtitan engine is slow", UserWarning),
        ("the torchtitan engine is not available: x", UserWarning),
        ("torchtitan engine is not available: x", DeprecationWarning),
        ("Platform 'nvidia' is registered but not available", UserWarning),
    ],
)
def test_every_other_warning_still_shows(message, category):
    assert shown(message, category)


@pytest.mark.slow  # doctor imports verl, Ray and vLLM
def test_the_recipe_cli_does_not_repeat_them(doctor):
    """`doctor` imports verl's trainer and workers, which emit the five warnings at import."""
    proc = doctor
    assert "engine is not available" not in proc.stdout + proc.stderr
    assert "[ok] verl hooks" in proc.stdout
