"""What the NVIDIA driver reports, apart from what torch can use: the platform choice, the doctor
and the preflight ask here, so that a machine with GPUs that torch cannot drive (a driver older
than torch's CUDA build, a CPU build of torch, hidden devices) is named as such instead of
being taken for a machine without GPUs.

`nvidia-smi` answers from the driver, whatever CUDA_VISIBLE_DEVICES says and whatever CUDA torch
was built for; `torch.cuda.is_available()` answers False in all of those cases alike."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass

# Oldest Linux driver branch that runs a CUDA major release (NVIDIA's minor-version compatibility
# table, docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
DRIVER_FLOOR = {11: 450, 12: 525, 13: 580}
TORCH_INSTALL = "pip install torch==2.11.0 (PyPI's Linux wheel: the CUDA 13.0 build)"


@dataclass(frozen=True)
class NvidiaGPU:
    name: str
    driver: str   # e.g. "570.124.06"


@functools.cache
def nvidia_gpus() -> tuple[NvidiaGPU, ...] | None:
    """The GPUs the NVIDIA driver lists; None when there is no working `nvidia-smi` (no NVIDIA driver)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    rows = [[part.strip() for part in line.rsplit(",", 1)] for line in proc.stdout.splitlines() if "," in line]
    return tuple(NvidiaGPU(name, driver) for name, driver in rows)


def driver_floor(cuda: str | None) -> int | None:
    """The oldest driver branch that runs torch's CUDA build `cuda` (e.g. "13.0" -> 580)."""
    if not cuda:
        return None
    return DRIVER_FLOOR.get(int(cuda.split(".")[0]))


def _branch(driver: str) -> int:
    return int(driver.split(".")[0])


def _cuda_init_error() -> str:
    """torch's own reason why CUDA did not initialise (a warning it emits once), if it gave one."""
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.device_count()
    return next((str(w.message).splitlines()[0] for w in caught), "")


def gpu_problem() -> str | None:
    """Why torch cannot run on this machine's NVIDIA GPUs, most basic cause first, with the fix
    (None: torch sees a CUDA device)."""
    import torch

    if torch.cuda.is_available():
        return None
    gpus = nvidia_gpus()
    if gpus is None:
        return "no NVIDIA driver: nvidia-smi is not on PATH or fails -> fix: run on a machine with NVIDIA GPUs and their driver"
    if not gpus:
        return "nvidia-smi lists no GPU -> fix: check the driver (`nvidia-smi`) and the container's device mounts"
    listed = f"nvidia-smi lists {len(gpus)} x {gpus[0].name}, driver {gpus[0].driver}"
    if torch.version.cuda is None:
        return f"{listed}, but torch {torch.__version__} is a CPU build -> fix: {TORCH_INSTALL}"
    floor = driver_floor(torch.version.cuda)
    if floor is not None and _branch(gpus[0].driver) < floor:
        return (f"{listed}: older than the {floor} that torch {torch.__version__} (built for CUDA {torch.version.cuda}) "
                f"needs -> fix: upgrade the NVIDIA driver to {floor} or newer")
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and not hidden.strip(","):
        return f"{listed}, but CUDA_VISIBLE_DEVICES={hidden!r} hides them -> fix: unset CUDA_VISIBLE_DEVICES"
    why = _cuda_init_error()
    return f"{listed}, but torch {torch.__version__} (CUDA {torch.version.cuda}) cannot use them" + (f": {why}" if why else "")


def visible_gpu_count() -> int:
    """GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else every GPU the driver lists."""
    ids = os.environ.get("CUDA_VISIBLE_DEVICES")
    if ids is not None:
        return len([i for i in ids.split(",") if i.strip()])
    return len(nvidia_gpus() or ())
