"""Issue 53, one answer policy: training's reward (compute_score), the TRL callable and the evaluation harness read
an answer with one function, and a problem's answer is what its text finally commits to: a revision replaces what
it revises, alternatives anywhere in the problem's answer zone earn nothing (a restatement of the same value is no
alternative), labels in any common spelling and "back to Problem i" say whose a box is, and a box under a bare
label in display math is in the format. Each rule is tested in several spellings."""

from __future__ import annotations

import pytest

from recipe_bcr.data.eval_tasks import Task
from recipe_bcr.data.schema import Problem
from recipe_bcr.engines.base import Generation
from recipe_bcr.eval.scoring import score_sample
from recipe_bcr.grading.parse.extract import extract_group
from recipe_bcr.grading.reward import score_completion
from reward_fns.bcr import compute_score, trl_reward

HEAD = "### Problem 1\nwork\nAnswer 1: \\boxed{7}\n\n### Problem 2\nwork\n"  # problem 1 is answered, 7


def _score(verifier, text: str, golds: list[str]):
    return score_completion(text, golds, verifier)


def _pays(verifier, tail: str, gold: str) -> bool:
    """Whether problem 2 of HEAD + tail is paid against `gold` (problem 1 must stay paid)."""
    scored = _score(verifier, HEAD + tail, ["7", gold])
    assert scored.correct[0], HEAD + tail
    return scored.correct[1]


def _offsets(text: str, **_: object) -> dict[str, list[tuple[int, int]]]:
    """A tokenizer of one character per token (the evaluation's token attribution needs one)."""
    return {"offset_mapping": [(i, i + 1) for i in range(len(text))]}


def _evaluation_verdicts(verifier, text: str, golds: list[str]) -> list[bool]:
    """The evaluation harness's per-problem verdicts (the paper's single-problem prompt for N=1)."""
    problems = tuple(Problem(f"p{i}", "q", (g,)) for i, g in enumerate(golds))
    task = Task("bench", len(golds), 0, problems, (True,) * len(golds), "single" if len(golds) == 1 else "group")
    record = score_sample(
        task, 0, Generation(text, None, "stop", len(text)), verifier, _offsets, thinking=False, markers=[], seed=0
    )
    return [p["correct"] for p in record["problems"]]


# (completion, golds, the verdicts a reader of the completion gives)
LAYOUTS = [
    ("We find \\boxed{4} for the discriminant, so x = \\boxed{3}.", ["3"], [True]),
    ("We find \\boxed{4} for the discriminant, so x = \\boxed{3}.", ["4"], [False]),
    ("Answer 1: \\boxed{4}\n\nActually, the correct value is \\boxed{3}.", ["3"], [True]),
    ("Answer 1: \\boxed{4}\n\nActually, the correct value is \\boxed{3}.", ["4"], [False]),
    ("The answer is \\boxed{3}, \\boxed{4}.", ["3"], [False]),
    ("The answer is \\boxed{3} (4 is also possible).", ["3"], [False]),
    ("The answer is \\boxed{\\frac{1}{5}}, or as a decimal, 0.2.", ["1/5"], [True]),
    (HEAD + "Answer 2: \\boxed{5}\nWait, that is wrong: the answer is \\boxed{6}.", ["7", "6"], [True, True]),
    (HEAD + "Answer 2: \\boxed{5}\nWait, that is wrong: the answer is \\boxed{6}.", ["7", "5"], [True, False]),
    (
        HEAD + "either 4 or \\boxed{5}\n\n### Problem 3\n\\boxed{1} then \\boxed{2}",
        ["7", "5", "2"],
        [True, False, True],
    ),
    ("\\boxed{1} and \\boxed{2} and \\boxed{3}", ["1", "2", "3"], [True, True, True]),
    ("Answer 2: \\boxed{2}\nAnswer 1: \\boxed{1}\nAnswer 1 (revised): \\boxed{9}", ["9", "2"], [True, True]),
]


@pytest.mark.parametrize("text,golds,verdicts", LAYOUTS)
def test_training_trl_and_evaluation_give_the_same_verdicts(verifier, text, golds, verdicts):
    n = len(golds)
    breakdown = compute_score("bench", text, golds, {"n": n})
    training = [bool(int(breakdown["correct_bits"]) >> i & 1) for i in range(n)]
    assert training == _evaluation_verdicts(verifier, text, golds) == verdicts, text
    assert trl_reward([text], solution=[golds], n=[n]) == [breakdown["score"]]


# -- class 1: a revision replaces what it revises; a taken-back answer never earns ------------------------------
REVISIONS = [
    "Actually, the correct value is {new}.",
    "Wait, I made a mistake: the answer should be {new}.",
    "Correction: the answer is {new}.",
    "On second thought, the value is {new}.",
    "Oops, that was wrong. Let me recompute: it's {new}.",
    "Let me reconsider.\nThe final answer is {new}.",
]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("new", ["\\boxed{3}", "$3$", "3", "\\(3\\)"])
@pytest.mark.parametrize("gap", ["\n", "\n\n", " "])
def test_a_revision_replaces_what_it_revises(verifier, revision, new, gap):
    tail = "Answer 2: \\boxed{4}" + gap + revision.format(new=new) + "\n"
    assert _pays(verifier, tail, "3"), tail
    assert not _pays(verifier, tail, "4"), tail


@pytest.mark.parametrize("note", ["revised", "corrected", "final", "Revised answer"])
def test_a_label_that_says_it_revises_replaces_the_earlier_label(verifier, note):
    tail = f"Answer 2: \\boxed{{4}}\nhmm\nAnswer 2 ({note}): \\boxed{{3}}\n"
    assert _pays(verifier, tail, "3") and not _pays(verifier, tail, "4"), tail


def test_two_labelled_answers_nothing_revises_are_a_hedge(verifier):
    tail = "Answer 2: \\boxed{4}\nso\nAnswer 2: \\boxed{3}\n"
    assert not _pays(verifier, tail, "3") and not _pays(verifier, tail, "4")


@pytest.mark.parametrize(
    "label",
    [
        "**Answer to Problem 2:**",
        "Answer to problem 2:",
        "Answer for Problem 2:",
        "Answer (2):",
        "**Answer (2)**:",
        "Answer #2:",
        "Answer No. 2:",
        "Answer Q2:",
        "Answer 2 (revised):",
    ],
)
def test_label_spellings_say_whose_the_box_is_and_earn_the_format(verifier, label):
    text = HEAD + f"{label} \\boxed{{3}}\n\n### Problem 3\nwork\nAnswer 3: \\boxed{{5}}\n"
    scored = _score(verifier, text, ["7", "3", "5"])
    assert scored.correct == [True, True, True] and scored.breakdown["fmt"] == 1.0, text
    assert extract_group(text, 3).stages == [1, 1, 1]


@pytest.mark.parametrize("back", ["Back to Problem 2:", "Going back to problem 2,", "Returning to Problem 2:"])
@pytest.mark.parametrize("say", ["the correct value is \\boxed{3}.", "the answer is $3$.", "\\boxed{3}"])
def test_back_to_a_problem_in_the_next_section_revises_it(verifier, back, say):
    text = HEAD + f"Answer 2: \\boxed{{4}}\n\n### Problem 3\nwork\n{back} {say}\n\nSo Answer 3: \\boxed{{5}}\n"
    assert _score(verifier, text, ["7", "3", "5"]).correct == [True, True, True], text
    assert _score(verifier, text, ["7", "4", "5"]).correct == [True, False, True], text


@pytest.mark.parametrize(
    "tail",
    [
        "It is either 4 or \\boxed{3}.",
        "Answer 2: 4 or \\boxed{3}",
        "So $4$ or perhaps \\boxed{3}.",
        "Answer 2: \\boxed{3} (4 is also possible)",
        "Answer 2: \\boxed{3} (unless $x < 0$, giving 4)",
        "Answer 2: \\boxed{3} \\text{(also } 4)",
        "Answer 2: \\boxed{3}\n(4 is also possible.)",
        "Answer 2: \\boxed{3}\n\nAlternatively, the answer could be 4.",
        "Answer 2: \\boxed{3}\n\nBut it might also be $4$.",
        "Answer 2: \\boxed{3}\n\nAlternatively, \\boxed{4}.",
        "Answer 2: \\boxed{3}\n\n(or 4 if rounding up)",
        "Answer 2: \\boxed{3}\n\nIt may also be $x = 4$ depending on the reading.",
    ],
)
def test_two_candidates_anywhere_in_the_answer_zone_never_pay(verifier, tail):
    assert not _pays(verifier, tail, "3"), tail
    assert not _pays(verifier, tail, "4"), tail


@pytest.mark.parametrize(
    "tail",
    [
        "Thus x = 4 or x = 3. Since x < 4, \\boxed{3}.",
        "Answer 2: \\boxed{3}\nWe checked that \\boxed{4} is not a root.",
        "Answer 2: \\boxed{3}, not 4.",
        "Answer 2: \\boxed{3} rather than \\boxed{4}",
        "Answer 2: \\boxed{3} or so I believe.",
        "Answer 2: \\boxed{3}\n(4 is not possible.)",
        "Answer 2: \\boxed{3}\nWait, let me double-check.\nThe value is positive since 4 > 0.",
        "Answer 2: \\boxed{3}\nLet me recheck: 3 + 1 = 4, as required.",
        "Answer 2: \\boxed{3}\n\nCheck: 3 + 1 = 4; also 3 \\cdot 2 = 6.",
        "Answer 2: \\boxed{3}\n\nAlternatively, using the formula, we get 3 as well.",
    ],
)
def test_derivations_and_rejected_values_are_no_hedge(verifier, tail):
    assert _pays(verifier, tail, "3"), tail


# -- class 2: one value restated with words between is one answer --------------------------------------------------
@pytest.mark.parametrize(
    "box,restated,gold,other",
    [
        ("\\frac{1}{5}", "or, as a decimal, 0.2", "0.2", "0.3"),
        ("-3", "or simply -3", "-3", "-4"),
        ("\\frac{5}{4}", "or equivalently 5/4", "5/4", "4/5"),
        ("\\frac{5}{4}", "(or, written as a decimal, $1.25$)", "1.25", "1.5"),
        ("\\sqrt{4}", "or in lowest terms \\(2\\)", "2", "3"),
        ("\\frac{3}{6}", "or in lowest terms \\frac{1}{2}", "1/2", "1/3"),
    ],
)
def test_a_restatement_after_or_with_words_between_pays(verifier, box, restated, gold, other):
    tail = f"Answer 2: \\boxed{{{box}}} {restated}\n"
    assert _pays(verifier, tail, gold), tail
    assert _score(verifier, HEAD + tail, ["7", gold]).breakdown["fmt"] == 1.0
    hedge = f"Answer 2: \\boxed{{{box}}} {restated.replace(_last_value(restated), other)}\n"
    assert not _pays(verifier, hedge, gold) and not _pays(verifier, hedge, other), hedge


def _last_value(words: str) -> str:
    return words.rstrip(")$\\").split()[-1].strip("$").removeprefix("\\(")


# -- class 5, layout: a box on display-math lines under a bare label is in the format --------------------------------
@pytest.mark.parametrize(
    "display",
    [
        "\\[\n\\boxed{3}\n\\]",
        "\\[ x = \\boxed{3} \\]",
        "\\[\n\\large\\boxed{3}\n\\]",
        "\\[\n\\quad \\boxed{3}\n\\]",
        "\\[\n\\text{}\\boxed{3}\n\\]",
        "$$\n\\displaystyle \\boxed{3}\n$$",
        "\\begin{aligned}\n\\boxed{3}\n\\end{aligned}",
        "\\begin{equation*}\n  a_{n} = \\boxed{3}\n\\end{equation*}",
        "\\begin{aligned}\n  x &= \\boxed{3}\n\\end{aligned}",
        "\\[\n\\\\ \\boxed{3}\n\\]",
    ],
)
def test_a_box_in_display_math_under_a_bare_label_earns_the_format(verifier, display):
    for label in ("Answer 2:", "**Answer 2:**"):
        text = HEAD + f"{label}\n{display}\n"
        breakdown = _score(verifier, text, ["7", "3"]).breakdown
        assert breakdown["score"] == 3.0 and breakdown["fmt"] == 1.0, text


@pytest.mark.parametrize("check", ["Wait, let me double-check: the answer is 3.", "So the final answer is $3$."])
def test_a_revision_that_restates_the_answer_keeps_it_and_its_format(verifier, check):
    text = HEAD + f"Answer 2: \\boxed{{3}}\n{check}\n"
    breakdown = _score(verifier, text, ["7", "3"]).breakdown
    assert breakdown["score"] == 3.0 and breakdown["fmt"] == 1.0, text
