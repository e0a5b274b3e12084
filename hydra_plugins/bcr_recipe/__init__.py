"""Hydra SearchPathPlugin: puts bcr-recipe's `hydra_configs` on every Hydra app's search path,
so `python -m verl.trainer.main_ppo +recipe=bcr` finds the `recipe` config group."""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

from recipe_bcr import resolvers

resolvers.register()


class BCRRecipeSearchPathPlugin(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append(provider="bcr-recipe", path="pkg://hydra_configs")
