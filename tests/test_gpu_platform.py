"""A machine whose NVIDIA driver lists GPUs that torch cannot use (a driver older than torch's
CUDA build, a CPU build of torch, CUDA_VISIBLE_DEVICES="" in a Ray actor without GPUs) is a GPU
machine with a problem, not a CPU machine: the recipe's CPU platform must not take over there,
and the cause must be named (recipe_bcr/verl_ext/checks.py). This machine has no GPU: a fake
`nvidia-smi` on PATH stands for the driver; torch here cannot use CUDA, as on such a machine."""

import pytest
import torch

from recipe_bcr.verl_ext import checks, platform_cpu

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where torch cannot use CUDA")


H100_OLD_DRIVER = ["NVIDIA H100 80GB HBM3, 570.124.06"] * 8


def test_driver_lists_gpus(smi):
    smi(H100_OLD_DRIVER)
    assert platform_cpu.nvidia_gpus() == (platform_cpu.NvidiaGPU("NVIDIA H100 80GB HBM3", "570.124.06"),) * 8
    assert platform_cpu.visible_gpu_count() == 8


def test_cpu_platform_never_replaces_cuda_while_the_driver_lists_gpus(smi):
    """Before: PlatformCPU.is_platform_available was `not torch.cuda.is_available()`, so with an old
    driver (or a CPU-only Ray actor) register_platform switched verl to the CPU platform and BCRTrainer
    swapped in the CPU worker class: a crash far from the cause."""
    from verl.plugin.platform import get_platform, set_platform
    from verl.plugin.platform.platform_cuda import PlatformCUDA

    from recipe_bcr.verl_ext.platform_cpu import PlatformCPU
    from recipe_bcr.verl_ext.plugin import register_platform

    smi(H100_OLD_DRIVER)
    assert not PlatformCPU().is_platform_available()
    before = get_platform()
    try:
        set_platform(PlatformCUDA())  # what verl's auto-detection picks where nvidia-smi answers
        register_platform()
        assert isinstance(get_platform(), PlatformCUDA)
    finally:
        set_platform(before)


def test_cpu_platform_still_taken_where_there_is_no_gpu(smi):
    from recipe_bcr.verl_ext.platform_cpu import PlatformCPU

    smi([])  # a driver that lists no GPU
    assert PlatformCPU().is_platform_available()
    platform_cpu.nvidia_gpus.cache_clear()
    smi(H100_OLD_DRIVER, exit_code=9)  # a driver that fails
    assert PlatformCPU().is_platform_available()


@pytest.mark.parametrize("cuda, floor", [("13.0", 580), ("12.8", 525), ("11.8", 450), (None, None)])
def test_driver_floor_per_cuda_major(cuda, floor):
    assert checks.driver_floor(cuda) == floor


def test_old_driver_is_named_with_the_floor(smi, monkeypatch):
    smi(H100_OLD_DRIVER)
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    why = checks.gpu_problem()
    assert why.startswith(
        "nvidia-smi lists 8 x NVIDIA H100 80GB HBM3, driver 570.124.06: older than the 580 that "
        f"torch {torch.__version__} (built for CUDA 13.0) needs -> fix: upgrade the NVIDIA driver"
    )
    assert why.endswith("(where you cannot: docs/gpu.md, Install and the doctor: CUDA forward compatibility)")


def test_each_other_cause_is_named(smi, monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    smi(["NVIDIA H100 80GB HBM3, 580.65.06"])
    assert "is a CPU build -> fix: pip install torch==2.11.0" in checks.gpu_problem()
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert "CUDA_VISIBLE_DEVICES='' hides them" in checks.gpu_problem()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert "cannot use them" in checks.gpu_problem()  # driver new enough, nothing hidden: torch's own reason
    platform_cpu.nvidia_gpus.cache_clear()
    smi([])
    assert checks.gpu_problem().startswith("nvidia-smi lists no GPU")
    platform_cpu.nvidia_gpus.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    assert checks.gpu_problem().startswith("no NVIDIA driver")


def test_driver_lists_each_gpus_memory(smi):
    """memory.total (MiB, with or without its unit) feeds the preflight's memory estimate; a row without it still reads."""
    smi(["NVIDIA H100 80GB HBM3, 580.65.06, 81559", "NVIDIA A10, 580.65.06, 23028 MiB", "Tesla T4, 535.1"])
    assert [(g.name, g.driver, g.memory_mib) for g in platform_cpu.nvidia_gpus()] == [
        ("NVIDIA H100 80GB HBM3", "580.65.06", 81559),
        ("NVIDIA A10", "580.65.06", 23028),
        ("Tesla T4", "535.1", None),
    ]
