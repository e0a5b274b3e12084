"""Engines by name. An engine registers the import path of its class; the class is imported
only when an engine of that name is built, so naming an engine imports neither vLLM nor torch."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from recipe_bcr.engines.base import Engine

POOL_OPTIONS = ("ray_address", "cpus_per_replica", "gpus_per_replica", "in_flight")  # Ray pool settings
_ENGINES: dict[str, str] = {}


def register_engine(name: str, target: str) -> None:
    """Make `engine=<name>` build `target` ("package.module:Class", called with the engine's options)."""
    _ENGINES[name] = target


def build_engine(name: str, options: Mapping[str, Any]) -> Engine:
    """One engine in this process; the Ray pool's settings, if any, are dropped."""
    if name not in _ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose {', '.join(_ENGINES)}")
    module, _, attr = _ENGINES[name].partition(":")
    options = {k: v for k, v in options.items() if k not in POOL_OPTIONS and k != "replicas"}
    return getattr(importlib.import_module(module), attr)(**options)


register_engine("vllm", "recipe_bcr.engines.vllm_engine:VLLMEngine")
register_engine("transformers", "recipe_bcr.engines.hf_engine:TransformersEngine")
register_engine("replay", "recipe_bcr.engines.replay:ReplayEngine")
