"""Extraction rules of issue 10: linear scans, boxes that swallowed later sections, format only for an answer."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from recipe_bcr.grading.parse.extract import extract_group, is_placeholder
from recipe_bcr.grading.reward import score_completion

GOLDS = ["5", "7", "9"]


def _group(*answers: str) -> str:
    return "".join(f"### Problem {i}\nwork\nAnswer{i}: \\boxed{{{a}}}\n" for i, a in enumerate(answers, start=1))


# -- every scan is linear in the completion --------------------------------------------------------
# each input built at size n
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "spaces after a header": lambda n: "### Problem" + " " * n + "x",
    "tabs after a header and stars": lambda n: ("## **" + " \t" * n) * 2,
    "spaces after a label": lambda n: "Answer 1" + " " * n + "x",
    "spaces after a label and colon": lambda n: "Answer 1 **:" + " \n" * n + "x",
    "spaces between boxed and brace": lambda n: ("\\boxed" + " " * 3000) * n,
    "nested open labels": lambda n: "Answer1: \\boxed{" * n,
    "nested closed labels": lambda n: "Answer1: \\boxed{" * n + "5" + "}" * n,
    "boxes in boxes": lambda n: "\\boxed{" * n + "5" + "}" * n,
    "a long hidden box": lambda n: "Answer1: \\boxed{\\phantom{" + "{" * n + "}" * n + "}}",
    "hedged labels on one line": lambda n: "Answer 1: \\boxed{1}, \\boxed{2} " * n,
    "one label, many boxes on its line": lambda n: "Answer 1: \\boxed{1}" + ", \\boxed{1}" * n,
    "hedge words after a box": lambda n: "Answer 1: \\boxed{1}" + " or (alternatively" * n,
    "separators between two boxes": lambda n: "\\boxed{1}" + ", ;" * n + "\\boxed{2}",
    "display math openings after a label": lambda n: "Answer 1:" + " \\begin{equation}" * n + "\\boxed{1}",
    "an unclosed think block": lambda n: "<think>" + "Answer 1: \\boxed{1}\n" * n,
    "closers after a value": lambda n: "Answer 1: \\boxed{1} or 1" + ")" * n,
    "values offered after a box": lambda n: "Answer 1: \\boxed{1}" + " or 2" * n,
    "revisions after a box": lambda n: "Answer 1: \\boxed{1}" + " Actually, the answer is 2." * n,
    "returns to a problem": lambda n: "### Problem 1\n\\boxed{1}\n" + "back to problem 1: \\boxed{2} " * n,
    "words between two boxes": lambda n: "\\boxed{1}" + " or maybe" * n + " \\boxed{2}",
}
TIMED_CPU_S = 0.02  # an extraction this long is timed well above the clock's noise


@contextmanager
def _no_gc() -> Iterator[None]:
    """No collection pauses (whose cost depends on the whole heap) inside the timings."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cpu_s(text: str) -> float:
    """This thread's CPU time for one extraction: the time other processes hold the cores is not in it."""
    t0 = time.thread_time()
    extract_group(text, 3)
    return time.thread_time() - t0


def _cpu_growth(build: Callable[[int], str], repeats: int = 5) -> tuple[float, int]:
    """The CPU time of the input at size 2n over that at n, and n: the first size, doubling from 1, that
    takes TIMED_CPU_S, so a quadratic scan is caught at a small size, in seconds rather than the hours it
    would take on a few hundred thousand characters. Each size is timed at its fastest of interleaved runs."""
    with _no_gc():
        n = 1
        while _cpu_s(build(n)) < TIMED_CPU_S:
            n *= 2
        sizes = (build(n), build(2 * n))
        best = [float("inf")] * 2
        for _ in range(repeats):
            for i, text in enumerate(sizes):
                best[i] = min(best[i], _cpu_s(text))
    return best[1] / best[0], n


@pytest.mark.timing
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_extraction_is_linear_on_adversarial_text(name):
    """Twice the text takes twice the CPU time, where a quadratic scan takes four times."""
    growth, n = _cpu_growth(ADVERSARIAL[name])
    assert growth < 3.0, f"CPU time grew {growth:.2f}x from n={n} to twice that"
    # never a copy of the text per nested box: peak memory grows linearly (2x at twice the text; a copy per
    # box makes it 4x). A ratio, because n follows the CPU's speed: under load n doubles, and a fixed
    # bytes-per-character bound failed there on a linear 56 bytes per character.
    small, large = (_peak_bytes(ADVERSARIAL[name](k * n)) for k in (1, 2))
    assert large < 3 * small + 1_000_000, f"peak memory grew {large / max(small, 1):.2f}x from n={n} to twice that"


def _peak_bytes(text: str) -> int:
    tracemalloc.start()
    extract_group(text, 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


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
    "answer",
    [
        "0",
        "x",
        "A",
        "\\infty",
        "\\emptyset",
        "\\{\\}",
        "\\varnothing",
        "\\text{No solution}",
        "\\text{none}",
        "-1",
        "\\pi",
    ],
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
    assert b["n_correct"] == 1 and b["fmt"] == 0  # and no format: the tree reads neither (issue 25)


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
