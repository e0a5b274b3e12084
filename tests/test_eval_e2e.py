"""End-to-end evaluation on CPU: tiny random Qwen3 + real Qwen3 tokenizer, transformers engine."""

import csv
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

pytestmark = (
    pytest.mark.slow
)  # subprocess runs of the command (the runner's units: test_eval_units.py, test_eval_streaming.py)
REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def _eval(args, shared, cwd):
    env = {**os.environ, "BCR_SHARED": str(shared), "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "recipe_bcr.eval", *args], cwd=cwd, capture_output=True, text=True, env=env
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory, shared):
    root = tmp_path_factory.mktemp("eval_run")
    args = [
        "bcr_model@model=tiny_random_qwen3",
        "engine=transformers",
        "only=[AIME25,AMC23]",
        "limit=5",
        "n=[1,2,3]",
        "sampling.max_tokens=10",
        "sampling.k=1",
        f"out={root / 'run'}",
        "progress=false",
    ]
    first = _eval(args, shared, root)
    assert first.returncode == 0, first.stderr[-3000:]
    return root / "run", args, first


def test_run_directory_is_complete(run):
    run_dir, _, first = run
    for name in ("config.yaml", "samples.jsonl", "summary.csv", "summary.json", "table.md"):
        assert (run_dir / name).stat().st_size > 0, name
    for plot in ("accuracy_vs_n.png", "tokens_per_problem_vs_n.png", "pareto_accuracy_vs_tokens.png"):
        assert (run_dir / "plots" / plot).read_bytes()[:4] == b"\x89PNG"
    table = (run_dir / "table.md").read_text()
    assert "| tiny-random-qwen3 | 3 |" in table and "AIME25 Acc" in table
    # 5 problems at N=1,2,3 -> 5 + 3 + 2 groups per benchmark
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2 * (5 + 3 + 2)
    rec = records[0]
    assert rec["generated_tokens"] <= 10 and rec["finish_reason"] in ("stop", "length")
    assert len(rec["token_ids"]) == rec["generated_tokens"] and rec["attribution"] in ("ids", "reencode")
    assert {"answer", "stage", "correct", "tokens", "scored"} <= set(rec["problems"][0])


def test_summary_equals_the_per_sample_records(run):
    run_dir, _, _ = run
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    groups = defaultdict(list)
    for r in records:
        groups[(r["benchmark"], r["n"])].append(r)
    with (run_dir / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(groups)
    for row in rows:
        recs = groups[(row["benchmark"], int(row["n"]))]
        probs = [p for r in recs for p in r["problems"] if p["scored"]]
        assert len(probs) == 5 == int(row["problems_scored"])
        assert float(row["acc"]) == pytest.approx(sum(p["correct"] for p in probs) / len(probs))
        tpp = sum(r["generated_tokens"] / r["n"] for r in recs) / len(recs)
        assert float(row["tokens_per_problem"]) == pytest.approx(tpp)
        trunc = sum(r["finish_reason"] == "length" for r in recs) / len(recs)
        assert float(row["truncation_rate"]) == pytest.approx(trunc)
        total = sum(r["generated_tokens"] for r in recs)
        assert float(row["markers_per_1k_tokens"]) == pytest.approx(1000 * sum(r["markers"] for r in recs) / total)
    js = json.loads((run_dir / "summary.json").read_text())
    assert [(r["benchmark"], r["n"]) for r in js] == [(r["benchmark"], int(r["n"])) for r in rows]


def test_rerun_generates_nothing_new(run, shared):
    run_dir, args, _ = run
    before = hashlib.sha256((run_dir / "samples.jsonl").read_bytes()).hexdigest()
    again = _eval(args, shared, run_dir.parent)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "0 new samples" in again.stderr + again.stdout
    assert hashlib.sha256((run_dir / "samples.jsonl").read_bytes()).hexdigest() == before


def test_a_killed_run_resumes_without_regenerating_what_it_kept(run, shared, tmp_path):
    """Through the command: a copy of the run, cut as if killed after 3 samples were written, gets
    only the missing samples back (request by request: test_eval_streaming.py)."""
    import shutil

    run_dir, args, _ = run
    cut = tmp_path / "cut"
    shutil.copytree(run_dir, cut)
    done = (run_dir / "samples.jsonl").read_text().splitlines()
    (cut / "samples.jsonl").write_text("\n".join(done[:3]) + "\n")
    proc = _eval([a for a in args if not a.startswith("out=")] + [f"out={cut}"], shared, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = [json.loads(x) for x in (cut / "samples.jsonl").read_text().splitlines()]
    assert [json.dumps(r) for r in after[:3]] == [json.dumps(json.loads(x)) for x in done[:3]]  # kept, untouched
    assert f"{len(done) - 3} new samples" in proc.stderr + proc.stdout
    key = lambda r: (r["benchmark"], r["n"], r["group"])  # noqa: E731
    assert sorted(map(key, after)) == sorted(key(json.loads(x)) for x in done)


def test_resume_refuses_a_changed_setting(run, shared):
    run_dir, args, _ = run
    changed = [a for a in args if not a.startswith("n=")] + ["n=[1,4]"]
    proc = _eval(changed, shared, run_dir.parent)
    assert proc.returncode == 2 and "different 'n'" in proc.stderr + proc.stdout


def test_compare_mode_puts_runs_in_one_table(run, shared, tmp_path):
    run_dir, _, _ = run
    out = tmp_path / "cmp"
    proc = _eval(["mode=compare", f"compare.runs=[{run_dir},{run_dir}]", f"out={out}"], shared, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "table.md").exists() and (out / "plots" / "pareto_accuracy_vs_tokens.png").exists()
