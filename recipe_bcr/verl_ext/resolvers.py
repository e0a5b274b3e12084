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


PAPER_GPUS = 4  # bcr.gpus=auto where no NVIDIA GPU answers: config inspection and CPU CI see the paper's setting


def _gpus(value: int | str) -> int:
    """bcr.gpus: a count, or `auto` = the GPUs this process may use (CUDA_VISIBLE_DEVICES, else every
    GPU nvidia-smi lists; the paper's 4 on a machine without NVIDIA GPUs, where only the preflight's
    "torch cannot use a GPU here" follows). Ray 2.56+ leaves CUDA_VISIBLE_DEVICES alone in actors
    without GPUs, so verl's TaskRunner, which resolves the config again, counts what the driver
    counted; an older Ray empties it there, which is an error, not a count of 0 (constraints/gpu.txt)."""
    if str(value) != "auto":
        return int(value)
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and not hidden.strip(","):
        raise ValueError(
            f"bcr.gpus=auto: CUDA_VISIBLE_DEVICES={hidden!r} hides every GPU from this process (Ray "
            "older than 2.56 does this in actors without GPUs: pip install 'ray>=2.56', see "
            "constraints/gpu.txt) -> or set bcr.gpus=N"
        )
    from recipe_bcr.verl_ext.platform_cpu import visible_gpu_count

    return visible_gpu_count() or PAPER_GPUS


def _sum(*values: int) -> int:
    return sum(int(v) for v in values)


def register() -> None:
    """Idempotent: `${bcr_budget:n,tokens_per_problem,pinned}`, `${bcr_gpus:count|auto}`, `${bcr_sum:a,b,...}`."""
    for name, fn in (("bcr_budget", _budget), ("bcr_gpus", _gpus), ("bcr_sum", _sum)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
