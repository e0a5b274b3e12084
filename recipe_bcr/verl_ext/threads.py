"""The training worker's torch threads on a CPU: `BCR_TRAIN_THREADS` in Ray's runtime environment.

Ray gives an actor that asks for no CPUs one OpenMP thread, and verl's workers ask for none. A step's phases run
one after another, so the CPU preset lets the training worker's reference and update passes use every core
("auto"); a whole number sets the count (the paper command gives each of the runs it trains at once its share).
Read by the worker (`engine_cpu.CPUActorRolloutRefWorker`) and checked by the preflight before Ray starts.
"""

from __future__ import annotations

import os
from typing import Optional

TRAIN_THREADS = "BCR_TRAIN_THREADS"
OVERRIDE = (
    f"ray_kwargs.ray_init.runtime_env.env_vars.{TRAIN_THREADS}"  # where hydra_configs/bcr_device/cpu.yaml sets it
)


def train_threads(value: Optional[str], cores: int) -> Optional[int]:
    """The thread count `value` names: a whole number, "auto" (`cores`), or unset/empty (None: Ray's one thread)."""
    if value is None or value.strip() == "":
        return None
    if value.strip() == "auto":
        return cores
    if not value.strip().isdecimal() or int(value) < 1:
        raise ValueError(f"{TRAIN_THREADS}={value!r}: want a whole number >= 1 or 'auto' (e.g. {OVERRIDE}='\"2\"')")
    return int(value)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


def apply_train_threads() -> None:
    """torch's thread count in this process from the environment's `BCR_TRAIN_THREADS`; unset leaves it."""
    import torch

    threads = train_threads(os.environ.get(TRAIN_THREADS), usable_cores())
    if threads is not None:
        torch.set_num_threads(threads)
