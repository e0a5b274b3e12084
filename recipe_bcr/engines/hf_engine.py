"""Hugging Face transformers `generate` engine: CPU or GPU, for small models and tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recipe_bcr.engines.base import Generation, Messages, Sampling


class TransformersEngine:
    """`model` is a path or Hub id; `random_init=True` builds untrained weights from its
    config.json (tiny test models ship only a config)."""

    def __init__(
        self,
        model: str,
        tokenizer: str | None = None,
        random_init: bool = False,
        dtype: str = "auto",
        device: str | None = None,
        batch_size: int = 8,
        chat_template_kwargs: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"
        if random_init:
            torch.manual_seed(0)
            self.model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model))
        else:
            self.model = AutoModelForCausalLM.from_pretrained(model, dtype=dtype)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        eos = self.model.generation_config.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.eos_ids.add(self.tokenizer.eos_token_id)

    def render(self, messages: Messages) -> str:
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **self.chat_template_kwargs
        )

    def _one_pass(self, texts: list[str], sampling: Sampling, seed: int) -> list[Generation]:
        torch = self.torch
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        torch.manual_seed(seed)
        with torch.no_grad():
            out = self.model.generate(
                **enc,
                do_sample=sampling.temperature > 0,
                temperature=sampling.temperature if sampling.temperature > 0 else None,
                top_p=sampling.top_p,
                max_new_tokens=sampling.max_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        gens = []
        for row in out[:, enc["input_ids"].shape[1] :].tolist():
            ids: list[int] = []
            finish = "length"
            for t in row:
                ids.append(t)
                if t in self.eos_ids:
                    finish = "stop"
                    break
            gens.append(Generation.from_ids(self.tokenizer.decode(ids, skip_special_tokens=True), ids, finish))
        return gens

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        texts = [self.render(p) for p in prompts]
        results: list[list[Generation]] = [[] for _ in texts]
        for j in range(sampling.k):
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                for i, gen in enumerate(self._one_pass(batch, sampling, sampling.seed + j)):
                    results[start + i].append(gen)
        return results
