"""verl's RLHF parquet schema for grouped prompts, fixed so that every file we write
(train, val, every benchmark at every N) concatenates in verl's dataset loader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from recipe_bcr.data.prompt import PromptStyle, build_messages

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", pa.list_(_MESSAGE)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.list_(pa.string()))])),
        (
            "extra_info",
            pa.struct(
                [
                    ("split", pa.string()),
                    ("index", pa.int64()),
                    ("n", pa.int64()),
                    ("problem_ids", pa.list_(pa.string())),
                    ("difficulties", pa.list_(pa.float64())),
                    ("topics", pa.list_(pa.string())),
                    ("benchmark", pa.string()),
                    ("scored", pa.list_(pa.bool_())),
                    ("gold_alternatives", pa.list_(pa.list_(pa.string()))),
                    ("prompt_style", pa.string()),
                    ("token_cap", pa.int64()),
                ]
            ),
        ),
    ]
)


@dataclass(frozen=True)
class Problem:
    """One problem as the grouping and prompt code sees it."""

    problem_id: str
    question: str
    answers: tuple[str, ...]  # first is the gold, the rest are accepted alternatives
    difficulty: float = float("nan")
    topic: str = ""


@dataclass(frozen=True)
class GroupRow:
    problems: Sequence[Problem]
    split: str
    index: int
    data_source: str
    benchmark: str = ""
    scored: Sequence[bool] = field(default_factory=tuple)
    prompt_style: PromptStyle = "group"
    token_cap: int | None = None  # this row's own budget in tokens (an oracle-allocation control); None: the run's


def to_record(row: GroupRow) -> dict:
    """One parquet row: the group prompt, N gold answers in order, and the group's metadata."""
    probs = list(row.problems)
    scored = list(row.scored) if row.scored else [True] * len(probs)
    return {
        "data_source": row.data_source,
        "prompt": build_messages([p.question for p in probs], style=row.prompt_style),
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": [p.answers[0] for p in probs]},
        "extra_info": {
            "split": row.split,
            "index": row.index,
            "n": len(probs),
            "problem_ids": [p.problem_id for p in probs],
            "difficulties": [float(p.difficulty) for p in probs],
            "topics": [p.topic for p in probs],
            "benchmark": row.benchmark,
            "scored": scored,
            "gold_alternatives": [list(p.answers[1:]) for p in probs],
            "prompt_style": row.prompt_style,
            "token_cap": row.token_cap,
        },
    }
