import pytest

from recipe_bcr.grading.parse.extract import extract_group

GOOD = (
    "### Problem 1\nreasoning\nAnswer1: \\boxed{2}\n\n"
    "### Problem 2\nmore\nAnswer 2: \\boxed{\\frac{1}{2}}\n\n"
    "### Problem 3\n**Answer3:** \\boxed{x^2}\n"
)


def test_stage1_forms_and_format():
    ex = extract_group(GOOD, 3)
    assert ex.answers == ["2", "\\frac{1}{2}", "x^2"]
    assert ex.stages == [1, 1, 1] and ex.format_ok and ex.answered == 1.0


def test_section_spans_cover_each_problem():
    ex = extract_group(GOOD, 3)
    spans = [p.section for p in ex.problems]
    assert GOOD[spans[0][0] : spans[0][1]].startswith("### Problem 1") and "Answer1" in GOOD[slice(*spans[0])]
    assert spans[0][1] == spans[1][0] and spans[2][1] == len(GOOD)


@pytest.mark.parametrize(
    "label",
    [
        "Answer1: \\boxed{7}",
        "Answer 1: \\boxed{7}",
        "**Answer1:** \\boxed{7}",
        "**Answer 1**: $\\boxed{7}$",
        "Answer1:\n\\[\n\\boxed{7}\n\\]",
        "answer 1 : \\(\\boxed{7}\\)",
    ],
)
def test_label_variants(label):
    ex = extract_group(f"### Problem 1\nwork\n{label}", 1)
    assert ex.answers == ["7"] and ex.stages == [1]


def test_stage2_global_label_without_headers():
    ex = extract_group("Answer1: \\boxed{1} Answer2: \\boxed{2}", 2)
    assert ex.answers == ["1", "2"] and ex.stages == [2, 2] and not ex.format_ok


def test_stage2_when_label_is_in_the_wrong_section():
    text = "### Problem 1\nAnswer2: \\boxed{9}\n### Problem 2\nAnswer1: \\boxed{8}"
    ex = extract_group(text, 2)
    assert ex.answers == ["8", "9"] and ex.stages == [2, 2]


def test_stage3_by_position():
    ex = extract_group("so \\boxed{4} and then \\boxed{5}", 2)
    assert ex.answers == ["4", "5"] and ex.stages == [3, 3]


def test_stage3_never_assigns_a_box_labelled_for_another_problem():
    ex = extract_group("Answer2: \\boxed{5}", 2)
    assert ex.answers == [None, "5"] and ex.stages == [None, 2]


def test_one_problem_takes_its_last_unlabelled_box():
    """With one problem all text is its: of unlabelled boxes the last is final (training and evaluation alike)."""
    ex = extract_group("first \\boxed{1} final \\boxed{2}", 1)
    assert ex.answers == ["2"] and ex.stages == [3]


def test_placeholder_box_is_no_answer():
    ex = extract_group("### Problem 1\nAnswer1: \\boxed{...}\n### Problem 2\nAnswer2: \\boxed{ }", 2)
    assert ex.answers == [None, None] and not ex.format_ok


def test_unclosed_answer_box_is_none():
    assert extract_group("### Problem 1\nAnswer1: \\boxed{5", 1).answers == [None]


def test_think_block_only_text_after_last_close_counts():
    text = "<think>try \\boxed{1}</think>\n### Problem 1\nAnswer1: \\boxed{2}"
    ex = extract_group(text, 1)
    assert ex.answers == ["2"] and ex.think_closed
    assert ex.problems[0].section[0] == text.index("### Problem 1")


@pytest.mark.parametrize("text,thinking", [("<think>\\boxed{1} never closed", False), ("Answer1: \\boxed{1}", True)])
def test_unclosed_thinking_is_read_whole_as_the_paper_reads_it(text, thinking):
    ex = extract_group(text, 1, thinking=thinking)
    assert ex.answers == ["1"] and ex.think_closed is False


def test_first_section_and_first_label_win():
    text = "### Problem 1\nAnswer1: \\boxed{1}\nAnswer1: \\boxed{1.0}\n### Problem 1\nAnswer1: \\boxed{\\frac{2}{2}}"
    ex = extract_group(text, 1)
    assert ex.answers == ["1"] and ex.stages == [1]


@pytest.mark.parametrize(
    "text",
    [
        "### Problem 1\nAnswer1: \\boxed{1}\nAnswer1: \\boxed{2}",
        "### Problem 1\nAnswer1: \\boxed{1}\n### Problem 2\nAnswer2: \\boxed{7}\nAnswer 1: \\boxed{2}",
        "Answer1: \\boxed{x+1} Answer1: \\boxed{x+2}",
    ],
)
def test_labelled_answers_that_disagree_are_both_committed(text):
    """Two different labelled answers for one problem, nothing revising the first: both are its candidates (the
    grader pays neither), and position gives it no other box."""
    assert len(extract_group(text, 2).problems[0].candidates) == 2


def test_n_must_be_positive():
    with pytest.raises(ValueError):
        extract_group("x", 0)
