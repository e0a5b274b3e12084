"""Attribution, text analyses, resumable writes and training metrics."""

import json

import pytest
from transformers import AutoTokenizer

from recipe_bcr.eval.analysis import is_degenerate, marker_count
from recipe_bcr.eval.attribution import attribute, token_byte_starts
from recipe_bcr.eval.runner import done_keys
from recipe_bcr.grading.metrics import training_metrics
from recipe_bcr.grading.parse.extract import extract_group
from reward_fns.bcr import compute_score


@pytest.fixture(scope="module")
def qwen(shared):
    return AutoTokenizer.from_pretrained(str(shared / "tokenizers/qwen3"))


TEXT = "<think>plan 日本 🙂</think>### Problem 1\nx = 2, so\nAnswer1: \\boxed{2}\n\n### Problem 2\nHence $y=\\frac{1}{2}$.\nAnswer2: \\boxed{\\frac12}"


def test_ids_attribution_matches_offsets_and_sums_to_the_whole(qwen):
    ids = qwen(TEXT, add_special_tokens=False)["input_ids"]
    assert token_byte_starts(qwen, ids, TEXT) is not None
    spans = [p.section for p in extract_group(TEXT, 2).problems] + [(0, TEXT.index("</think>") + 8)]
    by_ids, m1 = attribute(qwen, TEXT, spans, ids)
    by_offsets, m2 = attribute(qwen, TEXT, spans, None)
    assert (m1, m2) == ("ids", "reencode") and by_ids == by_offsets
    assert sum(by_ids) == len(ids)


def test_ids_that_do_not_spell_the_text_fall_back(qwen):
    ids = qwen("something else entirely", add_special_tokens=False)["input_ids"]
    _, method = attribute(qwen, TEXT, [(0, 10)], ids)
    assert method == "reencode"


def test_markers_and_degeneration():
    markers = ["wait", "let me double-check", "alternatively"]
    assert marker_count("Wait, let me double-check. Alternatively... await waiting", markers) == 3
    loop = "Let me check again. " * 60
    assert is_degenerate(loop) and not is_degenerate(" ".join(f"step {i} adds {i * 7} units" for i in range(80)))


def test_interrupted_write_is_repaired(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps({"key": "a"}) + "\n" + '{"key": "b", "comp')
    assert done_keys(path) == {"a"}
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == 1


def test_training_metrics_from_real_breakdowns():
    golds = ["2", "5", "7"]
    texts = [
        "### Problem 1\nAnswer1: \\boxed{2}\n### Problem 2\nAnswer2: \\boxed{5}\n### Problem 3\nAnswer3: \\boxed{1}",
        "### Problem 1\nAnswer1: \\boxed{3}\n### Problem 2\nAnswer2: \\boxed{5}",
    ]
    infos = [
        compute_score("d", t, golds, {"n": 3, "response_length": L, "max_response_length": 120}, w_len=0.0)
        for t, L in zip(texts, (60, 120))
    ]
    m = training_metrics(infos)
    assert m["bcr/acc"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert m["bcr/fmt"] == 0.5 and m["bcr/answered"] == pytest.approx((1 + 2 / 3) / 2)
    assert (m["bcr/acc_pos1"], m["bcr/acc_pos2"], m["bcr/acc_pos3"]) == (0.5, 1.0, 0.0)
    assert m["bcr/truncation_rate"] == 0.5
    assert m["bcr/tokens_per_problem"] == pytest.approx((60 / 3 + 120 / 3) / 2)
    assert training_metrics([{"score": 1.0}]) == {}
