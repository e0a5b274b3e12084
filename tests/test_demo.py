"""The README's first quick-start command: `python -m recipe_bcr demo out=DIR` runs the whole
pipeline (data, GRPO through the stock verl entry point, merge, evaluation) and writes its contract:
the base, the paper command's committed BCR model and its own live steps side by side."""

import csv
import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.verl, pytest.mark.slow]


def test_demo_trains_merges_and_evaluates(tmp_path):
    out = tmp_path / "d"
    proc = subprocess.run(
        [sys.executable, "-m", "recipe_bcr", "demo", f"out={out}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (out / "data" / "train_n3.parquet").exists() and (out / "data" / "manifest.json").exists()
    rows = [json.loads(line) for line in (out / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        assert {"critic/score/mean", "critic/advantages/max", "actor/grad_norm", "bcr/acc", "bcr/fmt"} <= set(r)
    assert (out / "train" / "checkpoints" / "global_step_4" / "actor").is_dir()
    from recipe_bcr.miniature.demo import _cfg
    from recipe_bcr.miniature.toy.model import provenance

    cfg, run = _cfg(), provenance()["run"]
    # the live steps train as the committed model's paper run did: its N, budget and reward
    assert f"bcr.n={run['n']} bcr.budget={run['budget']} bcr_reward@bcr.reward={run['reward']}" in proc.stdout
    rollout = "hf" if "bcr_runtime=hf" in cfg["train_overrides"] else "vllm"
    assert f"rollout={rollout} device=cpu" in (out / "train" / "train.log").read_text()
    assert f"engine: {cfg['eval_engine']}" in (out / "eval_demo_bcr" / "config.yaml").read_text()
    assert (out / "train" / "hf_model" / "config.json").exists()
    assert list((out / "train" / "hf_model").glob("*.safetensors"))
    with (out / "compare" / "summary.csv").open() as f:
        summary = list(csv.DictReader(f))
    # the base, the paper's BCR model and the demo's side by side at N = 1..3, as a table and plots
    labels = ("base", "demo_bcr", "paper_bcr")
    assert sorted({(r["label"], int(r["n"])) for r in summary if r["benchmark"] == "Toy"}) == [
        (label, n) for label in labels for n in (1, 2, 3)
    ]
    table = (out / "compare" / "table.md").read_text()
    assert all(f"| {label} | {n} |" in table for label in labels for n in (1, 3))
    for plot in ("accuracy_vs_n.png", "tokens_per_problem_vs_n.png"):
        assert (out / "compare" / "plots" / plot).stat().st_size > 10_000
    assert not (tmp_path / "outputs").exists()
    assert "report" in proc.stdout and "step   4:" in proc.stdout and "paper_bcr per problem" in proc.stdout
    last = proc.stdout.strip().splitlines()[-2]  # the closing sentence, before the "done in" line
    assert last.startswith("At N=1 the BCR model the paper command trained") and last.count("%") == 4
