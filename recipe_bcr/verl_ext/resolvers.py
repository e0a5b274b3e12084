"""OmegaConf resolvers used by hydra_configs/recipe/bcr.yaml.

Registered by the Hydra plugin in the driver and by the Ray worker setup hook
(recipe_bcr.verl_ext.plugin.worker_setup) in verl's actors, where the config is resolved again
(verl's TaskRunner resolves it once, in place, before it starts any worker).
"""

from __future__ import annotations

import os

from omegaconf import OmegaConf

from recipe_bcr.data.budget import budget_for


def _budget(n: int, tokens_per_problem: float, pinned: int | None = None) -> int:
    return budget_for(int(n), float(tokens_per_problem), None if pinned in (None, "null", "None") else int(pinned))


def _gpus(value: int | str) -> int:
    """bcr.gpus: a count, or `auto` = the GPUs this process may use (CUDA_VISIBLE_DEVICES, else every
    GPU nvidia-smi lists). Ray 2.56+ leaves CUDA_VISIBLE_DEVICES alone in actors without GPUs, so
    verl's TaskRunner counts what the driver counted (constraints/gpu.txt sets that floor)."""
    if str(value) != "auto":
        return int(value)
    from recipe_bcr.verl_ext.gpus import nvidia_gpus, visible_gpu_count

    count = visible_gpu_count()
    if count == 0:
        hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
        why = f"CUDA_VISIBLE_DEVICES={hidden!r}" if hidden is not None else \
            "no nvidia-smi" if nvidia_gpus() is None else "nvidia-smi lists none"
        raise ValueError(f"bcr.gpus=auto finds no GPU in this process ({why}) -> set bcr.gpus=N, or bcr_device=cpu "
                         "for a CPU run")
    return count


def _sum(*values: int) -> int:
    return sum(int(v) for v in values)


def register() -> None:
    """Idempotent: `${bcr_budget:n,tokens_per_problem,pinned}`, `${bcr_gpus:count|auto}`, `${bcr_sum:a,b,...}`."""
    for name, fn in (("bcr_budget", _budget), ("bcr_gpus", _gpus), ("bcr_sum", _sum)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
