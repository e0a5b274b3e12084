"""Issue 36, honest classes: spellings reasoning models write that are the gold's value, each credited over many
values, each with its near misses refused."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from recipe_bcr.grading.reward import score_completion

RNG_SEED = 3600
SPECIAL_ANGLES = {  # degrees -> (sin, cos, tan) golds as LaTeX
    30: ("\\frac{1}{2}", "\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{3}"),
    45: ("\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt{2}}{2}", "1"),
    60: ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}", "\\sqrt{3}"),
    90: ("1", "0", None),
    120: ("\\frac{\\sqrt{3}}{2}", "-\\frac{1}{2}", "-\\sqrt{3}"),
    135: ("\\frac{\\sqrt{2}}{2}", "-\\frac{\\sqrt{2}}{2}", "-1"),
    150: ("\\frac{1}{2}", "-\\frac{\\sqrt{3}}{2}", "-\\frac{\\sqrt{3}}{3}"),
    180: ("0", "-1", "0"),
}


def test_trigonometric_functions_of_degrees(verifier):
    for deg, golds in SPECIAL_ANGLES.items():
        for name, gold in zip(("sin", "cos", "tan"), golds):
            if gold is None:
                continue
            for pred in (
                f"\\{name} {deg}^\\circ",
                f"\\{name}({deg}^{{\\circ}})",
                f"\\{name} {deg}°",
                f"\\{name}\\left({deg}^\\circ\\right)",
            ):
                assert verifier.check(pred, gold).correct, (pred, gold)
                assert not verifier.check(pred, f"{gold} + 1").correct, pred
            assert (
                not verifier.check(f"\\{name} {deg}", gold).correct or gold == "0" and deg == 180 and False
            )  # radians
    assert verifier.check("2\\sin 30^\\circ \\cos 30^\\circ", "\\sin 60^\\circ").correct


def test_finite_sums_and_products_with_numeric_bounds(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(30):
        a, b = rng.randrange(0, 5), rng.randrange(5, 25)
        p = rng.randrange(1, 4)
        total = sum(k**p for k in range(a, b + 1))
        for pred in (
            f"\\sum_{{k={a}}}^{{{b}}} k^{{{p}}}",
            f"\\sum_{{i={a}}}^{{{b}}} i^{p}",
            f"\\sum\\limits_{{n={a}}}^{{{b}}} n^{{{p}}}",
        ):
            assert verifier.check(pred, str(total)).correct, pred
            assert not verifier.check(pred, str(total + 1)).correct, pred
        lo, hi = rng.randrange(1, 4), rng.randrange(4, 12)
        prod = math.prod(range(lo, hi + 1))
        assert verifier.check(f"\\prod_{{k={lo}}}^{{{hi}}} k", str(prod)).correct
        assert not verifier.check(f"\\prod_{{k={lo}}}^{{{hi}}} k", str(prod + 1)).correct
        frac = sum(Fraction(1, k * (k + 1)) for k in range(1, hi + 1))
        assert verifier.check(
            f"\\sum_{{k=1}}^{{{hi}}} \\frac{{1}}{{k(k+1)}}", f"\\frac{{{frac.numerator}}}{{{frac.denominator}}}"
        ).correct


def test_geometric_series(verifier):
    for r, num, den in ((2, 1, 2), (3, 1, 3), (4, 3, 4), (5, 2, 5)):
        assert verifier.check(
            f"\\sum_{{k=0}}^{{\\infty}} \\left(\\frac{{{num}}}{{{den}}}\\right)^k", f"\\frac{{{den}}}{{{den - num}}}"
        ).correct
        assert not verifier.check(
            f"\\sum_{{k=0}}^{{\\infty}} \\left(\\frac{{{num}}}{{{den}}}\\right)^k",
            f"\\frac{{{den + 1}}}{{{den - num}}}",
        ).correct
        assert verifier.check(f"\\sum_{{k=0}}^{{n}} {r}^k", f"\\frac{{{r}^{{n+1}}-1}}{{{r - 1}}}").correct
        assert not verifier.check(f"\\sum_{{k=0}}^{{n}} {r}^k", f"\\frac{{{r}^{{n}}-1}}{{{r - 1}}}").correct
        assert verifier.check(f"\\sum_{{k=1}}^{{n}} {r}^{{k}}", f"\\frac{{{r}^{{n+1}}-{r}}}{{{r - 1}}}").correct


def test_ratios_of_factorials(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(30):
        n = rng.randrange(4, 30)
        k = rng.randrange(1, n)
        gold = str(math.comb(n, k))
        for pred in (
            f"\\frac{{{n}!}}{{{k}!{n - k}!}}",
            f"\\frac{{{n}!}}{{{k}!\\,{n - k}!}}",
            f"\\frac{{{n}!}}{{{k}! \\cdot {n - k}!}}",
            f"\\frac{{{n}!}}{{({n - k})!{k}!}}",
            f"{n}!/({k}!{n - k}!)",
        ):
            assert verifier.check(pred, gold).correct, pred
            assert not verifier.check(pred, str(math.comb(n, k) + 1)).correct, pred
    assert not verifier.check("3!2", "12").correct  # a digit after a factorial is no factorial product


def test_operatorname_max_and_min(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(30):
        a, b, c = rng.sample(range(-40, 40), 3)
        for name, f in (("max", max), ("min", min)):
            for pred in (
                f"\\operatorname{{{name}}}({a}, {b}, {c})",
                f"\\{name}({a},{b},{c})",
                f"\\{name}\\{{{a}, {b}, {c}\\}}",
                f"\\mathrm{{{name}}}({a}, {b}, {c})",
                f"\\operatorname{{{name}}}\\left({a}, {b}, {c}\\right)",
            ):
                assert verifier.check(pred, str(f(a, b, c))).correct, pred
                assert not verifier.check(pred, str(f(a, b, c) + 1)).correct, pred


IDENTITIES = [
    ("\\cos^2 x - \\sin^2 x", "\\cos 2x", "\\sin 2x"),
    ("2\\sin x \\cos x", "\\sin 2x", "\\cos 2x"),
    ("1 - 2\\sin^2 x", "\\cos(2x)", "\\cos x"),
    ("\\sin^2 x + \\cos^2 x", "1", "2"),
    ("\\frac{\\sin x}{\\cos x}", "\\tan x", "\\cot x"),
    ("\\sec^2 x - \\tan^2 x", "1", "0"),
    ("2\\cos^2 x - 1", "\\cos 2x", "\\cos x"),
    ("\\sin(x + y)", "\\sin x \\cos y + \\cos x \\sin y", "\\sin x \\cos y - \\cos x \\sin y"),
]


@pytest.mark.parametrize("pred,gold,miss", IDENTITIES)
def test_trigonometric_identities_sympy_proves(verifier, pred, gold, miss):
    assert verifier.check(pred, gold).correct
    assert verifier.check(gold, pred).correct
    assert not verifier.check(pred, miss).correct


def test_a_function_of_a_product_without_parentheses(verifier):
    for k in range(2, 9):
        assert verifier.check(f"\\sin {k}x", f"\\sin({k}x)").correct
        assert not verifier.check(f"\\sin {k}x", f"{k}x\\sin(1)").correct
        assert verifier.check(f"\\sin x \\cos {k}x", f"\\sin(x)\\cos({k}x)").correct
        assert verifier.check(f"\\ln {k} + 1", f"1 + \\ln({k})").correct


def test_set_builder_with_a_colon_or_a_bar(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(25):
        a = rng.randrange(-20, 20)
        b = a + rng.randrange(1, 10)
        for sep in (":", "\\mid", "|"):
            for pred, gold in (
                (f"\\{{x {sep} x > {a}\\}}", f"({a}, \\infty)"),
                (f"\\{{x {sep} {a} \\le x < {b}\\}}", f"[{a}, {b})"),
                (f"\\{{x \\in \\mathbb{{R}} {sep} x \\le {a}\\}}", f"(-\\infty, {a}]"),
                (f"\\{{x {sep} x \\ne {a}\\}}", f"(-\\infty, {a}) \\cup ({a}, \\infty)"),
            ):
                assert verifier.check(pred, gold).correct, (pred, gold)
                assert verifier.check(gold, pred).correct, (gold, pred)
                assert not verifier.check(pred, gold.replace(str(a), str(a + 1), 1)).correct, (pred, gold)
            assert not verifier.check(f"\\{{x {sep} x > {a}\\}}", f"[{a}, \\infty)").correct
            assert verifier.check(f"\\{{x {sep} x > {a}\\}}", f"x > {a}").correct


def test_set_difference(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(25):
        a = rng.randrange(-20, 20)
        b = a + rng.randrange(1, 10)
        assert verifier.check(f"\\mathbb{{R}} \\setminus \\{{{a}\\}}", f"(-\\infty, {a}) \\cup ({a}, \\infty)").correct
        assert verifier.check(f"(-\\infty, {a}) \\cup ({a}, \\infty)", f"\\mathbb{{R}} \\setminus \\{{{a}\\}}").correct
        assert not verifier.check(
            f"\\mathbb{{R}} \\setminus \\{{{a}\\}}", f"(-\\infty, {a}] \\cup ({a}, \\infty)"
        ).correct
        assert not verifier.check(
            f"\\mathbb{{R}} \\setminus \\{{{a}\\}}", f"(-\\infty, {b}) \\cup ({b}, \\infty)"
        ).correct
        assert verifier.check(
            f"\\mathbb{{R}} \\setminus \\{{{a}, {b}\\}}", f"(-\\infty, {a}) \\cup ({a}, {b}) \\cup ({b}, \\infty)"
        ).correct
        assert verifier.check(f"[{a}, {b}] \\setminus \\{{{b}\\}}", f"[{a}, {b})").correct
        assert verifier.check(f"\\{{{a}, {b}, {b + 1}\\}} \\setminus \\{{{b}\\}}", f"\\{{{a}, {b + 1}\\}}").correct
        assert not verifier.check(f"\\{{{a}, {b}, {b + 1}\\}} \\setminus \\{{{b}\\}}", f"\\{{{a}, {b}\\}}").correct


def test_plus_minus_inside_a_set_or_a_list(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(30):
        a, b = rng.sample(range(1, 60), 2)
        for pred, gold, miss in (
            (f"\\{{\\pm {a}\\}}", f"\\{{-{a}, {a}\\}}", f"\\{{-{a}, {a + 1}\\}}"),
            (f"\\pm {a}, {b}", f"-{a}, {a}, {b}", f"-{a}, {a}, {b + 1}"),
            (f"\\{{\\pm {a}, \\pm {b}\\}}", f"\\{{{a}, -{a}, {b}, -{b}\\}}", f"\\{{{a}, {a}, {b}, -{b}\\}}"),
            (f"{b}, \\pm\\sqrt{{{a}}}", f"{b}, \\sqrt{{{a}}}, -\\sqrt{{{a}}}", f"{b}, \\sqrt{{{a}}}, \\sqrt{{{a}}}"),
            (f"\\{{{b} \\pm {a}\\}}", f"\\{{{b - a}, {b + a}\\}}", f"\\{{{b - a}, {b + a + 1}\\}}"),
        ):
            assert verifier.check(pred, gold).correct, (pred, gold)
            assert not verifier.check(pred, miss).correct, (pred, miss)
        assert not verifier.check(f"\\{{\\pm {a}\\}}", f"\\{{{a}\\}}").correct
        assert not verifier.check(f"\\pm {a}, {b}", f"{a}, {b}").correct


def test_a_temperature_unit_after_a_degree_sign(verifier):
    for t in (-40, -5, 0, 12, 25, 37, 100, 451):
        for pred in (
            f"{t}^\\circ\\text{{C}}",
            f"{t}^{{\\circ}}\\mathrm{{C}}",
            f"{t}^\\circ C",
            f"{t}°C",
            f"{t} \\, ^\\circ\\text{{C}}",
            f"{t}\\degree C",
            f"{t}^{{\\circ}} \\text{{ C}}",
        ):
            for gold in (str(t), f"{t}^\\circ C", f"{t}^{{\\circ}}\\text{{C}}"):
                assert verifier.check(pred, gold).correct, (pred, gold)
            assert not verifier.check(pred, str(t + 1)).correct, pred
            assert not verifier.check(pred, f"{t}^\\circ F").correct, pred
        assert verifier.check(f"{t}^\\circ\\text{{F}}", f"{t}^\\circ F").correct


def test_repeating_decimals_with_a_bar(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(40):
        head = str(rng.randrange(0, 100)).zfill(rng.randrange(0, 3)) if rng.random() < 0.5 else ""
        period = str(rng.randrange(1, 1000))
        whole = rng.randrange(0, 5)
        value = Fraction(int(head or "0"), 10 ** len(head)) + Fraction(
            int(period), (10 ** len(period) - 1) * 10 ** len(head)
        )
        value += whole
        gold = f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
        for bar in ("\\bar", "\\overline", "\\dot"):
            if bar == "\\dot" and len(period) > 1:
                continue
            pred = f"{whole}.{head}{bar}{{{period}}}"
            assert verifier.check(pred, gold).correct, (pred, gold)
            assert not verifier.check(pred, f"\\frac{{{value.numerator + 1}}}{{{value.denominator}}}").correct, pred
            assert not verifier.check(f"{whole}.{head}{bar}{{{period}1}}", gold).correct, pred


def test_tex_braced_minus(verifier):
    for k in range(1, 40):
        assert verifier.check(f"{{-}}{k}", f"-{k}").correct
        assert verifier.check(f"x = {{-}}{k}", f"-{k}").correct
        assert verifier.check(f"({{-}}{k}, {k})", f"(-{k}, {k})").correct
        assert not verifier.check(f"{{-}}{k}", f"{k}").correct
        assert verifier.check(f"{k + 1}{{-}}{k}", "1").correct


def test_the_markdown_label_with_underscores(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(20):
        a, b = rng.randrange(1, 500), rng.randrange(1, 500)
        for mark in ("__", "_", "**", "***", "__**"):
            text = (
                f"### Problem 1\n{mark}Answer 1:{mark[::-1]} \\boxed{{{a}}}\n### Problem 2\n"
                f"{mark}Answer 2:{mark[::-1]} \\boxed{{{b}}}\n"
            )
            scored = score_completion(text, [str(a), str(b)], verifier)
            assert scored.correct == [True, True] and scored.breakdown["fmt"] == 1.0, text
            text = f"### {mark}Problem 1{mark[::-1]}\n{mark}Answer 1{mark[::-1]}: \\boxed{{{a}}}\n"
            scored = score_completion(text, [str(a)], verifier)
            assert scored.correct == [True] and scored.breakdown["fmt"] == 1.0, text


def test_a_number_with_its_unit_inside_text(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(30):
        n = rng.randrange(1, 5000)
        for unit in ("cm", "meters", "km/h", "square units", "dollars", "degrees", "miles per hour", "kg"):
            for pred in (
                f"\\text{{{n} {unit}}}",
                f"\\text{{{n}{unit}}}" if " " not in unit else f"\\text{{ {n} {unit} }}",
                f"\\mathrm{{{n}~{unit}}}",
            ):
                assert verifier.check(pred, str(n)).correct, pred
                assert verifier.check(pred, f"{n} \\text{{ {unit}}}").correct, pred
                assert not verifier.check(pred, str(n + 1)).correct, pred
        assert not verifier.check(f"\\text{{{n} apples or {n + 1}}}", str(n)).correct
        assert not verifier.check(f"\\text{{{n} cm}}", f"{n} \\text{{ m}}").correct


def test_unicode_infinity(verifier):
    for a in range(-5, 6):
        for pred, gold in (
            (f"({a}, ∞)", f"({a}, \\infty)"),
            (f"(-∞, {a}]", f"(-\\infty, {a}]"),
            ("∞", "\\infty"),
            (f"[{a},+∞)", f"[{a}, \\infty)"),
            (f"x \\in ({a}, ∞)", f"({a},\\infty)"),
            ("-∞", "-\\infty"),
            (f"\\{{x : x > {a}\\}}", f"({a}, ∞)"),
            (f"({a}, \\infty)", f"({a}, ∞)"),
            (f"x∈({a},∞)", f"({a}, \\infty)"),
            (f"({a}, \\text{{∞}})", f"({a}, \\infty)"),
            (f"({a}, \\infin)", f"({a}, \\infty)"),
            (f"ℝ ∖ \\{{{a}\\}}".replace("ℝ", "\\mathbb{R}"), f"(-∞, {a}) \\cup ({a}, ∞)"),
        ):
            assert verifier.check(pred, gold).correct, (pred, gold)
        assert not verifier.check(f"({a}, ∞)", f"({a}, -\\infty)").correct
        assert not verifier.check(f"({a}, ∞)", f"[{a}, \\infty)").correct


LAYOUTS = [
    "Answer {i}:\n\\[\n\\boxed{{{v}}}\n\\]",
    "**Answer {i}:**\n\n\\[\n\\boxed{{{v}}}\n\\]",
    "Answer {i}:\n\n$$\n\\boxed{{{v}}}\n$$",
    "**Answer {i}:**\n\\[ \\boxed{{{v}}} \\]",
    "Answer {i}:\n\\[\n\\displaystyle \\boxed{{{v}}}\n\\]",
    "Answer {i}:  \n\\[\\boxed{{{v}}}.\\]",
    "__Answer {i}:__\n\n\\[\n  \\boxed{{{v}}}\n\\]",
    "Answer {i}:\n\\begin{{equation}}\n\\boxed{{{v}}}\n\\end{{equation}}",
    "Answer {i}:\n\\begin{{equation*}}\n\\boxed{{{v}}}\n\\end{{equation*}}",
    "Answer {i}:\n\\begin{{align*}}\n\\boxed{{{v}}}\n\\end{{align*}}",
    "Answer {i}: $\\displaystyle\\boxed{{{v}}}$",
    "Answer {i}: \\(\\boxed{{{v}}}\\)",
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_label_alone_with_the_box_in_display_math_keeps_format(verifier, layout):
    rng = random.Random(RNG_SEED)
    for _ in range(10):
        a, b = rng.randrange(1, 500), rng.randrange(1, 500)
        text = f"### Problem 1\n{layout.format(i=1, v=a)}\n\n### Problem 2\n{layout.format(i=2, v=b)}\n"
        scored = score_completion(text, [str(a), str(b)], verifier)
        assert scored.correct == [True, True] and scored.breakdown["fmt"] == 1.0, text
        scored = score_completion(text, [str(a + 1), str(b)], verifier)
        assert scored.correct == [False, True], text
