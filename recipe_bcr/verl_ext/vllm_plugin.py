"""A vLLM general plugin (entry point `vllm.general_plugins`: `bcr_recipe`) for verl's vLLM
rollout on a CPU.

vLLM loads general plugins in every process it starts (API server, engine core, workers).
The recipe's Ray hook (`plugin.worker_setup`) never runs in those processes, so what verl's
code inside them needs on a CPU is done here:

1. verl's platform: verl's worker extension (loaded inside vLLM's workers) asks verl for the
   device; without the recipe's "cpu" platform it answers "cuda".
2. Weights that stay loadable: vLLM's CPU linear layers pack their weight for oneDNN and then
   replace it with an empty tensor (`dispatch_cpu_unquantized_gemm(..., remove_weight=True)`).
   verl syncs the actor's weights into the rollout in place (`model.load_weights`, then
   `process_weights_after_loading`, which packs again), so the tensors must stay. This is a
   vLLM-private hook: `check_vllm_hook()` fails loudly if vLLM moves it, and a test calls it.

On any platform other than vLLM's CPU platform the plugin does nothing.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_HOOK = "vllm.model_executor.layers.utils.dispatch_cpu_unquantized_gemm"


def check_vllm_hook() -> Callable[..., Any]:
    """The vLLM function the plugin wraps, after checking it still has the shape the plugin
    relies on; a vLLM upgrade that moves or changes it raises here instead of silently
    leaving the rollout with empty weights after the first sync."""
    from vllm.model_executor.layers import linear, utils

    fn = getattr(utils, "dispatch_cpu_unquantized_gemm", None)
    if fn is None or "remove_weight" not in inspect.signature(getattr(fn, "__wrapped__", fn)).parameters:
        raise RuntimeError(
            f"{_HOOK}(layer, remove_weight) not found in this vLLM: bcr-recipe's vLLM plugin "
            "(recipe_bcr/verl_ext/vllm_plugin.py) must be updated for this vLLM version"
        )
    caller = inspect.getsource(linear.UnquantizedLinearMethod.process_weights_after_loading)
    if "dispatch_cpu_unquantized_gemm" not in caller:
        raise RuntimeError(
            "vLLM's UnquantizedLinearMethod.process_weights_after_loading no longer calls "
            f"{_HOOK}: bcr-recipe's vLLM plugin (recipe_bcr/verl_ext/vllm_plugin.py) must be updated"
        )
    return fn


def keep_linear_weights() -> None:
    """Make vLLM's CPU GEMM dispatch keep each layer's weight tensor (idempotent)."""
    from vllm.model_executor.layers import utils

    fn = check_vllm_hook()
    if getattr(fn, "_bcr_keeps_weights", False):
        return

    @functools.wraps(fn)
    def dispatch(layer: Any, remove_weight: bool) -> None:
        fn(layer, remove_weight=False)

    dispatch._bcr_keeps_weights = True  # type: ignore[attr-defined]
    utils.dispatch_cpu_unquantized_gemm = dispatch


def register() -> None:
    """vLLM's entry point: on vLLM's CPU platform, prepare this process for verl's rollout."""
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    from recipe_bcr.verl_ext.plugin import register_platform
    from recipe_bcr.verl_ext.quiet import hide_missing_engine_warnings

    hide_missing_engine_warnings()
    keep_linear_weights()
    register_platform()
