"""Group and single-problem prompts (paper, Appendix A).

The instruction text lives here and nowhere else; configs select a style by name
(`bcr.prompt_style`: "group" or "single") and every edge builds prompts through
`build_messages`, so data prep, training and evaluation render the same prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

PromptStyle = Literal["group", "single"]

_GROUP_SYSTEM_HEAD = """You are an expert mathematics tutor.
Your task is to solve **multiple** math problems sequentially in a single response.
Please strictly follow these rules:
1. Use Markdown headers (### Problem X) to separate each problem.
2. For each problem, show detailed step-by-step reasoning, then immediately put the final answer right after the reasoning.
3. Put the final answer for each problem immediately after solving it, in the following format:
"""
_GROUP_ANSWER_LINE = "   After Problem {i}: Answer{i}: \\boxed{{...}}\n"
_GROUP_SYSTEM_TAIL = """4. Each answer should appear right after its corresponding problem's reasoning, before moving to the next problem.
5. Do not include any other text in your response."""

SINGLE_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."


def group_system_prompt(n: int) -> str:
    """The paper's system instruction with one "After Problem i" line per problem."""
    if n < 1:
        raise ValueError(f"a group needs at least one problem, got n={n}")
    lines = "".join(_GROUP_ANSWER_LINE.format(i=i) for i in range(1, n + 1))
    return _GROUP_SYSTEM_HEAD + lines + _GROUP_SYSTEM_TAIL


def group_user_prompt(questions: Sequence[str]) -> str:
    """The N problems behind "### Problem i" headers, in order."""
    return "\n\n".join(f"### Problem {i}\n{q.strip()}" for i, q in enumerate(questions, start=1))


def build_messages(questions: Sequence[str], style: PromptStyle = "group") -> list[dict[str, str]]:
    """Chat messages for verl's parquet `prompt` column.

    "group" is [SYS] + the problems (any N, N=1 included); "single" is the conventional
    one-problem prompt used for N=1 baselines.
    """
    questions = list(questions)
    if not questions:
        raise ValueError("build_messages needs at least one question")
    for i, q in enumerate(questions, start=1):
        if not isinstance(q, str) or not q.strip():
            raise ValueError(f"question {i} is empty or not a string: {q!r}")
    if style == "group":
        return [
            {"role": "system", "content": group_system_prompt(len(questions))},
            {"role": "user", "content": group_user_prompt(questions)},
        ]
    if style == "single":
        if len(questions) != 1:
            raise ValueError(f"the single-problem prompt takes one question, got {len(questions)}")
        return [{"role": "user", "content": f"{questions[0].strip()}\n\n{SINGLE_INSTRUCTION}"}]
    raise ValueError(f"unknown prompt style {style!r}; expected 'group' or 'single'")
