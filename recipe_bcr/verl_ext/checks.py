"""The install checks behind `python -m recipe_bcr doctor`: verl, Hydra's plugin scan, the
recipe group, the reward, verl's and vLLM's hooks, and which device x engine pairs can run.

Without our Hydra search-path plugin, `+recipe=bcr` silently becomes a plain string and
verl trains on its stock defaults; each check says what is wrong and how to fix it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

VERL_VERSION = "0.9.1"
EDITABLE_FIX = (
    "a setuptools editable install (`pip install -e .`) hides hydra_plugins from Hydra's scan "
    "(hydra issue 2359); reinstall with `pip install --config-settings editable_mode=compat -e .` "
    "or a normal `pip install .`"
)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _verl_version() -> Check:
    import verl

    version = getattr(verl, "__version__", "unknown")
    ok = version == VERL_VERSION
    fix = "" if ok else f" -> fix: pip install 'verl[verl-core,math]=={VERL_VERSION}'"
    return Check("verl version", ok, f"verl {version} (recipe pinned to {VERL_VERSION}){fix}")


def _editable_finder() -> Check:
    finders = [type(f).__module__ for f in sys.meta_path if "__editable__" in type(f).__module__ and "bcr" in type(f).__module__]
    if finders:
        return Check("install mode", False, f"{finders[0]}: {EDITABLE_FIX}")
    return Check("install mode", True, "no setuptools editable finder for bcr-recipe")


def _plugin() -> Check:
    from hydra.core.plugins import Plugins
    from hydra.plugins.search_path_plugin import SearchPathPlugin

    names = [p.__name__ for p in Plugins.instance().discover(SearchPathPlugin)]
    ok = "BCRRecipeSearchPathPlugin" in names
    detail = "Hydra discovers BCRRecipeSearchPathPlugin" if ok else (
        f"Hydra does not discover hydra_plugins.bcr_recipe (found: {names or 'none'}), so +recipe=bcr would "
        f"compose to a plain string -> fix: install bcr-recipe into this environment; {EDITABLE_FIX}"
    )
    return Check("hydra plugin", ok, detail)


def _recipe_composes() -> Check:
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    with initialize_config_module("verl.trainer.config", version_base=None):
        cfg = compose("ppo_trainer", overrides=["+recipe=bcr"])
    recipe = cfg.get("recipe")
    if isinstance(recipe, str) or "bcr" not in cfg:
        return Check("recipe group", False, "+recipe=bcr composed to a string: the recipe config group was not found")
    path = OmegaConf.select(cfg, "reward.custom_reward_function.path")
    ok = path == "pkg://reward_fns.bcr" and int(cfg.data.max_response_length) == int(cfg.bcr.max_response_length)
    return Check(
        "recipe group",
        ok,
        f"+recipe=bcr -> reward {path}, budget {cfg.data.max_response_length} at n={cfg.bcr.n}, "
        f"experiment {cfg.trainer.experiment_name}",
    )


def _reward() -> Check:
    from verl.utils.import_utils import load_extern_object

    fn = load_extern_object("pkg://reward_fns.bcr", "compute_score")
    text = "### Problem 1\nAnswer1: \\boxed{(x+1)^2}\n### Problem 2\nAnswer2: \\boxed{0.5}"
    out = fn("doctor", text, ["x^2+2x+1", "\\frac{1}{2}"], {"n": 2})
    ok = out["score"] == 3.0
    return Check("reward function", ok, f"pkg://reward_fns.bcr compute_score -> score {out['score']} (expected 3.0)")


def _reward_manager() -> Check:
    from verl.utils.import_utils import load_extern_object

    cls = load_extern_object("pkg://recipe_bcr.verl_ext.reward_manager", "BCRRewardManager")
    return Check("reward manager", True, f"{cls.__module__}.{cls.__name__} loads")


def _verl_hooks() -> Check:
    """What every Ray worker registers (recipe_bcr.verl_ext.plugin.worker_setup) still fits this verl."""
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.workers.rollout.base import get_rollout_class

    from recipe_bcr.verl_ext.plugin import worker_setup

    worker_setup()
    trainer, rollout = get_trainer_cls("sync").__name__, get_rollout_class("hf", "async").__name__
    return Check("verl hooks", True, f"trainer_mode=sync -> {trainer}; rollout hf -> {rollout}; platform cpu registered")


def _vllm_platform() -> tuple[str | None, str | None]:
    """(vLLM's platform device type, None) if vLLM imports and finds a device, else (None, why not)."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return None, "vllm is not installed (GPU: pip install -e '.[gpu]'; CPU: bash .ci/setup)"
    from vllm.platforms import current_platform

    if current_platform.is_unspecified():
        return None, f"vLLM {importlib.metadata.version('vllm')} finds no device it can run on"
    return current_platform.device_type, None


def runtimes() -> dict[str, str | None]:
    """`bcr_device=D bcr_runtime=R` (and eval engine) -> None if this install can run it, else why not."""
    import torch

    devices = {
        "gpu": None if torch.cuda.is_available() else "no CUDA device visible to torch",
        "cpu": None if torch.distributed.is_gloo_available() else "torch was built without gloo",
    }
    vllm_device, vllm_why = _vllm_platform()
    found: dict[str, str | None] = {}
    for device, why in devices.items():
        wrong = None if vllm_device is None or vllm_device == ("cpu" if device == "cpu" else "cuda") else \
            f"this vLLM build runs on {vllm_device}"
        found[f"bcr_device={device} bcr_runtime=vllm"] = why or vllm_why or wrong
        found[f"bcr_device={device} bcr_runtime=hf"] = why
    found["eval engine=vllm"] = vllm_why
    found["eval engine=transformers"] = None
    return found


def _runtimes() -> Check:
    found = runtimes()
    detail = "; ".join(f"{name}: {'yes' if why is None else 'no (' + why + ')'}" for name, why in found.items())
    return Check("runtimes", any(why is None for why in found.values()), detail)


def _vllm_plugin() -> Check:
    """vLLM loads the recipe's plugin in its own processes (verl's rollout on a CPU needs it)."""
    import importlib.metadata

    if _vllm_platform()[0] is None:
        return Check("vllm plugin", True, "not needed: vLLM cannot run here")
    names = [ep.name for ep in importlib.metadata.entry_points(group="vllm.general_plugins")]
    if "bcr_recipe" not in names:
        return Check("vllm plugin", False, f"entry point vllm.general_plugins:bcr_recipe not found ({names}) -> fix: "
                                          "reinstall bcr-recipe into this environment")
    from recipe_bcr.verl_ext.vllm_plugin import check_vllm_hook

    check_vllm_hook()
    return Check("vllm plugin", True, "vllm.general_plugins:bcr_recipe registered; its vLLM hook fits this vLLM")


CHECKS: list[Callable[[], Check]] = [_verl_version, _editable_finder, _plugin, _recipe_composes, _reward, _reward_manager,
                                     _verl_hooks, _vllm_plugin, _runtimes]
