"""Issue 37 item 9: answers inside a think block that never closed (the budget ran out while thinking). The paper's
extraction (Appendix A: stages 1-3 over the completion, no think-block rule) reads them, so the recipe does: an
unclosed block is read whole, with every guard (hedges and disagreeing labels still earn nothing); a closed block's
drafts never count; `think_open` and `bcr/think_open_rate` say how often the budget cut the thinking."""

from __future__ import annotations

import random

from recipe_bcr.grading.metrics import training_metrics
from recipe_bcr.grading.parse.extract import extract_group
from recipe_bcr.grading.reward import score_completion

RNG_SEED = 37


def _group(values: list[int]) -> str:
    return "".join(f"### Problem {i}\nwork...\nAnswer {i}: \\boxed{{{v}}}\n" for i, v in enumerate(values, 1))


def test_answers_in_an_unclosed_think_block_are_read(verifier):
    rng = random.Random(RNG_SEED)
    for _ in range(20):
        values = [rng.randrange(1, 1000) for _ in range(3)]
        golds = [str(v) for v in values]
        for text, thinking in (
            (f"<think>Let me see.\n{_group(values)}and then the budget ran ou", False),
            (f"Let me see.\n{_group(values)}and then", True),
            (f"<think>{_group(values)}", True),
        ):
            scored = score_completion(text, golds, verifier, thinking=thinking)
            assert scored.correct == [True, True, True] and scored.breakdown["fmt"] == 1.0, text
            assert scored.breakdown["think_open"] == 1.0
            assert (
                score_completion(text, [str(v + 1) for v in values], verifier, thinking=thinking).correct == [False] * 3
            )


def test_the_last_problem_cut_by_the_budget_has_no_answer(verifier):
    text = "<think>### Problem 1\nAnswer 1: \\boxed{4}\n### Problem 2\nAnswer 2: \\boxe"
    scored = score_completion(text, ["4", "9"], verifier)
    assert scored.correct == [True, False] and scored.breakdown["answered"] == 0.5 and scored.breakdown["fmt"] == 0.0


def test_guards_hold_inside_an_unclosed_think_block(verifier):
    drafts = "<think>Answer 1: \\boxed{3}\nthen\nAnswer 1: \\boxed{5}\n"
    assert not score_completion(drafts, ["5"], verifier).correct[0]  # two different labelled answers: a hedge
    revised = drafts.replace("then", "wait, no.")
    assert extract_group(revised, 1).answers == ["5"]  # a revision replaces what it revises
    hedge = "<think>Answer 1: \\boxed{3}, \\boxed{5}\n"
    assert not score_completion(hedge, ["3"], verifier).correct[0]
    restated = "<think>Answer 1: \\boxed{8}\ncheck: 2^3.\nAnswer 1: \\boxed{2^{3}}\n"
    assert score_completion(restated, ["8"], verifier).correct == [True]


def test_a_closed_think_block_keeps_its_drafts_out(verifier):
    text = "<think>Answer 1: \\boxed{3}</think>\n### Problem 1\nAnswer 1: \\boxed{5}"
    scored = score_completion(text, ["3"], verifier, thinking=True)
    assert scored.correct == [False] and scored.breakdown["think_open"] == 0.0
    assert extract_group(text, 1).answer_start == text.index("</think>") + len("</think>")
    assert extract_group("<think>x</think>nothing here", 1).answers == [None]


def test_think_open_is_a_training_metric(verifier):
    rows = [
        score_completion(t, ["1"], verifier, thinking=True).breakdown
        for t in (
            "<think>Answer 1: \\boxed{1}",
            "<think>a</think>Answer 1: \\boxed{1}",
            "no think Answer 1: \\boxed{1}",
            "<think>Answer 1: \\boxed{2}",
        )
    ]
    assert [r["think_open"] for r in rows] == [1.0, 0.0, 1.0, 1.0]
    assert training_metrics(rows)["bcr/think_open_rate"] == 0.75
    plain = score_completion("Answer 1: \\boxed{1}", ["1"], verifier).breakdown
    assert plain["think_open"] == 0.0
