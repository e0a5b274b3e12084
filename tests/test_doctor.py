"""doctor's per-runtime import lines: every import a device x rollout pair's composed config
needs, checked where this install can run the pair, listed (with its attention backend) where not."""

import sys

import pytest

from recipe_bcr.verl_ext import checks

GPU_NO = "no CUDA device visible to torch"


@pytest.fixture
def cpu_only(monkeypatch):
    found = {checks.runtime_name(d, r): (GPU_NO if d == "gpu" else None) for d in ("gpu", "cpu") for r in ("vllm", "hf")}
    monkeypatch.setattr(checks, "runtimes", lambda: found)


def test_lists_gpu_runtimes_with_attention_and_checks_cpu_ones(cpu_only):
    lines = {c.name: c for c in checks.runtime_checks()}
    gpu_vllm = lines["imports for bcr_device=gpu bcr_runtime=vllm"]
    assert gpu_vllm.info and GPU_NO in gpu_vllm.detail
    assert "vllm" in gpu_vllm.detail and "attention sdpa (torch only, no flash-attn), use_remove_padding=false" in gpu_vllm.detail
    cpu_hf = lines["imports for bcr_device=cpu bcr_runtime=hf"]
    assert cpu_hf.ok and not cpu_hf.info and "ray, fastapi, uvicorn, cachetools" in cpu_hf.detail


def test_missing_import_fails_with_its_install_command(cpu_only, monkeypatch):
    monkeypatch.setitem(sys.modules, "cachetools", None)   # find_spec -> None: not installed
    failed = [c for c in checks.runtime_checks() if not c.ok]
    assert sorted(c.name for c in failed) == ["imports for bcr_device=cpu bcr_runtime=hf",
                                              "imports for bcr_device=cpu bcr_runtime=vllm"]
    assert all("cachetools missing (verl's agent loop (rollout router)) -> fix: pip install cachetools" in c.detail
               for c in failed)


def test_flash_attention_config_needs_flash_attn_or_kernels(monkeypatch):
    monkeypatch.setitem(sys.modules, "flash_attn", None)
    monkeypatch.setitem(sys.modules, "kernels", None)
    cfg = checks.compose_recipe(["bcr_device=gpu", "actor_rollout_ref.model.use_remove_padding=true",
                                 "actor_rollout_ref.model.override_config.attn_implementation=flash_attention_2"])
    [flash] = checks.missing(checks.requirements(cfg, "gpu"))[-1:]
    assert flash.modules == ("flash_attn", "kernels") and "pip install flash-attn==2.8.3 --no-build-isolation" in flash.install
