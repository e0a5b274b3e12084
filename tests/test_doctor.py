"""doctor's per-runtime import lines: every import a device x rollout pair's composed config
needs, checked where this install can run the pair, listed (with its attention backend) where not."""

import re
import sys

import pytest
import torch

from recipe_bcr.commands import doctor
from recipe_bcr.verl_ext import checks, platform_cpu

GPU_NO = "no CUDA device visible to torch"


@pytest.fixture
def cpu_only(monkeypatch):
    found = {
        checks.runtime_name(d, r): (GPU_NO if d == "gpu" else None) for d in ("gpu", "cpu") for r in ("vllm", "hf")
    }
    monkeypatch.setattr(checks, "runtimes", lambda: found)


def test_lists_gpu_runtimes_with_attention_and_checks_cpu_ones(cpu_only):
    lines = {c.name: c for c in checks.runtime_checks()}
    gpu_vllm = lines["imports for bcr_device=gpu bcr_runtime=vllm"]
    assert gpu_vllm.info and GPU_NO in gpu_vllm.detail
    assert (
        "vllm" in gpu_vllm.detail
        and "attention sdpa (torch only, no flash-attn), use_remove_padding=false" in gpu_vllm.detail
    )
    cpu_hf = lines["imports for bcr_device=cpu bcr_runtime=hf"]
    assert cpu_hf.ok and not cpu_hf.info and "ray, fastapi, uvicorn, cachetools" in cpu_hf.detail


def test_missing_import_fails_with_its_install_command(cpu_only, monkeypatch):
    monkeypatch.setitem(sys.modules, "cachetools", None)  # find_spec -> None: not installed
    failed = [c for c in checks.runtime_checks() if not c.ok]
    assert sorted(c.name for c in failed) == [
        "imports for bcr_device=cpu bcr_runtime=hf",
        "imports for bcr_device=cpu bcr_runtime=vllm",
    ]
    assert all(
        "cachetools missing (verl's agent loop (rollout router)) -> fix: pip install cachetools" in c.detail
        for c in failed
    )


def test_flash_attention_config_needs_flash_attn_or_kernels(monkeypatch):
    monkeypatch.setitem(sys.modules, "flash_attn", None)
    monkeypatch.setitem(sys.modules, "kernels", None)
    cfg = checks.compose_recipe(
        [
            "bcr_device=gpu",
            "actor_rollout_ref.model.use_remove_padding=true",
            "actor_rollout_ref.model.override_config.attn_implementation=flash_attention_2",
        ]
    )
    [flash] = checks.missing(checks.requirements(cfg, "gpu"))[-1:]
    assert (
        flash.modules == ("flash_attn", "kernels")
        and "pip install flash-attn==2.8.3 --no-build-isolation" in flash.install
    )


def test_a_gpu_run_asked_for_fails_where_it_cannot_run_naming_why(cpu_only):
    failed = [c for c in checks.runtime_checks(("gpu", "vllm")) if not c.ok]
    assert [(c.name, c.detail) for c in failed] == [
        ("imports for bcr_device=gpu bcr_runtime=vllm", f"asked for, cannot run here: {GPU_NO}")
    ]
    hf = {c.name: c for c in checks.runtime_checks(("gpu", "hf"))}
    assert not hf["imports for bcr_device=gpu bcr_runtime=hf"].ok
    assert hf["imports for bcr_device=gpu bcr_runtime=vllm"].info


def test_doctor_arguments_name_the_run_to_check_for():
    assert doctor.required_pair([]) is None
    assert doctor.required_pair(["bcr_device=gpu"]) == ("gpu", "vllm")  # the recipe's rollout by default
    assert doctor.required_pair(["bcr_device=gpu", "bcr_runtime=hf"]) == ("gpu", "hf")
    usage = "doctor takes bcr_device=gpu|cpu and bcr_runtime=vllm|hf, got bcr.gpus=8"
    with pytest.raises(ValueError, match=re.escape(usage)):
        doctor.required_pair(["bcr.gpus=8"])


@pytest.mark.verl
@pytest.mark.skipif(torch.cuda.is_available() or torch.version.cuda is None, reason="fakes a driver too old for torch")
def test_gpus_torch_cannot_use_fail_the_doctor_with_the_driver_floor(smi, capsys):
    """Before: torch could not use the GPUs nvidia-smi listed, the GPU runtimes were listed as "not
    runnable here (no CUDA device visible to torch)" and the doctor said "all checks passed"."""
    smi(["NVIDIA H100 80GB HBM3, 570.124.06"] * 8)
    assert doctor.run([]) == 1
    out = capsys.readouterr().out
    assert (
        f"[FAIL] gpu: nvidia-smi lists 8 x NVIDIA H100 80GB HBM3, driver 570.124.06: older than the 580 that torch "
        f"{torch.__version__} (built for CUDA {torch.version.cuda}) needs -> fix: upgrade the NVIDIA driver to 580 "
        "or newer"
    ) in out
    assert out.strip().endswith("doctor: 1 check(s) failed")


def test_no_gpu_is_a_note_unless_a_gpu_run_is_asked_for(smi, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    note = checks.gpu_check()
    assert note.ok and note.info and note.detail.startswith("no NVIDIA GPU here (no NVIDIA driver")
    asked = checks.gpu_check(required=True)
    assert not asked.ok and asked.detail.startswith("no NVIDIA driver: nvidia-smi is not on PATH or fails -> fix:")


def test_doctor_says_which_memory_preset_these_gpus_need(smi):
    """The preflight's formula (recipe_bcr.verl_ext.memory) for the paper's runs on this machine's GPUs."""
    smi(["NVIDIA GeForce RTX 4090, 580.65.06, 24564"] * 8)
    line = doctor.memory_check()
    assert line.info and line.detail.startswith("8 x NVIDIA GeForce RTX 4090 (24.0 GiB), by arithmetic")
    assert "JustRL-1.5B bcr.n=3: bcr_memory=low" in line.detail and "does not fit" in line.detail
    smi(["NVIDIA H100 80GB HBM3, 580.65.06, 81559"] * 8)
    platform_cpu.nvidia_gpus.cache_clear()
    assert "JustRL-1.5B bcr.n=3: default" in doctor.memory_check().detail


def test_doctor_prints_the_memory_line(smi, capsys, monkeypatch):
    smi(["NVIDIA H100 80GB HBM3, 580.65.06, 81559"] * 8)
    monkeypatch.setattr(doctor, "CHECKS", [])
    monkeypatch.setattr(doctor, "runtime_checks", lambda required: [])
    monkeypatch.setattr(doctor, "gpu_check", lambda required: checks.Check("gpu", True, "faked"))
    assert doctor.run([]) == 0
    assert "[info] memory: 8 x NVIDIA H100 80GB HBM3 (79.6 GiB)" in capsys.readouterr().out
