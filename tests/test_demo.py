"""The README's first quick-start command: `python -m recipe_bcr demo --out DIR` runs the whole
pipeline (data, GRPO through the stock verl entry point, merge, evaluation) and writes its contract."""

import csv
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.verl


def test_demo_trains_merges_and_evaluates(tmp_path):
    out = tmp_path / "d"
    proc = subprocess.run([sys.executable, "-m", "recipe_bcr", "demo", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (out / "data" / "train_n3.parquet").exists() and (out / "data" / "manifest.json").exists()
    rows = [json.loads(line) for line in (out / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        assert {"critic/score/mean", "critic/advantages/max", "actor/grad_norm", "bcr/acc", "bcr/fmt"} <= set(r)
    assert (out / "train" / "checkpoints" / "global_step_4" / "actor").is_dir()
    assert "rollout=vllm device=cpu" in (out / "train" / "train.log").read_text()  # the paper's runtime
    assert "engine: vllm" in (out / "eval_run" / "config.yaml").read_text()
    assert (out / "train" / "hf_model" / "config.json").exists()
    assert list((out / "train" / "hf_model").glob("*.safetensors"))
    with (out / "eval_run" / "summary.csv").open() as f:
        summary = list(csv.DictReader(f))
    assert sorted({int(r["n"]) for r in summary if r["benchmark"] == "Toy"}) == [1, 2, 3]
    assert not (tmp_path / "outputs").exists()
    assert "report" in proc.stdout and "step   4:" in proc.stdout
