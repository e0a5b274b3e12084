"""Issue 17: nothing raises, and nothing is silently zeroed. The catch-all of reward_fns.bcr is the
last line of defence: every time it fires it is counted, and honest completions never reach it."""

from __future__ import annotations

import logging

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipe_bcr.grading.answers.gate import gives_answer, restatement_key, tree_verdict
from recipe_bcr.grading.metrics import training_metrics
from recipe_bcr.grading.parse.extract import extract_group

_PIECES = [
    "1",
    "0",
    "9",
    ".",
    ",",
    "2.5",
    "x",
    "e",
    "i",
    "\\pi",
    "\\frac",
    "\\sqrt",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "^",
    "_",
    "\\{",
    "\\}",
    "=",
    "<",
    "\\le",
    "+",
    "-",
    "\\pm",
    "!",
    "'",
    "%",
    "\\%",
    "\\text{",
    "cm",
    " or ",
    "\\times",
    "10",
    "\\begin{pmatrix}",
    "\\end{pmatrix}",
    "&",
    "\\\\",
    "\\overline",
    "\\infty",
    "|",
    "\\cdot",
    "\\$",
    "$",
    " ",
    "\\circ",
    "\\ln",
    "\\log",
    "\\binom",
    "\\mathbb",
    "\\angle",
    "\\dfrac",
    "e",
    "E",
    "-",
    "\\left(",
    "\\right)",
]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.lists(st.sampled_from(_PIECES), max_size=12))
def test_the_in_process_reading_never_raises(verifier, pred_parts, gold_parts):
    pred, gold = "".join(pred_parts), "".join(gold_parts) or "5"
    tree_verdict(pred, gold, 1e-6)
    gives_answer(pred, gold)
    restatement_key(pred)
    verifier.fast(pred, gold)
    extract_group(f"### Problem 1\nAnswer1: \\boxed{{{pred}}}\nAnswer1: \\boxed{{{gold}}}", 1)


def test_a_label_or_header_with_thousands_of_digits_never_raises(verifier):
    from reward_fns.bcr import compute_score

    huge = "9" * 5000
    text = f"### Problem {huge}\nAnswer {huge}: \\boxed{{{huge}}}\n### Problem 1\nAnswer1: \\boxed{{5}}\n"
    assert extract_group(text, 1).answers == ["5"]
    out = compute_score("t", text, ["5"], {"n": 1})
    assert out["reward_errors"] == 0.0 and out["acc"] == 1.0
    out = compute_score("t", f"Answer1: \\boxed{{{'1' * 1900}}}", ["5"], {"n": 1})
    assert out["reward_errors"] == 0.0 and out["acc"] == 0.0


def test_a_raising_scorer_is_counted_not_silent(monkeypatch, caplog):
    import reward_fns.bcr as bcr

    def boom(*_a, **_k):
        raise RuntimeError("injected")

    monkeypatch.setattr(bcr, "score_completion", boom)
    with caplog.at_level(logging.ERROR, logger="reward_fns.bcr"):
        out = bcr.compute_score("t", "Answer1: \\boxed{5}", ["5", "6"], {"n": 2})
    assert out["score"] == 0.0 and out["reward_errors"] == 1.0 and out["n"] == 2.0
    assert any("scoring failed" in r.getMessage() for r in caplog.records)
    honest = bcr.compute_score  # the same breakdown keys flow into the per-step metric
    metrics = training_metrics([out, out, {**out, "reward_errors": 0.0}])
    assert metrics["bcr/reward_errors"] == 2.0
    monkeypatch.undo()
    assert honest("t", "Answer1: \\boxed{5} Answer2: \\boxed{6}", ["5", "6"], {"n": 2})["reward_errors"] == 0.0


def _honest_completion(answers: list[str]) -> str:
    return "\n".join(f"### Problem {i}\nWe work it out.\nAnswer{i}: \\boxed{{{a}}}\n" for i, a in enumerate(answers, 1))


def test_honest_completions_never_reach_the_catch_all(shared, caplog):
    """Every MATH-500 answer, written honestly in groups of three, scores without the catch-all firing."""
    import json

    from reward_fns.bcr import compute_score

    rows = [json.loads(x) for x in (shared / "data/benchmarks/math500.jsonl").read_text().splitlines() if x.strip()]
    golds = [r["answer"] for r in rows]
    with caplog.at_level(logging.ERROR, logger="reward_fns.bcr"):
        for k in range(0, len(golds) - 2, 3):
            group = golds[k : k + 3]
            out = compute_score("math500", _honest_completion(group), group, {"n": 3})
            assert out["reward_errors"] == 0.0 and out["acc"] == 1.0 and out["fmt"] == 1.0, group
    assert not [r for r in caplog.records if "scoring failed" in r.getMessage()]


def test_evaluation_scoring_has_the_same_guard(monkeypatch, caplog):
    from recipe_bcr.eval import scoring

    def boom(*_a, **_k):
        raise RuntimeError("injected")

    monkeypatch.setattr(scoring, "score_completion", boom)

    class _Task:
        n, style = 2, "grouped"
        problems = ()

        def key(self, sample):
            return f"task#{sample}"

    with caplog.at_level(logging.WARNING, logger="recipe_bcr.eval.scoring"):
        scored = scoring._score_guarded(_Task(), 0, "text", None, False)
    assert scored.breakdown["reward_errors"] == 1.0 and scored.correct == [False, False]
    assert sum("reward error" in r.getMessage() for r in caplog.records) == 1
