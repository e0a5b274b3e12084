"""`make_engine`: an engine from its config block, in this process or as a Ray pool of replicas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipe_bcr.engines.base import Engine
from recipe_bcr.engines.ray_pool import RayPool
from recipe_bcr.engines.registry import build_engine


def make_engine(name: str, options: Mapping[str, Any]) -> Engine:
    """Build an engine by name from its config block (model, tokenizer, ...); with
    `replicas` > 1 (vllm, transformers) a Ray pool of data-parallel replicas."""
    options = dict(options)
    replicas = int(options.pop("replicas", 1) or 1)
    if replicas > 1:
        if name == "replay":
            raise ValueError("engine=replay runs in one process; drop engine_options.replicas")
        return RayPool(name, options, replicas)
    return build_engine(name, options)
