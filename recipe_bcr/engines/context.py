"""vLLM's context length, derived from the work instead of the model's full context.

Left unset, vLLM sizes the KV cache for the model's whole context (262,144 tokens for
Qwen3-4B-Thinking-2507, ~36 GiB: no start on 40-48 GB cards); set too small, its scheduler
stops at prompt + output = max_model_len and reports "length", shrinking the budget
silently. So: longest rendered prompt + max_tokens, checked against the model's limit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from recipe_bcr.engines.base import Messages, Sampling
from recipe_bcr.engines.render import render_ids

log = logging.getLogger(__name__)


def model_context_limit(model: str) -> int | None:
    """max_position_embeddings from the model's config.json (None if it does not say)."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model)
    config = getattr(config, "text_config", None) or config
    limit = getattr(config, "max_position_embeddings", None)
    return int(limit) if limit else None


def plan_context(
    longest_prompt: int, max_tokens: int, model_limit: int | None, configured: int | None
) -> tuple[int, str]:
    """(max_model_len, a sentence saying how it was chosen); ValueError when the work does not fit."""
    needed = longest_prompt + max_tokens
    if configured:
        if configured < needed:
            raise ValueError(
                f"max_model_len={configured} is shorter than the longest prompt ({longest_prompt} tokens) + "
                f"max_tokens ({max_tokens}) = {needed}: vLLM would stop those samples early and call them "
                f"'length'; leave engine_options.max_model_len=null (derived) or lower sampling.max_tokens"
            )
        value, how = int(configured), f"max_model_len={configured} (set; the work needs {needed})"
    else:
        value, how = needed, f"max_model_len={needed} = longest prompt {longest_prompt} + max_tokens {max_tokens}"
    if model_limit is not None and value > model_limit:
        raise ValueError(
            f"{how} exceeds the model's context of {model_limit} tokens (max_position_embeddings): lower "
            f"sampling.max_tokens to at most {model_limit - longest_prompt}"
        )
    limit = (
        f"model limit {model_limit}" if model_limit is not None else "model limit unknown (no max_position_embeddings)"
    )
    return value, f"{how}; {limit}"


def with_context(
    engine: str, options: Mapping[str, Any], prompts: Sequence[Messages], sampling: Sampling, tokenizer: Any = None
) -> dict[str, Any]:
    """Engine options with max_model_len derived for vLLM (other engines: unchanged)."""
    options = dict(options)
    if engine != "vllm" or not prompts:
        return options
    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(options.get("tokenizer") or options["model"])
    kwargs = options.get("chat_template_kwargs")
    longest = max(len(render_ids(tokenizer, p, kwargs)) for p in prompts)
    value, how = plan_context(
        longest, sampling.max_tokens, model_context_limit(options["model"]), options.get("max_model_len")
    )
    log.info("vLLM context: %s", how)
    options["max_model_len"] = value
    return options
