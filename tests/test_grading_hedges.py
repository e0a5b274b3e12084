"""Issue 36, hedges: several boxes on one answer line (`Answer 2: \\boxed{a}, \\boxed{b}`, with `,` `;` `/`, "or",
"(alternatively ...)") are a hedge unless they state the same value; a hedge is never paid, whichever box holds
the gold. Restating one value (`\\boxed{\\frac{1}{2}}` and `\\boxed{0.5}`) is no hedge, and other problems' labels on
the same line are other answers."""

from __future__ import annotations

import random

import pytest

from recipe_bcr.grading.parse.extract import extract_group
from recipe_bcr.grading.reward import score_completion

RNG_SEED = 36
SEPARATORS = [
    ", ",
    "; ",
    " / ",
    " or ",
    " \\text{ or } ",
    " (alternatively ",
    " (or ",
    ", alternatively ",
    " and ",
    "\\quad ",
    " $ or $ ",
]


def _values(count: int) -> list[tuple[str, str]]:
    """Pairs of different values, as an answer writes them."""
    rng = random.Random(RNG_SEED)
    out = []
    for _ in range(count):
        a = rng.randrange(-50, 200)
        b = a + rng.choice([1, -1, 2, 7, 100])
        out.append(
            rng.choice(
                [
                    (str(a), str(b)),
                    (f"\\frac{{{a}}}{{{abs(b) + 2}}}", f"\\frac{{{b}}}{{{abs(b) + 2}}}"),
                    (f"{a}\\sqrt{{2}}", f"{b}\\sqrt{{2}}"),
                    (f"x = {a}", f"x = {b}"),
                ]
            )
        )
    return out


def _line(first: str, sep: str, second: str) -> str:
    close = ")" if sep.strip().startswith("(") else ""
    return f"\\boxed{{{first}}}{sep}\\boxed{{{second}}}{close}"


@pytest.mark.parametrize("sep", SEPARATORS)
def test_two_different_boxes_on_the_answer_line_are_never_paid(verifier, sep):
    for a, b in _values(12):
        gold_a, gold_b = a.removeprefix("x = "), b.removeprefix("x = ")
        for first, second, gold in ((a, b, gold_a), (b, a, gold_a), (a, b, gold_b)):
            text = f"### Problem 1\nAnswer 1: 5\n### Problem 2\nAnswer 2: {_line(first, sep, second)}\n"
            text = text.replace("Answer 1: 5", "Answer 1: \\boxed{5}")
            scored = score_completion(text, ["5", gold], verifier)
            assert scored.correct == [True, False], text
            assert scored.breakdown["fmt"] == 0.0, text


@pytest.mark.parametrize(
    "layout",
    [
        "Answer 1: {line}\n",
        "**Answer 1:** {line}\n",
        "Answer 1:\n\\[\n{line}\n\\]\n",
        "Answer 1: $ {line} $\n",
        "{line}\n",
    ],
)
def test_a_hedge_is_a_hedge_in_any_layout(verifier, layout):
    for a, b in _values(10):
        gold = a.removeprefix("x = ")
        text = "### Problem 1\n" + layout.format(line=_line(a, ", ", b))
        scored = score_completion(text, [gold], verifier)
        assert not scored.correct[0], text


def test_a_hedge_in_words_after_the_box_is_never_paid(verifier):
    for a, b in _values(20):
        gold = a.removeprefix("x = ")
        for tail in (
            f" (alternatively ${b}$)",
            f" or ${b}$",
            f" (or possibly {b})",
            f", alternatively \\({b}\\)",
            f" (maybe ${b}$)",
        ):
            text = f"### Problem 1\nAnswer 1: \\boxed{{{a}}}{tail}\n"
            assert not score_completion(text, [gold], verifier).correct[0], text


@pytest.mark.parametrize(
    "first,second",
    [("\\frac{1}{2}", "0.5"), ("3", "3"), ("2^{3}", "8"), ("x = 4", "4"), ("\\sqrt{4}", "2"), ("x+1", "1 + x")],
)
def test_the_same_value_twice_is_no_hedge(verifier, first, second):
    gold = second.removeprefix("x = ")
    for sep in (", ", "; ", " or ", " (alternatively "):
        text = f"### Problem 1\nAnswer 1: {_line(first, sep, second)}\n"
        scored = score_completion(text, [gold], verifier)
        assert scored.correct == [True] and scored.breakdown["fmt"] == 1.0, text
    text = f"### Problem 1\nAnswer 1: \\boxed{{{first}}} (or ${second}$)\n"
    assert score_completion(text, [gold], verifier).correct == [True], text


def test_words_after_the_box_that_state_no_value_are_no_hedge(verifier):
    for tail in (
        " or so I believe.",
        " (alternatively, by symmetry)",
        ", which is the answer.",
        " and we are done",
        " (the answer is \\boxed{12} as computed)",
    ):
        text = f"### Problem 1\nAnswer 1: \\boxed{{12}}{tail}\n### Problem 2\nAnswer 2: \\boxed{{7}}"
        scored = score_completion(text, ["12", "7"], verifier)
        assert scored.correct == [True, True] and scored.breakdown["fmt"] == 1.0, text


def test_other_problems_labels_on_the_same_line_are_other_answers(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(20):
        a, b, c = (str(rng.randrange(1, 999)) for _ in range(3))
        text = f"Answer 1: \\boxed{{{a}}}, Answer 2: \\boxed{{{b}}}; Answer 3: \\boxed{{{c}}}\n"
        assert score_completion(text, [a, b, c], verifier).correct == [True, True, True], text


def test_a_second_box_on_a_later_line_is_not_on_the_answer_line():
    text = "### Problem 1\nAnswer 1: \\boxed{3}\nWe checked that \\boxed{5} is not a root.\n"
    assert extract_group(text, 1).answers == ["3"]


def test_a_hedged_problem_takes_no_box_by_position():
    text = "Answer 1: \\boxed{3}, \\boxed{5}\nAnswer 2: \\boxed{7}\n"
    assert [p.candidates for p in extract_group(text, 2).problems] == [("3", "5"), ("7",)]


def test_boxes_by_position_for_several_problems_on_one_line_are_no_hedge():
    assert extract_group("\\boxed{3}, \\boxed{5}", 2).answers == ["3", "5"]
