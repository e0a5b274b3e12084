"""Issue 25, TeX spellings: `{a \\over b}`, `{n \\choose k}`, `\\mathrm{i}` / `\\imath`, `\\mathrm{e}`, `∞`,
`\\operatorname{arcsin}`, `\\text{$12$}`, `\\mathbf{1}\\mathbf{2}` and a box in a box after a label are the
values they render; the same spellings of another value are not."""

from __future__ import annotations

import math
import random

from recipe_bcr.grading.reward import score_completion

RNG_SEED = 25


def _pairs(count: int) -> list[tuple[int, int]]:
    rng = random.Random(RNG_SEED)
    return [(rng.randrange(1, 60), rng.randrange(2, 60)) for _ in range(count)]


def test_over_is_a_quotient(verifier):
    for p, q in _pairs(40):
        for pred in (f"{{{p} \\over {q}}}", f"{p} \\over {q}", f"{{{2 * p} \\over {2 * q}}}"):
            assert verifier.check(pred, f"\\frac{{{p}}}{{{q}}}").correct, pred
            assert not verifier.check(pred, f"\\frac{{{p + 1}}}{{{q}}}").correct, pred
    assert not verifier.check("1, 2 \\over 3", "\\frac{1}{3}").correct  # a list over a number is no quotient


def test_choose_is_a_binomial(verifier):
    for n, k in _pairs(40):
        n, k = n + k, k  # k <= n
        pred = f"{{{n} \\choose {k}}}"
        assert verifier.check(pred, str(math.comb(n, k))).correct, pred
        assert not verifier.check(pred, str(math.comb(n, k) + 1)).correct, pred


def test_upright_i_and_imath_are_the_imaginary_unit(verifier):
    for a, b in _pairs(30):
        for unit in ("\\mathrm{i}", "\\imath", "\\text{i}"):
            pred = f"{a} + {b}{unit}"
            assert verifier.check(pred, f"{a}+{b}i").correct, pred
            assert not verifier.check(pred, f"{a}+{b + 1}i").correct, pred


def test_upright_e_is_eulers_number(verifier):
    for k in range(2, 30):
        assert verifier.check(f"\\mathrm{{e}}^{{{k}}}", f"e^{{{k}}}").correct
        assert not verifier.check(f"\\mathrm{{e}}^{{{k}}}", f"e^{{{k + 1}}}").correct
        assert verifier.check(f"{k}\\mathrm{{e}}", f"{k}e").correct


def test_unicode_infinity(verifier):
    assert verifier.check("∞", "\\infty").correct and verifier.check("-∞", "-\\infty").correct
    assert verifier.check("+∞", "\\infty").correct
    assert not verifier.check("-∞", "\\infty").correct and not verifier.check("∞", "-\\infty").correct
    assert verifier.check("(-∞, 3]", "(-\\infty, 3]").correct


def test_operatorname_functions(verifier):
    for name in ("arcsin", "arccos", "arctan", "sin", "log"):
        for k in range(2, 8):
            assert verifier.check(
                f"\\operatorname{{{name}}}(\\frac{{1}}{{{k}}})", f"\\{name}(\\frac{{1}}{{{k}}})"
            ).correct
            assert not verifier.check(
                f"\\operatorname{{{name}}}(\\frac{{1}}{{{k}}})", f"\\{name}(\\frac{{1}}{{{k + 1}}})"
            ).correct


def test_math_inside_text_and_styled_digits(verifier):
    rng = random.Random(RNG_SEED)
    for n in (rng.randrange(10, 10**6) for _ in range(40)):
        digits = str(n)
        styled = "".join(f"\\mathbf{{{d}}}" for d in digits)
        for pred in (f"\\text{{${n}$}}", styled, f"\\mathbf{{{digits}}}", f"\\textbf{{{digits}}}"):
            assert verifier.check(pred, digits).correct, pred
            assert not verifier.check(pred, str(n + 1)).correct, pred
        assert not verifier.check(
            f"\\mathbf{{{digits[0]}}} \\mathbf{{{digits[1:]}}}", digits
        ).correct  # spaced: two numbers


def test_a_box_in_a_box_after_a_label_keeps_accuracy_and_format(verifier):
    for n in range(1, 20):
        text = f"### Problem 1\nAnswer1: \\boxed{{\\boxed{{{n}}}}}\n### Problem 2\nAnswer2: \\boxed{{\\boxed{{\\boxed{{{n + 1}}}}}}}\n"
        scored = score_completion(text, [str(n), str(n + 1)], verifier)
        assert scored.breakdown["acc"] == 1.0 and scored.breakdown["fmt"] == 1.0
        assert score_completion(text, [str(n + 1), str(n)], verifier).breakdown["acc"] == 0.0


def test_math_in_text_is_read_one_level_deep(verifier):
    """`\\text{$...$}` inside `\\text{$...$}` would be read again at every level: refused, in one pass."""
    nested = "\\text{$" * 280 + "1" + "$}" * 280
    assert not verifier.check(nested, "1").correct
    assert verifier.check("\\text{$\\frac{1}{2}$}", "\\frac{1}{2}").correct


def test_percent_in_text_unicode_root_and_text_period(verifier):
    """`12\\text{\\%}` is 12%, `√32` the root of 32 (the digits under the sign), a closing `\\text{.}` says nothing."""
    rng = random.Random(RNG_SEED)
    for n in (rng.randrange(2, 10**4) for _ in range(40)):
        for pct in ("\\text{\\%}", "\\text{%}", "\\%"):
            assert verifier.check(f"{n}{pct}", str(n)).correct, pct
            assert not verifier.check(f"{n + 1}{pct}", str(n)).correct, pct
        assert verifier.check(f"√{n}", f"\\sqrt{{{n}}}").correct
        assert not verifier.check(f"√{n + 1}", f"\\sqrt{{{n}}}").correct
        assert verifier.check(f"2√{n}", f"2\\sqrt{{{n}}}").correct
        assert verifier.check(f"{n}\\text{{.}}", str(n)).correct
        assert not verifier.check(f"{n + 1}\\text{{.}}", str(n)).correct
        assert not verifier.check(f"{n}\\text{{. or }}{n + 1}", str(n)).correct


def test_a_spaced_mixed_number_is_the_mixed_number(verifier):
    """TeX drops the space in `2 \\frac{1}{3}`: it renders as `2\\frac{1}{3}`, the mixed number 7/3."""
    rng = random.Random(RNG_SEED)
    for _ in range(40):
        b = rng.randrange(2, 30)
        w, a = rng.randrange(1, 100), rng.randrange(1, b)
        for space in (" ", "\\ ", "\\,"):
            pred = f"{w}{space}\\frac{{{a}}}{{{b}}}"
            assert verifier.check(pred, f"\\frac{{{w * b + a}}}{{{b}}}").correct, pred
            assert not verifier.check(pred, f"\\frac{{{w * b + a + 1}}}{{{b}}}").correct, pred
            assert not verifier.check(pred, f"\\frac{{{w * a}}}{{{b}}}").correct, pred  # never the product


def test_a_negative_percent_is_a_percent(verifier):
    rng = random.Random(RNG_SEED)
    for n in (rng.randrange(1, 10**4) for _ in range(30)):
        for pct in ("\\%", "\\text{\\%}", " \\text{ percent}"):
            pred = f"-{n}{pct}"
            assert verifier.check(pred, f"-{n}").correct, pred
            assert verifier.check(pred, f"-{n / 100}").correct, pred
            assert not verifier.check(pred, str(n)).correct, pred
            assert not verifier.check(pred, f"-{n + 1}").correct, pred
            assert not verifier.check(f"{n}{pct}", f"-{n}").correct, pred


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def test_unicode_superscripts_are_exponents(verifier):
    """`x²`, `2³`, `10⁶`, `10⁻²` are the powers they show; another exponent or base is not."""
    rng = random.Random(RNG_SEED)
    for _ in range(40):
        b, e = rng.randrange(2, 12), rng.randrange(2, 7)
        raised = str(e).translate(SUPERSCRIPT)
        assert verifier.check(f"{b}{raised}", str(b**e)).correct, (b, e)
        assert not verifier.check(f"{b}{raised}", str(b**e + 1)).correct, (b, e)
        assert not verifier.check(f"{b}{raised}", str(-(b**e))).correct, (b, e)
        assert verifier.check(f"x{raised}", f"x^{{{e}}}").correct, e
        assert not verifier.check(f"x{raised}", f"x^{{{e + 1}}}").correct, e
        assert verifier.check(f"{b}x{raised}+1", f"{b}x^{e}+1").correct, (b, e)
        negative = str(-e).translate(SUPERSCRIPT)
        assert verifier.check(f"10{negative}", f"{10.0**-e:.{e}f}").correct, e
        assert not verifier.check(f"10{negative}", f"-{10.0**-e:.{e}f}").correct, e
        assert not verifier.check(f"10{negative}", f"10^{{{e}}}").correct, e
    assert verifier.check("2¹⁰", "1024").correct and not verifier.check("2¹⁰", "1023").correct


def test_a_unicode_root_over_parentheses(verifier):
    """`√(n)` and `√(x+k)` are the roots of what the parentheses hold; a root left open is refused."""
    rng = random.Random(RNG_SEED)
    for n in (rng.randrange(2, 10**4) for _ in range(40)):
        assert verifier.check(f"√({n})", f"\\sqrt{{{n}}}").correct, n
        assert not verifier.check(f"√({n + 1})", f"\\sqrt{{{n}}}").correct, n
        assert verifier.check(f"(√({n})+1)/2", f"\\frac{{1+\\sqrt{{{n}}}}}{{2}}").correct, n
        assert not verifier.check(f"(√({n})-1)/2", f"\\frac{{1+\\sqrt{{{n}}}}}{{2}}").correct, n
        k = n % 9 + 1
        assert verifier.check(f"√(x+{k})", f"\\sqrt{{x+{k}}}").correct, k
        assert not verifier.check(f"√(x+{k + 1})", f"\\sqrt{{x+{k}}}").correct, k
        assert not verifier.check(f"√({n}", f"\\sqrt{{{n}}}").correct, n


def test_a_dollar_sign_in_text_is_a_dollar_sign(verifier):
    """`\\text{\\$}12.50` renders as `\\$12.50`: the same value; a dollar sign alone is no value."""
    rng = random.Random(RNG_SEED)
    for cents in (rng.randrange(1, 10**6) for _ in range(40)):
        amount = f"{cents // 100}.{cents % 100:02d}"
        for sign in ("\\text{\\$}", "\\text{\\$ }", "\\mathrm{\\$}", "\\$"):
            assert verifier.check(f"{sign}{amount}", amount).correct, sign
            assert not verifier.check(f"{sign}{amount}", f"{(cents + 1) // 100}.{(cents + 1) % 100:02d}").correct, sign
            assert not verifier.check(f"{sign}{amount}", f"-{amount}").correct, sign
    assert not verifier.check("\\text{\\$}", "12").correct
