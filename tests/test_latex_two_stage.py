"""Two-stage ANTLR prediction in latex2sympy2_extended: same results as LL, less full-context work."""

from __future__ import annotations

import json

import pytest
import sympy
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from latex2sympy2_extended.latex2sympy2 import latex2sympy

from recipe_bcr.grading.symbolic import latex_two_stage


@pytest.fixture
def two_stage():
    assert latex_two_stage.enable(), "latex2sympy2_extended's layout changed: two-stage parsing is off"
    yield
    latex_two_stage.disable()


def _answers(shared) -> list[str]:
    """Gold and predicted answers from the public grader cases and MATH-500: the shapes the reward meets."""
    texts = set()
    for line in (shared / "data/grader_cases/public_equivalence_cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        texts.update((case["gold"], case["pred"]))
    for line in (shared / "data/benchmarks/math500.jsonl").read_text().splitlines():
        texts.add(json.loads(line)["answer"])
    return sorted(texts)


def _parse_all(texts: list[str]) -> dict[str, str]:
    out = {}
    for text in texts:
        try:
            out[text] = sympy.srepr(latex2sympy(text))
        except Exception as e:  # noqa: BLE001 - the error itself is part of the result compared
            out[text] = f"error: {e}"
    return out


def test_results_identical_to_ll(shared, two_stage):
    """Every answer parses to the same SymPy tree (or the same error) as with the library's LL mode."""
    texts = _answers(shared)
    fast = _parse_all(texts)
    latex_two_stage.disable()
    slow = _parse_all(texts)
    assert len(texts) > 600
    assert [t for t in texts if fast[t] != slow[t]] == []


@pytest.mark.parametrize("text", ["(2, 4)", "\\left[ \\frac{1}{2}, 3 \\right)", "\\{1, 2, 3\\}", "x^2 + 2x + 1"])
def test_first_stage_avoids_full_context_prediction(text, two_stage, monkeypatch):
    """Tuples, intervals and sets need no uncached full-context prediction once enabled; LL alone does."""
    calls = []
    full_context = ParserATNSimulator.execATNWithFullContext

    def counting(self, *args):
        calls.append(args[0].decision)
        return full_context(self, *args)

    monkeypatch.setattr(ParserATNSimulator, "execATNWithFullContext", counting)
    expected = latex2sympy(text)
    staged_calls = len(calls)
    latex_two_stage.disable()
    calls.clear()
    assert latex2sympy(text) == expected
    assert len(calls) > staged_calls


def test_syntax_error_in_first_stage_falls_back_to_ll(two_stage):
    """A polynomial and bad input: the first stage's outcome is LL's, value or error."""
    staged = sympy.srepr(latex2sympy("n^{2} - n + 1"))
    with pytest.raises(Exception) as staged_error:
        latex2sympy("\\frac{1}{")
    latex_two_stage.disable()
    assert sympy.srepr(latex2sympy("n^{2} - n + 1")) == staged
    with pytest.raises(Exception) as ll_error:
        latex2sympy("\\frac{1}{")
    assert str(staged_error.value) == str(ll_error.value)


def test_enable_is_idempotent_and_reversible(two_stage):
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    patched = _Latex2Sympy.create_parser
    assert latex_two_stage.enable()
    assert _Latex2Sympy.create_parser is patched
    latex_two_stage.disable()
    assert _Latex2Sympy.create_parser is not patched
    assert not hasattr(_Latex2Sympy, "_bcr_ll_create_parser")
