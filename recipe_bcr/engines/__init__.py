"""Inference engines behind one interface (vLLM, transformers, replay); see base.Engine.

base (the interface) <- render, context <- the engines <- registry (by name) <- ray_pool <- factory.
"""

from recipe_bcr.engines.base import Engine, Generation, Sampling
from recipe_bcr.engines.factory import make_engine
from recipe_bcr.engines.registry import register_engine

__all__ = ["Engine", "Generation", "Sampling", "make_engine", "register_engine"]
