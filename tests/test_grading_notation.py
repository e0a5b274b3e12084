"""Issue 53, class 4: numbers and expressions in notations of their own. Repeating decimals marked with dots, sums and
products to a symbolic bound (whose index is bound, not an unknown), functions defined in different variable names,
`\\pm` inside a tuple, a ratio of names as the left side of an equation, letters in text and in math, `\\odot`. Each
rule holds for several spellings; a different value is never the answer."""

from __future__ import annotations

import pytest

SAME = [
    # repeating decimals: dots over the first and the last repeating digit
    ("\\frac{4}{33}", "0.\\dot{1}\\dot{2}"),
    ("\\frac{41}{333}", "0.\\dot{1}2\\dot{3}"),
    ("\\frac{61}{495}", "0.1\\dot{2}\\dot{3}"),
    ("\\frac{1}{7}", "0.\\dot{1}4285\\dot{7}"),
    ("0.\\overline{12}", "0.\\dot{1}\\dot{2}"),
    ("\\frac{1}{3}", "0.\\dot{3}"),
    ("\\frac{37}{30}", "1.2\\dot{3}"),
    ("\\frac{1}{3}", "0.(3)"),
    ("\\frac{4}{33}", "0.(12)"),
    ("\\frac{1}{6}", "0.1(6)"),
    # sums and products to a symbolic bound: the index is bound, whatever its name
    ("\\frac{n(n+1)}{2}", "\\sum_{k=1}^{n} k"),
    ("\\frac{n(n+1)}{2}", "\\sum_{i=1}^{n} i"),
    ("\\frac{n(n+1)}{2}", "\\sum_{j=1}^{n} j"),
    ("\\frac{n(n+1)(2n+1)}{6}", "\\sum_{m=1}^{n} m^2"),
    ("n!", "\\prod_{k=1}^{n} k"),
    ("n!", "\\prod_{i=1}^{n} i"),
    ("\\sum_{k=1}^{n} k", "\\sum_{i=1}^{n} i"),
    ("2^{n+1} - 1", "\\sum_{k=0}^{n} 2^k"),
    ("n^2", "\\sum_{i=0}^{n-1} (2i+1)"),
    ("\\frac{n}{n+1}", "\\sum_{j=1}^{n} \\frac{1}{j(j+1)}"),
    ("n+1", "\\prod_{k=1}^{n} \\frac{k+1}{k}"),
    # functions equal up to their variable's name
    ("f(x) = x", "f(z) = z"),
    ("f(x) = x^2 + 1", "f(t) = t^2 + 1"),
    ("f(x)=2x", "f(y) = 2y"),
    ("g(x) = \\frac{1}{x}", "g(u) = \\frac{1}{u}"),
    ("f(x) = x + 1", "f(t) = 1 + t"),
    ("h(x) = \\sin x", "h(\\theta) = \\sin \\theta"),
    ("f(n) = 2^n", "f(k) = 2^k"),
    # \pm inside a tuple: the tuples it stands for
    ("(\\pm 1, 2)", "(1, 2), (-1, 2)"),
    ("(\\pm 1, 2)", "(-1, 2), (1, 2)"),
    ("(1, \\pm 2)", "(1, 2), (1, -2)"),
    ("(1, 2), (-1, 2)", "(\\pm 1, 2)"),
    ("\\{(1, 2), (-1, 2)\\}", "(\\pm 1, 2)"),
    ("(\\pm 1, \\pm 2)", "(1, 2), (1, -2), (-1, 2), (-1, -2)"),
    ("(3 \\pm 1, 0)", "(2, 0), (4, 0)"),
    ("(\\pm \\sqrt{2}, 1)", "(\\sqrt{2}, 1), (-\\sqrt{2}, 1)"),
    # a ratio of names as the left side of an equation
    ("\\frac{1}{s+1}", "\\frac{V_o(s)}{V_i(s)} = \\frac{1}{s+1}"),
    ("\\frac{V_o(s)}{V_i(s)} = \\frac{1}{s+1}", "\\frac{1}{s+1}"),
    ("\\frac{V_o(s)}{V_i(s)} = \\frac{1}{s+1}", "\\frac{V_o(s)}{V_i(s)} = \\frac{1}{1+s}"),
    ("2x", "\\frac{dy}{dx} = 2x"),
    ("\\frac{3}{4}", "\\frac{a}{b} = \\frac{3}{4}"),
    ("\\frac{1}{s^2+1}", "G(s) = \\frac{Y(s)}{X(s)} = \\frac{1}{s^2+1}"),
    ("2x", "\\frac{\\partial f}{\\partial x} = 2x"),
    # letters in text and in math
    ("\\text{A}=\\text{B}", "A=B"),
    ("A=B", "\\text{A}=\\text{B}"),
    ("\\mathrm{A} = \\mathrm{B}", "A = B"),
    ("AB = CD", "\\text{AB} = \\text{CD}"),
    ("\\text{AB} = \\text{CD}", "AB = CD"),
    # \odot: an operator, and the Sun's mark on a name
    ("a \\odot b", "a \\odot b"),
    ("a \\odot b", "a\\odot b"),
    ("a \\odot b", "a ⊙ b"),
    ("1.4 M_\\odot", "1.4 M_{\\odot}"),
]

DIFFERENT = [
    ("\\frac{4}{33}", "0.\\dot{1}2"),
    ("\\frac{1}{3}", "0.\\dot{1}\\dot{2}"),
    ("\\frac{41}{333}", "0.\\dot{1}\\dot{2}\\dot{3}4"),
    ("\\frac{n(n+1)}{2}", "\\sum_{k=1}^{n} k^2"),
    ("\\frac{n(n+1)}{2}", "\\sum_{k=0}^{n+1} k"),
    ("n!", "\\prod_{k=2}^{n} k^2"),
    ("f(x) = x^2 + 1", "f(t) = t^2 + 2"),
    ("f(x) = x", "f(z) = x"),
    ("f(x) = 2x", "f(x, y) = 2y"),
    ("(\\pm 1, 2)", "(1, 2)"),
    ("(\\pm 1, 2)", "(1, 2), (-1, -2)"),
    ("(1, 2), (-1, 2)", "(\\pm 1, \\pm 2)"),
    ("\\frac{V_o(s)}{V_i(s)} = \\frac{1}{s+1}", "\\frac{1}{s+2}"),
    ("\\frac{1}{s+1}", "\\frac{V_o(s)}{V_i(s)} = \\frac{1}{s+2}"),
    ("\\text{A}=\\text{B}", "A=C"),
    ("AB = CD", "\\text{AB} = \\text{DC}"),
    ("AB = CD", "\\text{ABCD}"),
    ("\\frac{1}{3}", "0.(4)"),
    ("\\frac{1}{s^2+1}", "G(s) = \\frac{Y(s)}{X(s)} = \\frac{1}{s^2+2}"),
    ("a \\odot b", "a \\cdot b"),
    ("a \\odot b", "ab"),
]


@pytest.mark.parametrize("gold,pred", SAME)
def test_one_value_in_two_notations_is_one_answer(verifier, gold, pred):
    assert verifier.check(pred, gold).correct


@pytest.mark.parametrize("gold,pred", DIFFERENT)
def test_a_different_value_never_scores(verifier, gold, pred):
    assert not verifier.check(pred, gold).correct
