"""Issue 25, digit grouping: the marks TeX writes between groups of exactly three digits (`\\,`, `~`, `{,}`,
`\\!`, `\\ `) make one number; any other grouping is refused, never read as the digits run together."""

from __future__ import annotations

import random

import pytest

from recipe_bcr.grading.reward import score_completion

MARKS = ["\\,", "~", "{,}", "\\!", ",\\!", "\\ ", ",", " ", "\u2009", "\u202f"]  # the last two: thin, narrow no-break space


def _grouped(n: int, mark: str) -> str:
    return mark.join(f"{n:,}".split(","))


@pytest.mark.parametrize("mark", MARKS)
def test_groups_of_three_are_one_number(verifier, mark):
    rng = random.Random(hash(mark) % 1000)
    for n in (rng.randrange(1000, 10**12) for _ in range(60)):
        pred = _grouped(n, mark)
        assert verifier.check(pred, str(n)).correct, pred
        assert not verifier.check(pred, str(n + 1)).correct, pred


@pytest.mark.parametrize("mark", ["\\,", "~", "\\!"])
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
