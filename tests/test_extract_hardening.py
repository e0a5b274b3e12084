"""Extraction rules of issue 10: linear scans, boxes that swallowed later sections, format only for an answer."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from recipe_bcr.grading.parse.extract import extract_group, is_placeholder
from recipe_bcr.grading.reward import score_completion

GOLDS = ["5", "7", "9"]


def _group(*answers: str) -> str:
    return "".join(f"### Problem {i}\nwork\nAnswer{i}: \\boxed{{{a}}}\n" for i, a in enumerate(answers, start=1))


# -- every scan is linear in the completion --------------------------------------------------------
# each input at size k (k = 1 is a few hundred thousand characters)
ADVERSARIAL = {
    "spaces after a header": lambda k: "### Problem" + " " * 300_000 * k + "x",
    "tabs after a header and stars": lambda k: ("## **" + " \t" * 100_000 * k) * 2,
    "spaces after a label": lambda k: "Answer 1" + " " * 300_000 * k + "x",
    "spaces after a label and colon": lambda k: "Answer 1 **:" + " \n" * 300_000 * k + "x",
    "spaces between boxed and brace": lambda k: ("\\boxed" + " " * 3000) * 100 * k,
    "nested open labels": lambda k: "Answer1: \\boxed{" * 20_000 * k,
    "nested closed labels": lambda k: "Answer1: \\boxed{" * 20_000 * k + "5" + "}" * 20_000 * k,
    "boxes in boxes": lambda k: "\\boxed{" * 50_000 * k + "5" + "}" * 50_000 * k,
    "a long hidden box": lambda k: "Answer1: \\boxed{\\phantom{" + "{" * 100_000 * k + "}" * 100_000 * k + "}}",
}


def _time_ratio(small: str, large: str, repeats: int = 3) -> float:
    """Time of `large` over time of `small`, runs interleaved so that whatever else loads the
    machine weighs on both sizes alike."""
    totals = [0.0, 0.0]
    for _ in range(repeats):
        for i, text in enumerate((small, large)):
            t0 = time.perf_counter()
            extract_group(text, 3)
            totals[i] += time.perf_counter() - t0
    return totals[1] / totals[0]


@pytest.mark.timing
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_extraction_is_linear_on_adversarial_text(name):
    """Four times the text takes about four times the time (a quadratic scan takes sixteen times, and
    minutes at these sizes; the bound is their geometric middle); timed within one run, so a loaded
    machine slows both sizes alike."""
    small, large = ADVERSARIAL[name](1), ADVERSARIAL[name](4)
    ratio = _time_ratio(small, large)
    assert ratio < 8.0, f"time grew {ratio:.2f}x for 4x the text"
    tracemalloc.start()
    extract_group(small, 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * len(small) + 10_000_000  # never a copy of the text per nested box


def test_nested_labels_read_only_the_innermost_box():
    text = "Answer1: \\boxed{" * 2000 + "5" + "}" * 2000
    assert extract_group(text, 1).answers == ["5"]


# -- a box that never closed where it should have is no box ----------------------------------------
def test_a_never_closed_box_does_not_swallow_the_next_sections():
    text = (
        "### Problem 1\nAnswer1: \\boxed{12\n"
        "### Problem 2\nAnswer2: \\boxed{5}\n"
        "### Problem 3\nAnswer3: \\boxed{5}}\n"  # the stray brace would close problem 1's box
    )
    ex = extract_group(text, 3)
    assert ex.answers == [None, "5", "5"] and not ex.format_ok
    assert extract_group(text.replace("{12\n", "{12}\n"), 3).answers == ["12", "5", "5"]


def test_a_box_holding_another_box_pays_nothing_for_its_inner_box(verifier):
    text = "### Problem 1\nAnswer1: \\boxed{3 or maybe \\boxed{5}} \n"
    b = score_completion(text, ["5"], verifier).breakdown
    assert b["acc"] == 0


def test_a_box_that_holds_only_a_box_is_that_box():
    assert extract_group("### Problem 1\nAnswer1: \\boxed{\\boxed{5}}", 1).answers == ["5"]


# -- format means an answer was given --------------------------------------------------------------
PLACEHOLDERS = [
    "",
    " ",
    "\\,",
    "\\;\\quad\\!",
    "~",
    "\\phantom{5}",
    "\\hphantom{xx}\\vphantom{y}",
    "\\hspace{1cm}",
    "\\text{}",
    "\\text{ }",
    "\\mbox{}",
    "\\text{...}",
    "\\ldots",
    "?",
    "??",
    "\\square",
    "\\Box",
    "\\blacksquare",
    "[answer]",
    "\\mathrm{Answer}",
    "\\text{Your answer here}",
    "\\text{Final Answer}",
    "\\underline{\\qquad}",
    "\\_\\_\\_",
    "\\rule{2cm}{0.4pt}",
    "\\boxed{}",
    "\u200b",
    "N/A",
    "TBD",
]


@pytest.mark.parametrize("fill", PLACEHOLDERS)
def test_placeholder_boxes_earn_no_format(verifier, fill):
    b = score_completion(_group(fill, fill, fill), GOLDS, verifier).breakdown
    assert b["fmt"] == 0 and b["answered"] == 0 and b["score"] == 0


@pytest.mark.parametrize(
    "answer", ["0", "x", "A", "\\infty", "\\emptyset", "\\{\\}", "\\varnothing", "\\text{No solution}", "\\text{none}", "-1", "\\pi"]
)
def test_short_honest_answers_keep_format(answer):
    assert not is_placeholder(answer)
    ex = extract_group(_group(answer, answer, answer), 3)
    assert ex.format_ok and ex.answers == [answer] * 3


def test_a_box_longer_than_any_answer_is_no_answer():
    assert is_placeholder("1" * 2001) and not is_placeholder("1" * 2000)


# -- invisible characters --------------------------------------------------------------------------
def test_invisible_characters_inside_a_boxed_number_earn_no_accuracy(verifier):
    b = score_completion(_group("5\u200b", "7\u0336", "9"), GOLDS, verifier).breakdown
    assert b["n_correct"] == 1 and b["fmt"] == 1


@pytest.mark.timing
def test_one_long_completion_does_not_hold_up_other_threads():
    """Indexing a long completion in one reward thread must not make the others wait (a class-wide
    lock, as functools.cached_property takes before Python 3.12, would): small extractions keep
    finishing all along the long one, none waiting for a large part of it."""
    import threading

    big = "Answer1: \\boxed{" + "{" * 3_000_000
    done = threading.Event()

    def index_big():
        extract_group(big, 3)
        done.set()

    thread = threading.Thread(target=index_big)
    t0 = time.monotonic()
    thread.start()
    slowest, rounds = 0.0, 0
    while not done.is_set():  # small extractions all along the long one
        t1 = time.monotonic()
        small = extract_group(_group("5", "7", "9"), 3)
        slowest = max(slowest, time.monotonic() - t1)
        rounds += 1
    thread.join()
    whole = time.monotonic() - t0
    assert small.answers == ["5", "7", "9"]
    assert rounds > 10 and slowest < whole / 5, (rounds, slowest, whole)
