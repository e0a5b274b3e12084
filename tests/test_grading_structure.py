"""Issue 25, structure: an interval and the inequality (or chain) that states it answer each other;
`\\pm a` is the list `-a, a`; `\\mathbb{R}` is `(-\\infty, \\infty)`; `x \\in I` states `I`; a list of
solution tuples is unordered. A changed bound, bracket, sign or element is wrong."""

from __future__ import annotations

import random

import pytest

_OP = {"[": "\\le", "(": "<", "]": "\\le", ")": "<"}
_FLIPPED = {"[": "(", "(": "[", "]": ")", ")": "]"}


def _bounds(count: int) -> list[tuple[int, int]]:
    rng = random.Random(25)
    out = []
    for _ in range(count):
        a = rng.randrange(-50, 50)
        out.append((a, a + rng.randrange(1, 40)))
    return out


@pytest.mark.parametrize("left,right", [("[", "]"), ("(", "]"), ("[", ")"), ("(", ")")])
def test_a_chain_of_inequalities_is_its_interval(verifier, left, right):
    for a, b in _bounds(25):
        interval = f"{left}{a}, {b}{right}"
        chain = f"{a} {_OP[left]} x {_OP[right]} {b}"
        reverse = chain.replace("\\le", "\\ge").replace("<", ">")
        reverse = f"{b} {_OP[right].replace('le', 'ge').replace('<', '>')} x {_OP[left].replace('le', 'ge').replace('<', '>')} {a}"
        for pred, gold in ((chain, interval), (interval, chain), (reverse, interval), (f"x \\in {interval}", interval)):
            assert verifier.check(pred, gold).correct, (pred, gold)
        assert not verifier.check(chain, f"{_FLIPPED[left]}{a}, {b}{right}").correct
        assert not verifier.check(chain, f"{left}{a}, {b + 1}{right}").correct
        assert not verifier.check(f"{a} {_OP[left]} y {_OP[right]} {b}", f"{left}{a}, {b + 1}{right}").correct


def test_one_sided_inequalities_are_rays(verifier):
    for a, _ in _bounds(25):
        cases = [
            (f"x \\ge {a}", f"[{a}, \\infty)"),
            (f"x > {a}", f"({a}, \\infty)"),
            (f"x \\le {a}", f"(-\\infty, {a}]"),
            (f"x < {a}", f"(-\\infty, {a})"),
            (f"{a} \\le x", f"[{a}, +\\infty)"),
        ]
        for inequality, ray in cases:
            assert verifier.check(inequality, ray).correct, (inequality, ray)
            assert verifier.check(ray, inequality).correct, (ray, inequality)
        assert not verifier.check(f"x > {a}", f"[{a}, \\infty)").correct
        assert not verifier.check(f"x \\ge {a}", f"(-\\infty, {a}]").correct
    assert verifier.check("x \\ge a", "[a, \\infty)").correct


def test_the_real_line(verifier):
    assert verifier.check("(-\\infty, \\infty)", "\\mathbb{R}").correct
    assert verifier.check("\\mathbb{R}", "(-\\infty, +\\infty)").correct
    assert verifier.check("x \\in \\mathbb{R}", "\\mathbb{R}").correct
    assert not verifier.check("\\mathbb{R}", "(0, \\infty)").correct
    assert not verifier.check("(-\\infty, 0)", "\\mathbb{R}").correct


def test_plus_minus_is_the_list_of_both(verifier):
    for a in range(1, 40):
        for gold in (f"-{a}, {a}", f"{a}, -{a}", f"\\{{-{a}, {a}\\}}"):
            assert verifier.check(f"\\pm {a}", gold).correct, gold
            assert verifier.check(gold, f"\\pm {a}").correct, gold
            assert not verifier.check(f"\\pm {a + 1}", gold).correct
        assert verifier.check(f"\\pm\\sqrt{{{a + 1}}}", f"-\\sqrt{{{a + 1}}}, \\sqrt{{{a + 1}}}").correct
        assert not verifier.check(f"\\pm {a}", str(a)).correct  # a hedge against one value


def test_solution_tuples_in_any_order(verifier):
    rng = random.Random(5)
    for _ in range(40):
        tuples = [(rng.randrange(-9, 10), rng.randrange(-9, 10)) for _ in range(rng.randrange(2, 5))]
        if len(set(tuples)) != len(tuples):
            continue
        gold = ", ".join(f"({a}, {b})" for a, b in tuples)
        shuffled = tuples[:]
        rng.shuffle(shuffled)
        pred = ", ".join(f"({a},{b})" for a, b in shuffled)
        assert verifier.check(pred, gold).correct, (pred, gold)
        assert verifier.check(f"\\{{{pred}\\}}", gold).correct
        a, b = shuffled[0]
        if a != b:
            swapped = ", ".join(f"({x},{y})" for x, y in [(b, a), *shuffled[1:]])
            assert not verifier.check(swapped, gold).correct, (swapped, gold)
        assert not verifier.check(", ".join(f"({a},{b})" for a, b in shuffled[1:]), gold).correct


def test_a_plus_minus_gold_is_answered_by_its_list_in_any_spelling(verifier):
    rng = random.Random(25)
    for a in (rng.randrange(1, 10**4) for _ in range(25)):
        for gold in (f"\\pm {a}", f"x = \\pm {a}", f"1 \\pm \\sqrt{{{a}}}"):
            root = "sqrt" in gold
            lo, hi = (f"1 - \\sqrt{{{a}}}", f"1 + \\sqrt{{{a}}}") if root else (f"-{a}", f"{a}")
            near = f"1 + \\sqrt{{{a + 1}}}" if root else f"{a + 1}"
            for form in (
                "{} \\text{{ or }} {}",
                "x = {} \\text{{ or }} x = {}",
                "x = {}, x = {}",
                "{}, {}",
                "{} \\text{{ and }} {}",
            ):
                assert verifier.check(form.format(lo, hi), gold).correct, (form, gold)
                assert verifier.check(form.format(hi, lo), gold).correct, (form, gold)
                assert not verifier.check(form.format(lo, near), gold).correct, (form, gold)
                assert not verifier.check(form.format(hi, hi), gold).correct, (form, gold)
            assert not verifier.check(hi, gold).correct, gold  # one of the two is not the list


def test_a_comma_in_text_separates_a_list(verifier):
    rng = random.Random(26)
    for a, b in (sorted(rng.sample(range(-50, 50), 2)) for _ in range(25)):
        for sep in ("\\text{, }", "\\text{,}\\ ", "\\text{ , }"):
            assert verifier.check(f"x = {a}{sep}x = {b}", f"{a}, {b}").correct, sep
            assert not verifier.check(f"x = {a}{sep}x = {b + 1}", f"{a}, {b}").correct, sep
            assert verifier.check(f"({a}{sep}{b})", f"({a}, {b})").correct, sep
            assert not verifier.check(f"({b}{sep}{a})", f"({a}, {b})").correct, sep
