"""A verl platform for machines without an accelerator (`PlatformRegistry` name "cpu").

verl 0.9.1 ships CUDA, NPU and ROCm platforms only; without one for the CPU,
`auto_set_device` turns `trainer.device=cpu` back into "cuda" and worker groups ask Ray
for GPUs. Auto-detection probes the registered platforms in order, so on a machine
with a GPU the CUDA platform still wins; this one is picked only where no accelerator
answers and the NVIDIA driver lists no GPU (`nvidia_gpus`: what `nvidia-smi` lists, which is
no answer about torch: see checks.gpu_problem), or with VERL_PLATFORM=cpu.

Ray placement: verl's resource pools always reserve one "device" per worker bundle
(`use_gpu=True` is hard-coded) and check the cluster's "GPU" count before starting, so each
CPU training process takes one of Ray's logical GPU slots, which the CPU runtime declares
with `ray_kwargs.ray_init.num_gpus` (hydra_configs/bcr_device/cpu.yaml). No CUDA is used:
torch's CPU build ignores the CUDA_VISIBLE_DEVICES that Ray sets.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Optional

import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry


@dataclass(frozen=True)
class NvidiaGPU:
    name: str
    driver: str  # e.g. "570.124.06"
    memory_mib: int | None = None  # memory.total (None: not listed)


def _smi_row(line: str) -> NvidiaGPU:
    """One `name, driver_version, memory.total` row (memory in MiB, with or without its unit; absent in old rows)."""
    parts = [part.strip() for part in line.split(",")]
    memory = parts[-1].removesuffix("MiB").strip() if len(parts) >= 3 else ""
    if memory.isdigit():
        return NvidiaGPU(", ".join(parts[:-2]), parts[-2], int(memory))
    name, driver = (part.strip() for part in line.rsplit(",", 1))
    return NvidiaGPU(name, driver)


@functools.cache
def nvidia_gpus() -> tuple[NvidiaGPU, ...] | None:
    """The GPUs the NVIDIA driver lists; None when there is no working `nvidia-smi` (no NVIDIA driver)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run(
            [smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return tuple(_smi_row(line) for line in proc.stdout.splitlines() if "," in line)


def visible_gpu_count() -> int:
    """GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else every GPU the driver lists."""
    ids = os.environ.get("CUDA_VISIBLE_DEVICES")
    if ids is not None:
        return len([i for i in ids.split(",") if i.strip()])
    return len(nvidia_gpus() or ())


def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


def _zero(*_args: Any, **_kwargs: Any) -> int:
    return 0


def _mem_get_info(*_args: Any) -> tuple[int, int]:
    pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    avail = os.sysconf("SC_AVPHYS_PAGES")
    return avail * size, pages * size


# The `torch.<device>` namespace verl calls through `get_torch_device()`: memory statistics
# are zero (no device memory), cache and sync calls do nothing, seeding seeds the CPU RNG.
CPU_DEVICE_MODULE = SimpleNamespace(
    is_available=lambda: True,
    current_device=lambda: "cpu",
    device_count=lambda: 1,
    set_device=_noop,
    synchronize=_noop,
    empty_cache=_noop,
    manual_seed=torch.manual_seed,
    manual_seed_all=torch.manual_seed,
    memory_allocated=_zero,
    memory_reserved=_zero,
    max_memory_allocated=_zero,
    max_memory_reserved=_zero,
    reset_peak_memory_stats=_noop,
    mem_get_info=_mem_get_info,
    get_rng_state=torch.get_rng_state,
    set_rng_state=torch.set_rng_state,
    is_initialized=lambda: True,
    get_device_name=lambda *_: "CPU",
    Stream=torch.cpu.Stream,
    Event=torch.cpu.Event,
    current_stream=torch.cpu.current_stream,
    stream=torch.cpu.stream,
    amp=torch.cpu.amp,
)


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    """CPU-only processes: gloo collectives, no device memory, logical Ray GPU slots."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> Any:
        return CPU_DEVICE_MODULE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        # Reached in auto-detection only after every accelerator platform said no. Never while the
        # NVIDIA driver lists GPUs: torch may not see them (a driver older than its CUDA build, a CPU
        # build, CUDA_VISIBLE_DEVICES="" in a Ray actor without GPUs), and the run must then fail
        # on CUDA with that cause, not go on as a CPU run (recipe_bcr/verl_ext/checks.py: gpu_problem).
        return not torch.cuda.is_available() and not nvidia_gpus()

    def current_device(self) -> Any:
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: Optional[int] = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[Optional[int], Optional[int]]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "BCR_CPU_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str):  # type: ignore[override]
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        return {"num_gpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None
