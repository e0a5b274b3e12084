"""Chat messages -> prompt token ids, once, the same way for every engine.

The chat template writes the BOS itself where the model has one (DeepSeek-R1's does), so the
rendered text is encoded without adding special tokens; engines receive these ids, never text
(vLLM would tokenize text with add_special_tokens=True and start the prompt with two BOS).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipe_bcr.engines.base import Messages


def render_text(tokenizer: Any, messages: Messages, chat_template_kwargs: Mapping[str, Any] | None = None) -> str:
    return tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, **dict(chat_template_kwargs or {})
    )


def render_ids(tokenizer: Any, messages: Messages, chat_template_kwargs: Mapping[str, Any] | None = None) -> list[int]:
    text = render_text(tokenizer, messages, chat_template_kwargs)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


class ChatRenderer:
    """`render_ids` bound to one tokenizer and template settings (what engines expose)."""

    def __init__(self, tokenizer: Any, chat_template_kwargs: Mapping[str, Any] | None = None) -> None:
        self.tokenizer = tokenizer
        self.chat_template_kwargs = dict(chat_template_kwargs or {})

    def __call__(self, messages: Messages) -> list[int]:
        return render_ids(self.tokenizer, messages, self.chat_template_kwargs)
