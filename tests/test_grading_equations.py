"""Issue 25, equations: a gold `y = 2x + 1` is answered by any equation with the same solutions
(`2x - y + 1 = 0`, `2x + 1 = y`, `2y = 4x + 2`), decided exactly in process for polynomial equations; and
a product of decimals keeps the decimal rule (`0.3333333 \\cdot 1` is 1/3, `0.3333 \\cdot 1` is not)."""

from __future__ import annotations

import random


def _lines(count: int) -> list[tuple[int, int]]:
    rng = random.Random(17)
    return [(rng.choice([-7, -3, -2, -1, 2, 3, 5]), rng.randrange(1, 20)) for _ in range(count)]


def test_the_same_line_in_any_form(verifier):
    for m, c in _lines(30):
        gold = f"y = {m}x + {c}"
        honest = [
            f"{m}x - y + {c} = 0",
            f"{m}x + {c} = y",
            f"y - {m}x = {c}",
            f"2y = {2 * m}x + {2 * c}",
            f"y = {c} + {m}x",
        ]
        for pred in honest:
            verdict = verifier.check(pred, gold)
            assert verdict.correct and verdict.method != "symbolic", (pred, gold, verdict)
            assert not verifier.check(pred, f"y = {m}x + {c + 1}").correct, pred
        assert verifier.check(f"{m}x + {c}", gold).correct  # the value of the gold's label
        assert not verifier.check(f"{m}x - y + {c} = 1", gold).correct


def test_equations_between_values(verifier):
    for k in range(1, 30):
        assert verifier.check(f"2k = {2 * k}", f"k = {k}").correct
        assert not verifier.check(f"2k = {2 * k + 1}", f"k = {k}").correct
        assert verifier.check(f"x + y = {k}", f"y + x = {k}").correct
        assert not verifier.check(f"x - y = {k}", f"y - x = {k}").correct


def test_products_of_decimals_are_decimals(verifier):
    for q in (3, 6, 7, 9, 11, 13):
        digits = 7
        rounded = f"{1 / q:.{digits}f}"
        assert verifier.check(f"{rounded} \\cdot 1", f"\\frac{{1}}{{{q}}}").correct, (rounded, q)
        assert verifier.check(f"1 \\cdot {rounded}", f"\\frac{{1}}{{{q}}}").correct
        assert not verifier.check(f"{1 / q:.4f} \\cdot 1", f"\\frac{{1}}{{{q}}}").correct
        off = f"{float(rounded) + 1e-7:.{digits}f}"
        assert not verifier.check(f"{off} \\cdot 1", f"\\frac{{1}}{{{q}}}").correct
    assert not verifier.check(
        "0.3333333 \\pi", "\\frac{\\pi}{3}"
    ).correct  # a decimal times an irrational: its own value
