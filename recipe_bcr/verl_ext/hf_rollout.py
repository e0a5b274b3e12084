"""A Hugging Face transformers rollout for verl 0.9.1 (`actor_rollout_ref.rollout.name=hf`).

verl 0.9.1 registers only vLLM, SGLang and TensorRT-LLM rollouts. This one serves the
same token-in/token-out contract (`generate(prompt_ids, sampling_params, request_id)` ->
`TokenOutput`) from a transformers model, so training runs where vLLM is not installed:
a CPU machine, or a GPU without vLLM. Three pieces, as verl's own backends have them:

- `HFReplica` (RolloutReplicaRegistry "hf"): one server actor per training rank, on the
  rank's node and device (hybrid mode: rollout and trainer share the device);
- `HFRolloutServer` (Ray actor): the model; batches concurrent requests, samples with
  exactly the configured temperature / top-p / top-k (and seed, when a request has one),
  returns log-probs when asked: the model's, log_softmax(logits / temperature) as verl's
  actor computes them, never the top-p/top-k-truncated sampling scores;
- `HFServerAdapter` (verl's worker-side `BaseRollout`): receives the actor's full weights
  at every sync (`checkpoint_engine.backend=naive`) and loads them into its server.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Generator, Optional

import ray
import torch
from transformers.cache_utils import DynamicCache, DynamicLayer
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutMode, RolloutReplica, TokenOutput

logger = logging.getLogger(__name__)

_WEIGHT_BUCKET_BYTES = 256 << 20


def server_name(replica_rank: int) -> str:
    return f"bcr_hf_rollout_server_{replica_rank}"


@dataclass(frozen=True)
class SamplingKey:
    """Requests are batched together only when they sample identically."""

    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float
    max_tokens: int
    logprobs: bool
    seed: Optional[int] = None


def sampling_key(params: dict[str, Any], default_max_tokens: int) -> SamplingKey:
    """verl's sampling dict -> the settings generate() gets; top_k <= 0 means off (vLLM's -1)."""
    known = {
        "temperature",
        "top_p",
        "top_k",
        "repetition_penalty",
        "max_tokens",
        "max_new_tokens",
        "logprobs",
        "ignore_eos",
        "seed",
    }
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"HF rollout: sampling parameters {unknown} are not supported")
    if params.get("ignore_eos"):
        raise ValueError("HF rollout: ignore_eos=True is not supported")
    max_tokens = params.get("max_tokens", params.get("max_new_tokens", default_max_tokens))
    return SamplingKey(
        temperature=float(params.get("temperature", 1.0)),
        top_p=float(params.get("top_p", 1.0)),
        top_k=max(0, int(params.get("top_k", -1) or 0)),
        repetition_penalty=float(params.get("repetition_penalty", 1.0) or 1.0),
        max_tokens=int(max_tokens),
        logprobs=bool(params.get("logprobs")),
        seed=None if params.get("seed") is None else int(params["seed"]),
    )


@dataclass
class _Request:
    prompt_ids: list[int]
    key: SamplingKey
    future: asyncio.Future = field(repr=False)


def trim_completion(row: list[int], eos_ids: set[int]) -> list[int]:
    """Generated ids up to and including the first EOS, as vLLM returns them (the rest is padding)."""
    for i, tok in enumerate(row):
        if tok in eos_ids:
            return row[: i + 1]
    return row


def token_logprobs(logits: tuple[torch.Tensor, ...], tokens: torch.Tensor, temperature: float) -> torch.Tensor:
    """Log-probability of each sampled token under the model at `temperature` (raw logits / T),
    which is what verl's actor recomputes; top-p/top-k only choose what is sampled.
    `logits`: generate()'s one (batch, vocab) tensor per step; `tokens` (batch, steps). One op per step for
    the whole batch (not per token), and never a (steps, batch, vocab) copy: a large vocabulary stays affordable."""
    rows = torch.arange(tokens.shape[0], device=tokens.device)
    return torch.stack(
        [torch.log_softmax(step.float() / temperature, -1)[rows, tokens[:, t]] for t, step in enumerate(logits)], dim=1
    )


class PreallocatedLayer(DynamicLayer):
    """A DynamicLayer whose keys and values live in one buffer sized for the whole generation:
    a new token is written in place and attention sees a view of the filled part. The stock
    layer concatenates, copying the whole cache at every token (a quarter of a toy rollout's
    time, py-spy; benchmarks/step_profile.md)."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.length = 0

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        b, h, _, d = key_states.shape
        self._k = key_states.new_empty(b, h, self.capacity, d)
        self._v = value_states.new_empty(b, h, self.capacity, value_states.shape[-1])
        self.keys, self.values = self._k[:, :, :0], self._v[:, :, :0]
        self.is_initialized = True

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        if end > self.capacity:
            raise RuntimeError(f"HF rollout: KV cache of {self.capacity} tokens overflowed ({end})")
        self._k[:, :, self.length : end] = key_states
        self._v[:, :, self.length : end] = value_states
        self.length = end
        self.keys, self.values = self._k[:, :, :end], self._v[:, :, :end]
        return self.keys, self.values


def preallocated_cache(num_layers: int, capacity: int) -> DynamicCache:
    cache = DynamicCache()
    cache.layers = [PreallocatedLayer(capacity) for _ in range(num_layers)]
    cache.layer_class_to_replicate = None
    return cache


@torch.inference_mode()
def generate_batch(
    model: Any, prompts: list[list[int]], key: SamplingKey, eos_ids: set[int], pad_id: int
) -> list[tuple[list[int], Optional[list[float]]]]:
    """One generate() over left-padded prompts with transformers' own sampling (temperature, top-k,
    top-p, repetition penalty); each completion trimmed after its first EOS, with its log-probs."""
    from transformers import GenerationConfig

    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(prompts):  # left padding
        ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
        mask[i, width - len(p) :] = 1
    sample = key.temperature > 0
    # A fresh GenerationConfig: nothing from the model's generation_config (e.g. top_k=50) applies.
    gen_cfg = GenerationConfig(
        max_new_tokens=key.max_tokens,
        do_sample=sample,
        temperature=key.temperature if sample else None,
        top_p=key.top_p if sample else None,
        top_k=key.top_k if sample else None,
        repetition_penalty=key.repetition_penalty,
        eos_token_id=sorted(eos_ids),
        pad_token_id=pad_id,
        output_logits=key.logprobs,
        return_dict_in_generate=True,
    )
    if key.seed is not None:  # requests are batched by seed (SamplingKey), so the batch replays
        torch.manual_seed(key.seed)
    cache = preallocated_cache(model.config.get_text_config().num_hidden_layers, width + key.max_tokens)
    out = model.generate(
        input_ids=ids.to(model.device),
        attention_mask=mask.to(model.device),
        generation_config=gen_cfg,
        past_key_values=cache,
    )
    seqs = out.sequences[:, width:]
    lps = token_logprobs(out.logits, seqs, key.temperature if sample else 1.0).tolist() if key.logprobs else None
    results = []
    for i, row in enumerate(seqs.tolist()):
        tokens = trim_completion(row, eos_ids)
        results.append((tokens, lps[i][: len(tokens)] if lps is not None else None))
    return results


class HFRolloutServer:
    """Ray actor holding one transformers model copy; async so requests queue while a batch runs."""

    def __init__(self, config: Any, model_config: Any, replica_rank: int, cuda_visible_devices: Optional[str]) -> None:
        if cuda_visible_devices:
            os.environ["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices
        from transformers import AutoModelForCausalLM
        from verl.utils.config import omega_conf_to_dataclass
        from verl.utils.torch_dtypes import PrecisionType
        from verl.workers.config import HFModelConfig

        self.config = omega_conf_to_dataclass(config)
        self.model_config = omega_conf_to_dataclass(model_config, dataclass_type=HFModelConfig)
        self.replica_rank = replica_rank
        self.device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
        self.dtype = PrecisionType.to_dtype(self.config.dtype)
        self.model = AutoModelForCausalLM.from_pretrained(
            self.model_config.local_path,
            torch_dtype=self.dtype,
            attn_implementation="sdpa",
            trust_remote_code=self.model_config.trust_remote_code,
        ).to(self.device)
        self.model.eval()
        tok = self.model_config.tokenizer
        gen = self.model_config.generation_config
        eos = getattr(gen, "eos_token_id", None) if gen is not None else None
        eos = eos if eos is not None else tok.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else next(iter(self.eos_ids))
        torch.manual_seed(int(self.config.seed) + replica_rank)
        self.global_steps: Optional[int] = None
        self.max_batch = max(1, int(self.config.max_num_seqs))
        self._pending: list[_Request] = []
        self._batcher: Optional[asyncio.Task] = None
        self._model_lock = asyncio.Lock()
        self._synced: set[str] = set()

    def ready(self) -> bool:
        return True

    async def generate(
        self, prompt_ids: list[int], sampling_params: dict[str, Any], request_id: str, **kwargs: Any
    ) -> TokenOutput:
        media = [k for k in ("image_data", "video_data", "audio_data") if kwargs.get(k) is not None]
        if media:
            raise ValueError(f"HF rollout: multimodal inputs {media} are not supported")
        prompt_ids = [int(t) for t in prompt_ids]
        room = int(self.config.prompt_length + self.config.response_length) - len(prompt_ids)
        default = max(1, min(int(self.config.response_length), room))
        key = sampling_key(dict(sampling_params), default)
        key = SamplingKey(**{**key.__dict__, "max_tokens": max(1, min(key.max_tokens, default))})
        fut = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(prompt_ids, key, fut))
        if self._batcher is None or self._batcher.done():
            self._batcher = asyncio.create_task(self._drain())
        token_ids, log_probs = await fut
        return TokenOutput(
            token_ids=token_ids,
            log_probs=log_probs,
            stop_reason="completed",
            extra_fields={"global_steps": self.global_steps},
        )

    async def _gather(self, quiet_s: float = 0.02) -> None:
        """Wait until max_num_seqs requests are waiting or none has arrived for `quiet_s`: a step's
        requests reach the server one Ray call at a time, and a batch closed on a fixed timer left
        stragglers for a second generate() after the first (a rollout took twice its time)."""
        seen = -1
        while len(self._pending) != seen and len(self._pending) < self.max_batch:
            seen = len(self._pending)
            await asyncio.sleep(quiet_s)

    async def _drain(self) -> None:
        await self._gather()
        while self._pending:
            key = self._pending[0].key
            batch = [r for r in self._pending if r.key == key][: self.max_batch]
            taken = {id(r) for r in batch}
            self._pending = [r for r in self._pending if id(r) not in taken]
            try:
                async with self._model_lock:
                    results = await asyncio.to_thread(
                        generate_batch, self.model, [r.prompt_ids for r in batch], key, self.eos_ids, self.pad_id
                    )
            except Exception as e:  # noqa: BLE001 - every waiting request gets the error
                for r in batch:
                    if not r.future.done():
                        r.future.set_exception(e)
                continue
            for r, res in zip(batch, results):
                if not r.future.done():
                    r.future.set_result(res)

    async def load_weights(
        self, named: dict[str, torch.Tensor], global_steps: Optional[int] = None, last: bool = True
    ) -> None:
        """One bucket of a weight sync; the last bucket checks that every parameter arrived,
        so a partial sync never leaves the rollout sampling from stale weights unnoticed."""
        async with self._model_lock:
            state = {k: v.to(self.device, self.dtype) for k, v in named.items()}
            _, unexpected = self.model.load_state_dict(state, strict=False)
            if unexpected:
                raise KeyError(f"HF rollout: weights not in the model: {unexpected[:5]}")
            self._synced.update(state)
        if last:
            stale = sorted({n for n, _ in self.model.named_parameters()} - self._synced)
            self._synced = set()
            if stale:
                raise KeyError(f"HF rollout: the weight sync left {len(stale)} parameter(s) stale, e.g. {stale[:5]}")
            self.global_steps = global_steps

    async def wake_up(self, tags: Optional[list[str]] = None) -> None:
        if self.device.type == "cuda" and (tags is None or "weights" in tags):
            self.model.to(self.device)

    async def sleep(self) -> None:
        if self.device.type == "cuda":
            async with self._model_lock:
                self.model.to("cpu")
                torch.cuda.empty_cache()

    async def set_global_steps(self, global_steps: int) -> None:
        self.global_steps = global_steps

    async def wait_for_requests_to_drain(self) -> None:
        while self._pending or (self._batcher is not None and not self._batcher.done()):
            await asyncio.sleep(0.01)

    async def clear_kv_cache(self) -> None:  # no persistent KV cache between requests
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def abort_all_requests(self, reset_prefix_cache: bool = True, reject_request: bool = False) -> dict:
        return {}

    async def resume_generation(self) -> None:
        return None

    async def start_profile(self, **kwargs: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None


class HFReplica(RolloutReplica):
    """One HF server per training rank, colocated with it (hybrid mode only)."""

    async def launch_servers(self) -> None:
        from verl.plugin.platform import get_platform

        if self.rollout_mode != RolloutMode.HYBRID:
            raise NotImplementedError("the HF rollout runs colocated with the trainer only (hybrid mode)")
        if self.world_size != 1:
            raise ValueError(
                "the HF rollout keeps one model copy per device: set actor_rollout_ref.rollout."
                "tensor_model_parallel_size, data_parallel_size and pipeline_model_parallel_size to 1"
            )
        worker = self.workers[0]
        node_id, devices = await worker.__ray_call__.remote(
            lambda w: (ray.get_runtime_context().get_node_id(), os.environ.get("CUDA_VISIBLE_DEVICES"))
        )
        env_vars = {var: "1" for var in get_platform().ray_noset_envvars()}
        server = (
            ray.remote(HFRolloutServer)
            .options(
                scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                    node_id=node_id, soft=False
                ),
                runtime_env={"env_vars": env_vars},
                name=server_name(self.replica_rank),
                max_concurrency=self.max_concurrency,
                num_cpus=0,
            )
            .remote(
                config=self.config,
                model_config=self.model_config,
                replica_rank=self.replica_rank,
                cuda_visible_devices=devices,
            )
        )
        await server.ready.remote()
        self.servers = [server]
        self._server_handle = server
        self._server_address = f"hf-rollout-{self.replica_rank}"


class HFServerAdapter(BaseRollout):
    """Worker-side end of the HF rollout: forwards weight syncs and sleep/wake to its server."""

    def __init__(self, config: Any, model_config: Any, device_mesh: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, model_config, device_mesh)
        self.replica_rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
        self._server = None

    def _handle(self):  # the server starts after this adapter; look it up on first use
        if self._server is None:
            self._server = ray.get_actor(server_name(self.replica_rank))
        return self._server

    async def resume(self, tags: list[str]) -> None:
        await self._handle().wake_up.remote(tags)

    async def release(self) -> None:
        await self._handle().sleep.remote()

    async def update_weights(
        self,
        weights: Generator[tuple[str, torch.Tensor], None, None],
        wire_format: str = "named_tensors",
        **kwargs: Any,
    ) -> None:
        if wire_format != "named_tensors":
            raise ValueError(f"HF rollout: weight wire format {wire_format!r} is not supported")
        steps = kwargs.get("global_steps")
        bucket: dict[str, torch.Tensor] = {}
        size = 0
        for name, tensor in weights:
            t = tensor.detach()
            if hasattr(t, "full_tensor"):
                t = t.full_tensor()
            bucket[name] = t.to("cpu", copy=True)
            size += t.numel() * t.element_size()
            if size >= _WEIGHT_BUCKET_BYTES:
                await self._handle().load_weights.remote(bucket, global_steps=steps, last=False)
                bucket, size = {}, 0
        await self._handle().load_weights.remote(bucket, global_steps=steps, last=True)
