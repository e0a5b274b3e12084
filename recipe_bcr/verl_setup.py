"""Ray worker setup hook: `ray_kwargs.ray_init.runtime_env.worker_process_setup_hook`.

verl resolves the config again inside its TaskRunner actor and selects the trainer there,
so every Ray worker process needs our resolver and our registered trainer.
"""

from __future__ import annotations


def setup() -> None:
    from recipe_bcr import resolvers

    resolvers.register()
    import recipe_bcr.verl_trainer  # noqa: F401 - registers the "bcr_sync" trainer
