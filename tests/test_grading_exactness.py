"""Issue 25, exactness: values that differ from the gold only far beyond any tolerance (exponentially
small differences, functions at extreme arguments, a vanishing imaginary part) are refused by a proof
of inequality; equalities that hold are still confirmed."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def patient():
    """The verdicts under test are the symbolic check's, not the deadline's."""
    from recipe_bcr.grading.verify import Verifier

    verifier = Verifier(timeout_s=30.0)
    yield verifier
    verifier.close()


@pytest.mark.parametrize(
    "gold,pred",
    [
        *[("1", f"1 + e^{{-{k}}}") for k in (40, 200, 1000, 5000)],
        ("\\pi", "\\pi + e^{-100}"),
        ("\\sqrt{2}", "\\sqrt{2} - 10^{-80}"),
        *[("\\frac{\\pi}{2}", f"\\arctan(10^{{{k}}})") for k in (40, 200)],
        ("1", "\\tanh(1000)"),
        ("1", "\\cos(10^{-30})"),
        ("1", "1 + 10^{-60} i"),
        ("2", "2 + e^{-200}i"),
        ("1", "1 + e^{-e^{100}}"),
    ],
)
def test_tiny_differences_are_refused(patient, gold, pred):
    assert not patient.check(pred, gold).correct


@pytest.mark.parametrize(
    "gold,pred",
    [
        ("3", "\\log_2 8"),
        ("1 + \\sqrt{2}", "\\sqrt{3 + 2\\sqrt{2}}"),
        ("\\frac{\\pi}{4}", "\\arctan 1"),
        ("\\frac{\\sqrt{3}}{2}", "\\sin\\frac{\\pi}{3}"),
        ("-1", "e^{i\\pi}"),
        ("\\ln 6", "\\ln 2 + \\ln 3"),
        ("2\\sqrt{2}", "\\sqrt{8}"),
    ],
)
def test_equalities_that_hold_are_confirmed(patient, gold, pred):
    assert patient.check(pred, gold).correct
