"""vLLM offline engine (GPU): tensor parallel, one seed per sample, engine token ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recipe_bcr.engines.base import Generation, Messages, Sampling


class VLLMEngine:
    def __init__(
        self,
        model: str,
        tokenizer: str | None = None,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: str = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError as e:
            raise ImportError(
                "engine=vllm needs vLLM: pip install 'bcr-recipe[gpu]' on a GPU machine, "
                "or use engine=transformers for small models"
            ) from e
        self.llm = LLM(
            model=model,
            tokenizer=tokenizer or model,
            tensor_parallel_size=tensor_parallel_size,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            dtype=dtype,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.chat_template_kwargs = dict(chat_template_kwargs or {})

    def render(self, messages: Messages) -> str:
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **self.chat_template_kwargs
        )

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        from vllm import SamplingParams

        texts = [self.render(p) for p in prompts]
        # one request per (prompt, sample) so every sample has its own seed
        requests = [(i, j) for i in range(len(texts)) for j in range(sampling.k)]
        params = [
            SamplingParams(
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                max_tokens=sampling.max_tokens,
                seed=sampling.seed + j,
            )
            for _, j in requests
        ]
        outputs = self.llm.generate([texts[i] for i, _ in requests], params, use_tqdm=True)
        results: list[list[Generation]] = [[] for _ in texts]
        for (i, _), out in zip(requests, outputs):
            o = out.outputs[0]
            finish = "length" if o.finish_reason == "length" else "stop"
            results[i].append(Generation.from_ids(o.text, o.token_ids, finish))
        return results
