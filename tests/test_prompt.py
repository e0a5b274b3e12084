import pytest

from recipe_bcr.data.prompt import SINGLE_INSTRUCTION, build_messages, group_system_prompt


@pytest.mark.parametrize("n", [1, 3, 7])
def test_system_prompt_lists_one_answer_line_per_problem(n):
    sys = group_system_prompt(n)
    for i in range(1, n + 1):
        assert f"After Problem {i}: Answer{i}: \\boxed{{...}}" in sys
    assert f"After Problem {n + 1}:" not in sys
    assert "1. Use Markdown headers (### Problem X)" in sys and "5. Do not include any other text" in sys


def test_group_messages_are_system_plus_numbered_problems():
    msgs = build_messages(["What is 1+1?", "  Solve x^2=4.  "])
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[1]["content"] == "### Problem 1\nWhat is 1+1?\n\n### Problem 2\nSolve x^2=4."


def test_single_prompt_is_the_conventional_one():
    msgs = build_messages(["What is 1+1?"], style="single")
    assert msgs == [{"role": "user", "content": f"What is 1+1?\n\n{SINGLE_INSTRUCTION}"}]
    with pytest.raises(ValueError, match="one question"):
        build_messages(["a", "b"], style="single")


@pytest.mark.parametrize("bad", [[], [""], ["ok", "  "], [None]])
def test_bad_questions_are_rejected(bad):
    with pytest.raises(ValueError):
        build_messages(bad)


def test_unknown_style_is_rejected():
    with pytest.raises(ValueError, match="unknown prompt style"):
        build_messages(["q"], style="xml")
