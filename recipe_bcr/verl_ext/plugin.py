"""Registration of bcr-recipe's verl extensions, in the driver and in every Ray worker.

- `register_platform()`: the CPU platform (verl's public PlatformRegistry). The Hydra plugin
  calls it in the `main_ppo` driver, before verl picks its platform in `auto_set_device`.
- `worker_setup()`: `ray_kwargs.ray_init.runtime_env.worker_process_setup_hook`. verl resolves
  the config again and picks trainer, rollout and engine inside its Ray actors, so each
  worker process registers the resolvers, and the platform, the HF rollout and the trainer as
  soon as it imports the verl module each one patches (after_import.py).

Two registrations go through verl-private names, kept here and tested
(tests/test_verl_runtime.py) so that a verl upgrade that moves them fails loudly:
`verl.workers.rollout.base._ROLLOUT_REGISTRY` (worker-side rollout classes have no public
register function) and `verl.trainer.ppo.v1.trainer_base.TRAINER_REGISTRY["sync"]`
(`register_trainer` refuses to rebind a name, and only the literal "sync" gets verl's
synchronous semantics).
"""

from __future__ import annotations

HF_ADAPTER = "recipe_bcr.verl_ext.hf_rollout.HFServerAdapter"


def register_platform() -> None:
    """Register "cpu"; if verl already fell back to an accelerator platform that is not there
    (it resolves the platform once per process, possibly at import time), switch to "cpu"."""
    import os

    from verl.plugin.platform import get_platform, set_platform

    from recipe_bcr.verl_ext.platform_cpu import PlatformCPU

    current = get_platform()
    if (
        not isinstance(current, PlatformCPU)
        and not current.is_available()
        and not os.environ.get("VERL_PLATFORM")
        and PlatformCPU().is_platform_available()
    ):
        set_platform(PlatformCPU())


def _load_hf_replica() -> type:
    from recipe_bcr.verl_ext.hf_rollout import HFReplica

    return HFReplica


def register_replica() -> None:
    """The HF rollout's replica (the trainer side picks the replica class by name)."""
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    RolloutReplicaRegistry.register("hf", _load_hf_replica)


def register_adapter() -> None:
    """The HF rollout's server adapter (the worker side looks it up in a private registry)."""
    from verl.workers.rollout import base as rollout_base

    rollout_base._ROLLOUT_REGISTRY[("hf", "async")] = HF_ADAPTER


def install_trainer() -> None:
    """Make trainer_mode "sync" build `BCRTrainer` (verl's PPOTrainerSync + bcr metrics)."""
    from verl.trainer.ppo.v1 import trainer_base
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    from recipe_bcr.verl_ext.trainer import BCRTrainer

    current = trainer_base.TRAINER_REGISTRY.get("sync")
    if current is BCRTrainer:
        return
    if current is not PPOTrainerSync:
        raise RuntimeError(
            f"verl's 'sync' trainer is {current!r}, not PPOTrainerSync: bcr-recipe's trainer hook "
            "(recipe_bcr/verl_ext/plugin.py) must be updated for this verl version"
        )
    trainer_base.TRAINER_REGISTRY["sync"] = BCRTrainer


def worker_setup() -> None:
    """Each registration runs when the verl module it patches is first imported (after_import.py):
    the actors that never import verl's trainer or rollout skip ~6 s of imports each."""
    from recipe_bcr.verl_ext import resolvers
    from recipe_bcr.verl_ext.after_import import after_import
    from recipe_bcr.verl_ext.quiet import hide_missing_engine_warnings

    hide_missing_engine_warnings()
    resolvers.register()
    after_import("verl", register_platform)
    after_import("verl.workers.rollout.replica", register_replica)
    after_import("verl.workers.rollout.base", register_adapter)
    after_import("verl.trainer.ppo.v1", install_trainer)  # its __init__ imports every trainer: "sync" is there
