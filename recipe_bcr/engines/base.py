"""The engine interface: chat prompts in, k generations per prompt out, with the engine's
own token ids and finish reasons (token counts are never re-derived from text)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; the defaults are the paper's evaluation settings."""

    temperature: float = 0.6
    top_p: float = 0.9
    max_tokens: int = 32768
    k: int = 1  # samples per prompt, sample j uses seed + j
    seed: int = 0


@dataclass(frozen=True)
class Generation:
    text: str
    token_ids: tuple[int, ...] | None  # None only when replaying a run saved without ids
    finish_reason: str  # "stop" (end of sequence) or "length" (hit max_tokens)
    num_tokens: int

    @classmethod
    def from_ids(cls, text: str, token_ids: Sequence[int], finish_reason: str) -> Generation:
        return cls(text, tuple(token_ids), finish_reason, len(token_ids))


class Engine(Protocol):
    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        """k generations for each prompt, in prompt order."""
        ...


def make_engine(name: str, options: Mapping[str, Any]) -> Engine:
    """Build an engine by name from its config block (model, tokenizer, ...)."""
    if name == "vllm":
        from recipe_bcr.engines.vllm_engine import VLLMEngine

        return VLLMEngine(**options)
    if name == "transformers":
        from recipe_bcr.engines.hf_engine import TransformersEngine

        return TransformersEngine(**options)
    if name == "replay":
        from recipe_bcr.engines.replay import ReplayEngine

        return ReplayEngine(**options)
    raise ValueError(f"unknown engine {name!r}; choose vllm, transformers or replay")
