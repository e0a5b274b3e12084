"""Issue 25, digit grouping: the marks TeX writes between groups of exactly three digits (`\\,`, `~`, `{,}`,
`\\!`, `\\ `) make one number; any other grouping is refused, never read as the digits run together."""

from __future__ import annotations

import random

import pytest

from recipe_bcr.grading.reward import score_completion

MARKS = ["\\,", "~", "{,}", "\\!", ",\\!", "\\ ", ",", " ", "\u2009", "\u202f", "{\\ }", "{\\,}", "{~}"]
# "\u2009", "\u202f": thin and narrow no-break space; the last three: TeX spacing in braces (`7{\ }768{\ }974`)


def _grouped(n: int, mark: str) -> str:
    return mark.join(f"{n:,}".split(","))


@pytest.mark.parametrize("mark", MARKS)
def test_groups_of_three_are_one_number(verifier, mark):
    rng = random.Random(hash(mark) % 1000)
    for n in (rng.randrange(1000, 10**12) for _ in range(60)):
        pred = _grouped(n, mark)
        assert verifier.check(pred, str(n)).correct, pred
        assert not verifier.check(pred, str(n + 1)).correct, pred


@pytest.mark.parametrize("mark", ["\\,", "~", "\\!", "{\\ }"])
def test_other_groupings_are_refused(verifier, mark):
    rng = random.Random(7)
    for n in (rng.randrange(10**4, 10**9) for _ in range(40)):
        digits = str(n)
        for size in (2, 4):
            pred = mark.join(digits[i : i + size] for i in range(0, len(digits), size))
            assert not verifier.check(pred, digits).correct, pred


def test_marked_groups_inside_brackets(verifier):
    assert verifier.check("(1\\,234, 5)", "(1234, 5)").correct
    assert verifier.check("(12,345)", "(12, 345)").correct  # a plain comma in a bracket separates elements
    assert not verifier.check("(12,345)", "12345").correct


def test_a_grouped_answer_earns_accuracy_and_format(verifier):
    text = "### Problem 1\nAnswer1: \\boxed{1\\,234\\,567}\n"
    assert score_completion(text, ["1234567"], verifier).breakdown["score"] == 3.0


DECIMAL_MARKS = ["\\,", "~", "\\!", "\\ ", "\u2009", "\u202f", "{\\ }", "{\\,}"]


def _decimal_grouped(digits: str, mark: str) -> str:
    """`0.000\\,1`: the digits after the point in groups of three from the point, the last maybe shorter."""
    return mark.join(digits[i : i + 3] for i in range(0, len(digits), 3))


@pytest.mark.parametrize("mark", DECIMAL_MARKS)
def test_groups_of_three_after_the_decimal_point(verifier, mark):
    rng = random.Random(DECIMAL_MARKS.index(mark))
    for _ in range(40):
        whole, frac = rng.randrange(0, 100), f"{rng.randrange(1, 10**9):0{rng.randrange(4, 10)}d}"
        pred = f"{whole}.{_decimal_grouped(frac, mark)}"
        assert verifier.check(pred, f"{whole}.{frac}").correct, pred
        assert not verifier.check(pred, f"{whole}.{frac[:-1]}{(int(frac[-1]) + 1) % 10}").correct, pred
        assert not verifier.check(f"-{pred}", f"{whole}.{frac}").correct, pred
    assert verifier.check(f"0.000{mark}1", "0.0001").correct
    assert not verifier.check(f"0.0001{mark}5", "0.00015").correct  # a first group of four is no grouping
    assert not verifier.check(f"0.12{mark}3", "0.123").correct
