"""OmegaConf resolvers used by hydra_configs/recipe/bcr.yaml.

Registered by the Hydra plugin in the driver and by the Ray worker setup hook
(recipe_bcr.verl_ext.plugin.worker_setup) in verl's actors, where the config is resolved again.
"""

from __future__ import annotations

from omegaconf import OmegaConf

from recipe_bcr.data.budget import budget_for


def _budget(n: int, tokens_per_problem: float, pinned: int | None = None) -> int:
    return budget_for(int(n), float(tokens_per_problem), None if pinned in (None, "null", "None") else int(pinned))


def register() -> None:
    """Idempotent: `${bcr_budget:n,tokens_per_problem,pinned}`."""
    if not OmegaConf.has_resolver("bcr_budget"):
        OmegaConf.register_new_resolver("bcr_budget", _budget)
