"""Replay: re-score hand-written completions whose accuracy and token counts are known."""

import csv
import json
import os
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from recipe_bcr.data.eval_tasks import build_tasks

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
PAPER = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))


def _completion_for(task, plan):
    """plan[i]: 'right', 'wrong', 'none' or 'unclosed' for problem i."""
    parts = []
    for i, (p, what) in enumerate(zip(task.problems, plan), start=1):
        box = {
            "right": f"\\boxed{{{p.answers[0]}}}",
            "wrong": "\\boxed{-999}",
            "unclosed": f"\\boxed{{{p.answers[0]}",
            "none": "",
        }[what]
        label = f"Answer{i}: {box}" if box else "I ran out of ideas"
        parts.append(f"### Problem {i}\nSome reasoning here.\n{label}\n")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, shared):
    root = tmp_path_factory.mktemp("replay")
    tasks = build_tasks({"AIME25": PAPER["AIME25"]}, [1, 3], seed=0, limit=3)
    n1 = [t for t in tasks if t.n == 1]
    n3 = [t for t in tasks if t.n == 3]
    assert len(n1) == 3 and len(n3) == 1
    plans = [
        (n1[0], ["right"], 100, "stop"),
        (n1[1], ["none"], 500, "length"),  # truncated before answering
        (n1[2], ["unclosed"], 50, "stop"),  # malformed box
        (n3[0], ["right", "wrong", "none"], 900, "stop"),
    ]
    saved = root / "saved" / "samples.jsonl"
    saved.parent.mkdir()
    with saved.open("w") as f:
        for task, plan, tokens, finish in plans:
            f.write(
                json.dumps(
                    {
                        "key": task.key(0),
                        "prompt": task.messages,
                        "sample": 0,
                        "completion": _completion_for(task, plan),
                        "generated_tokens": tokens,
                        "finish_reason": finish,
                    }
                )
                + "\n"
            )
    env = {**os.environ, "BCR_SHARED": str(shared)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipe_bcr.eval",
            "bcr_model@model=tiny_random_qwen3",
            "engine=replay",
            f"engine_options.samples={saved.parent}",
            "only=[AIME25]",
            "limit=3",
            "n=[1,3]",
            f"out={root / 'replay'}",
            "progress=false",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with (root / "replay" / "summary.csv").open() as f:
        rows = {int(r["n"]): r for r in csv.DictReader(f)}
    records = [json.loads(x) for x in (root / "replay" / "samples.jsonl").read_text().splitlines()]
    return rows, records


def test_known_accuracy_tokens_and_truncation(replayed):
    rows, _ = replayed
    assert float(rows[1]["acc"]) == pytest.approx(1 / 3)
    assert float(rows[1]["tokens_per_problem"]) == pytest.approx((100 + 500 + 50) / 3)
    assert float(rows[1]["truncation_rate"]) == pytest.approx(1 / 3)
    assert float(rows[3]["acc"]) == pytest.approx(1 / 3)
    assert float(rows[3]["tokens_per_problem"]) == pytest.approx(300)
    assert float(rows[3]["acc_pos1"]) == 1.0 and float(rows[3]["acc_pos2"]) == 0.0 and float(rows[3]["acc_pos3"]) == 0.0
    assert float(rows[3]["format_rate"]) == 0.0  # problem 3 has no boxed answer


def test_records_keep_stage_answer_and_attributed_tokens(replayed):
    _, records = replayed
    n3 = next(r for r in records if r["n"] == 3)
    assert [p["stage"] for p in n3["problems"]] == [1, 1, None]
    assert n3["problems"][1]["answer"] == "-999" and not n3["problems"][1]["correct"]
    assert all(p["tokens"] > 0 for p in n3["problems"]) and n3["attribution"] == "reencode"
    malformed = next(
        r for r in records if r["n"] == 1 and "\\boxed{" in r["completion"] and r["generated_tokens"] == 50
    )
    assert malformed["problems"][0]["answer"] is None


def _replay_saved(tmp_path, shared, content: str) -> subprocess.CompletedProcess:
    """Run the eval CLI in replay mode over a saved samples file holding `content`."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "samples.jsonl").write_text(content)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "recipe_bcr.eval",
            "bcr_model@model=tiny_random_qwen3",
            "engine=replay",
            f"engine_options.samples={saved}",
            "only=[AIME25]",
            "limit=2",
            "n=[1]",
            f"out={tmp_path / 'r'}",
            "progress=false",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "BCR_SHARED": str(shared)},
    )


def test_replay_of_a_missing_sample_is_an_error(tmp_path, shared):
    proc = _replay_saved(tmp_path, shared, "")
    assert proc.returncode == 2 and "has no sample" in proc.stderr + proc.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["engine=nonsense"], "unknown engine"),
        (["engine=transformers", "model.path=/no/such/model", "model.tokenizer=/no/such/model"], "/no/such/model"),
    ],
)
def test_bad_engine_or_model_is_a_clear_error(tmp_path, shared, args, message):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipe_bcr.eval",
            "bcr_model@model=tiny_random_qwen3",
            "only=[AIME25]",
            "limit=1",
            "n=[1]",
            f"out={tmp_path / 'r'}",
            "progress=false",
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "BCR_SHARED": str(shared)},
    )
    out = proc.stderr + proc.stdout
    assert proc.returncode == 2 and message in out and "Traceback" not in out


def test_corrupt_line_in_saved_samples_names_file_and_line(tmp_path, shared):
    proc = _replay_saved(tmp_path, shared, '{"prompt": [], "sample": 0}\n{"prompt": [], "sam\n')
    out = proc.stderr + proc.stdout
    assert proc.returncode == 2 and "samples.jsonl line 2: not a JSON record" in out and "Traceback" not in out


def test_corrupt_line_in_a_run_is_reported_when_summarising(tmp_path):
    from recipe_bcr.data.io import DataError
    from recipe_bcr.eval.summary import summarize

    (tmp_path / "samples.jsonl").write_text("[1, 2]\n")
    with pytest.raises(DataError, match=r"samples.jsonl line 1: expected a JSON object, got list"):
        summarize([("x", tmp_path)])
