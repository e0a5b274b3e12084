"""Hugging Face transformers `generate` engine: CPU or GPU, for small models and tests.

Samples with exactly the configured settings: the model's own generation_config (which may
set top_k, repetition_penalty, min_p, ...) is replaced by a neutral one that keeps only its
special token ids, and every sampling field that transformers would otherwise fill from it
or from its global defaults (top_k = 50) is passed explicitly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from recipe_bcr.engines.base import Generation, Messages, Request, Sampling, generate_all, units
from recipe_bcr.engines.render import ChatRenderer, render_text

TOKEN_FIELDS = ("eos_token_id", "bos_token_id", "pad_token_id", "decoder_start_token_id")


class TransformersEngine:
    """`model` is a path or Hub id; `random_init=True` builds untrained weights from its
    config.json (tiny test models ship only a config). Requests are generated `batch_size`
    at a time (one pass per unit of requests with the same sample index, seeded seed + j)."""

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
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if random_init:
            torch.manual_seed(0)
            self.model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model))
        else:
            self.model = AutoModelForCausalLM.from_pretrained(model, dtype=dtype)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.render_ids = ChatRenderer(self.tokenizer, self.chat_template_kwargs)
        base = self.model.generation_config
        self.model.generation_config = GenerationConfig(
            **{f: getattr(base, f) for f in TOKEN_FIELDS if getattr(base, f, None) is not None}
        )
        eos = base.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.eos_ids.add(self.tokenizer.eos_token_id)
        self._queue: deque[tuple[list[Request], Sampling]] = deque()

    def render(self, messages: Messages) -> str:
        return render_text(self.tokenizer, messages, self.chat_template_kwargs)

    def generation_config(self, sampling: Sampling) -> Any:
        """Every sampling field set explicitly, so nothing comes from model or global defaults."""
        from transformers import GenerationConfig

        sample = sampling.temperature > 0
        return GenerationConfig(
            do_sample=sample,
            temperature=sampling.temperature if sample else 1.0,
            top_p=sampling.top_p if sample else 1.0,
            top_k=sampling.top_k if sample else 0,  # 0: off (transformers' default would be 50)
            min_p=sampling.min_p if sample and sampling.min_p > 0 else None,
            typical_p=1.0,
            epsilon_cutoff=0.0,
            eta_cutoff=0.0,
            repetition_penalty=sampling.repetition_penalty,
            encoder_repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            min_new_tokens=0,
            max_new_tokens=sampling.max_tokens,
            num_beams=1,
            num_return_sequences=1,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=sorted(self.eos_ids),
        )

    def _one_pass(self, prompts: list[tuple[int, ...]], sampling: Sampling, seed: int) -> list[Generation]:
        torch = self.torch
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        torch.manual_seed(seed)
        with torch.no_grad():
            out = self.model.generate(
                input_ids=input_ids, attention_mask=mask, generation_config=self.generation_config(sampling)
            )
        gens = []
        for row in out[:, width:].tolist():
            ids: list[int] = []
            finish = "length"
            for t in row:
                ids.append(t)
                if t in self.eos_ids:
                    finish = "stop"
                    break
            gens.append(Generation.from_ids(self.tokenizer.decode(ids, skip_special_tokens=True), ids, finish))
        return gens

    def submit(self, requests: Sequence[Request], sampling: Sampling) -> None:
        rendered = [
            r if r.prompt_ids is not None else Request(r.id, r.messages, tuple(self.render_ids(r.messages)), r.sample)
            for r in requests
        ]
        for unit in units(rendered, self.batch_size):
            self._queue.append((unit, sampling))

    def unfinished(self) -> int:
        return sum(len(unit) for unit, _ in self._queue)

    def poll(self) -> list[tuple[int, Generation]]:
        if not self._queue:
            return []
        unit, sampling = self._queue.popleft()
        gens = self._one_pass([r.prompt_ids for r in unit], sampling, sampling.seed + unit[0].sample)
        return [(r.id, g) for r, g in zip(unit, gens)]

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        return generate_all(self, prompts, sampling)
