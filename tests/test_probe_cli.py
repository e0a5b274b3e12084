"""estimate_difficulty and calibrate_budget on CPU: transformers engine, tiny random Qwen3, real tokenizer."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from recipe_bcr.data.budget import budget_for, calibrate
from recipe_bcr.data.pipeline import build_groups

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def _run(args, shared, cwd):
    env = {**os.environ, "BCR_SHARED": str(shared)}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_estimate_difficulty_feeds_build_groups(tmp_path, shared):
    out = tmp_path / "roll" / "rollout_lengths.parquet"
    proc = _run(
        [
            str(REPO / "data_prep/estimate_difficulty.py"),
            "bcr_model@model=tiny_random_qwen3",
            "source=sample",
            "limit=9",
            "engine=transformers",
            "sampling.k=2",
            "sampling.max_tokens=6",
            f"out={out.parent}",
            "progress=false",
        ],
        shared,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    df = pd.read_parquet(out)
    assert len(df) == 9 and all(len(x) == 2 for x in df["lengths"])
    assert ((df["mean_length"] > 0) & (df["mean_length"] <= 6)).all()
    m = build_groups(
        source="sample",
        output_dir=tmp_path / "groups",
        n=[3],
        groups=2,
        val_groups=1,
        seed=0,
        difficulty_method="rollouts",
        rollouts_file=str(out),
        progress=False,
    )
    assert m["per_n"]["3"]["train_groups"] == 2 and m["cleaning"]["dropped_by_reason"]["no_difficulty"] > 8000


@pytest.mark.slow
def test_calibrate_budget_probes_with_an_engine(tmp_path, shared):
    """The probe path (engine, context, probe_lengths) then Algorithm 3; the same path drives the real
    vLLM in test_vllm_cpu.py (estimate_difficulty), here the transformers engine keeps it cheap."""
    proc = _run(
        [
            str(REPO / "data_prep/calibrate_budget.py"),
            "bcr_model@model=tiny_random_qwen3",
            "engine=transformers",
            "probe.source=sample",
            "probe.size=4",
            "sampling.max_tokens=6",
            "n=3",
            "round_to=1",
            "progress=false",
        ],
        shared,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "probe: 4 lengths" in proc.stdout + proc.stderr  # probe.size x sampling.k (Hydra logs to stdout)
    budget = int(proc.stdout.split("bcr.n=3 bcr.budget=")[1].split()[0])
    assert 1 <= budget <= 9  # 3 x L_avg x 0.5 with L_avg in 1..6 tokens


def test_calibrate_from_lengths_file(tmp_path, shared):
    lengths = tmp_path / "l.parquet"
    pd.DataFrame({"mean_length": [3000.0, 4000.0, 3500.0]}).to_parquet(lengths)
    proc = _run(
        [str(REPO / "data_prep/calibrate_budget.py"), f"lengths_file={lengths}", "n=3", f"out={tmp_path / 'b'}"],
        shared,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "bcr.n=3 bcr.budget=5120" in proc.stdout  # 3 x 3500 x 0.5 = 5250 -> nearest 1024-multiple
    saved = __import__("json").loads((tmp_path / "b" / "budget.json").read_text())
    assert saved["budget"] == 5120 and saved["lengths"] == 3 and saved["override"] == "bcr.n=3 bcr.budget=5120"


def test_budget_arithmetic():
    assert budget_for(3, 1706.6667) == 5120 and budget_for(3, 2666.6667) == 8000
    assert budget_for(5, 1706.6667) == 8533 and budget_for(4, 1706.6667, pinned=6144) == 6144
    assert calibrate([1000, 3000], n=2, compression=0.5, round_to=256) == (2000, 2000, 2048)
    with pytest.raises(ValueError):
        calibrate([], 3)
    with pytest.raises(ValueError):
        budget_for(0, 100.0)
