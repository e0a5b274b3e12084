"""`python -m recipe_bcr gpu-check`, the command for the first GPU machine, runs its stages here with
`--device cpu`: both rollout engines train, the vLLM-trained checkpoint merges, both inference engines
evaluate it, and every stage gets a verdict with its evidence."""

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.verl, pytest.mark.vllm]


def test_gpu_check_runs_every_stage_on_cpu(tmp_path):
    out = tmp_path / "g"
    proc = subprocess.run([sys.executable, "-m", "recipe_bcr", "gpu-check", "--device", "cpu", "--steps", "1",
                           "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=2400)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    for stage in ("GRPO, bcr_device=cpu bcr_runtime=vllm", "GRPO, bcr_device=cpu bcr_runtime=hf",
                  "evaluation, engine=vllm", "evaluation, engine=transformers", "engines agree (greedy, same model)"):
        assert f"[ok] {stage}:" in proc.stdout, stage
    assert "FAIL" not in proc.stdout
    assert (out / "train_vllm" / "hf_model" / "config.json").exists()
    assert "rollout=vllm device=cpu" in (out / "train_vllm" / "train.log").read_text()
    assert "rollout=hf device=cpu" in (out / "train_hf" / "train.log").read_text()
