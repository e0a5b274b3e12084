"""Ways a policy could earn reward without solving the problems; none may pay."""

import pytest

from recipe_bcr.grading.reward import RewardWeights, score_completion

GOLDS = ["12", "\\frac{3}{4}", "1728"]


def _score(verifier, text, golds=GOLDS):
    return score_completion(text, golds, verifier, RewardWeights()).breakdown


def test_box_spam_earns_only_positional_hits(verifier):
    spam = "".join(f"\\boxed{{{k}}}" for k in range(1, 2000))
    b = _score(verifier, spam)
    assert b["acc"] == 0 and b["fmt"] == 0


def test_one_answer_per_problem_no_hedging(verifier):
    text = "### Problem 1\nAnswer1: \\boxed{11} or maybe \\boxed{12}\n"
    assert _score(verifier, text)["acc"] == 0


def test_answers_for_the_wrong_problem_do_not_count(verifier):
    text = "### Problem 1\nAnswer2: \\boxed{12}\n### Problem 2\nAnswer3: \\boxed{\\frac34}\n### Problem 3\nAnswer1: \\boxed{1728}"
    assert _score(verifier, text)["acc"] == 0


def test_labelled_box_is_not_reused_by_position(verifier):
    text = "Answer3: \\boxed{12}"
    assert _score(verifier, text)["acc"] == 0


@pytest.mark.parametrize("fill", ["...", "", " ", "\\ldots", "answer"])
def test_template_copy_earns_no_format(verifier, fill):
    text = "".join(f"### Problem {i}\nAnswer{i}: \\boxed{{{fill}}}\n" for i in (1, 2, 3))
    b = _score(verifier, text)
    assert b["fmt"] == 0 and b["score"] == 0 and b["answered"] == 0


def test_format_without_sections_is_not_format(verifier):
    text = "Answer1: \\boxed{12} Answer2: \\boxed{3/4} Answer3: \\boxed{1728}"
    b = _score(verifier, text)
    assert b["acc"] == 1 and b["fmt"] == 0 and b["score"] == 2.0


@pytest.mark.parametrize("pred", ["1331 \\text{ and } 1728", "1728, 1331", "\\pm 1728", "1728 \\text{ or } 1729"])
def test_overlap_answers_are_wrong(verifier, pred):
    text = f"### Problem 3\nAnswer3: \\boxed{{{pred}}}"
    assert _score(verifier, text)["n_correct"] == 0


def test_answer_inside_unclosed_thinking_counts_as_the_paper_counts_it(verifier):
    text = "### Problem 1\nAnswer1: \\boxed{12}"
    breakdown = score_completion(text, GOLDS, verifier, thinking=True).breakdown
    assert breakdown["n_correct"] == 1 and breakdown["think_open"] == 1.0


def test_answers_only_in_thinking_do_not_count(verifier):
    text = "<think>Answer1: \\boxed{12} Answer2: \\boxed{3/4} Answer3: \\boxed{1728}</think> I am done."
    assert _score(verifier, text)["score"] == 0


def test_full_marks_need_every_answer_right(verifier):
    text = "### Problem 1\nAnswer1: \\boxed{12}\n### Problem 2\nAnswer2: \\boxed{0.75}\n### Problem 3\nAnswer3: \\boxed{1728}"
    b = _score(verifier, text)
    assert b == {**b, "score": 3.0, "acc": 1.0, "fmt": 1.0, "answered": 1.0}
