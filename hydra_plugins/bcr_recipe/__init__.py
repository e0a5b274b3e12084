"""Hydra SearchPathPlugin: puts bcr-recipe's `hydra_configs` on every Hydra app's search path,
so `python -m verl.trainer.main_ppo +recipe=bcr` finds the `recipe` config group.

In the `main_ppo` driver (verl already imported) it also registers the CPU platform, which
verl's `auto_set_device` consults before any recipe code runs; other Hydra apps of the
recipe do not pay for importing verl.
"""

from __future__ import annotations

import sys

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

from recipe_bcr.verl_ext import resolvers

resolvers.register()
if "verl" in sys.modules:
    from recipe_bcr.verl_ext.plugin import register_platform

    register_platform()


class BCRRecipeSearchPathPlugin(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append(provider="bcr-recipe", path="pkg://hydra_configs")
