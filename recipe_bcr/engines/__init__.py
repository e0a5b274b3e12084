"""Inference engines behind one interface (vLLM, transformers, replay); see base.Engine."""

from recipe_bcr.engines.base import Engine, Generation, Sampling, make_engine

__all__ = ["Engine", "Generation", "Sampling", "make_engine"]
