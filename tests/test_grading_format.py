"""Issue 25, format credit: a name echoed from the gold's label (`y` for `y = 2x + 1`, `x_1` for `x_1 = 5`,
`a_{n}`) gives no answer; a name the gold's value is written in does."""

from __future__ import annotations

import pytest

from recipe_bcr.grading.answers.gate import gives_answer
from recipe_bcr.grading.reward import score_completion


@pytest.mark.parametrize(
    "answer,gold,given",
    [
        ("y", "y = 2x + 1", False),
        ("y_{1}", "y = 2x + 1", False),
        ("x_1", "x_1 = 5", False),
        ("x_{\\text{max}}", "x = 5", False),
        ("a_{n}", "a_n = 3n + 1", False),
        ("x_{1}", "2x", False),
        ("n", "a_n = 3n + 1", True),
        ("x", "x", True),
        ("2x + 1", "y = 2x + 1", True),
        ("\\text{(B)}", "B", True),
    ],
)
def test_a_label_echo_is_no_answer(answer, gold, given):
    assert gives_answer(answer, gold) is given


def test_a_label_echo_earns_no_format_in_the_reward(verifier):
    for k in range(1, 10):
        echo = "### Problem 1\nAnswer1: \\boxed{x_{" + str(k) + "}}\n"
        honest = "### Problem 1\nAnswer1: \\boxed{" + str(k) + "}\n"
        assert score_completion(echo, [f"x_{k} = {k}"], verifier).breakdown["score"] == 0.0
        assert score_completion(honest, [f"x_{k} = {k}"], verifier).breakdown["score"] == 3.0
