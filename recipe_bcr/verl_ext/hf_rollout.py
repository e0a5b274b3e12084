"""A Hugging Face transformers rollout for verl 0.9.1 (`actor_rollout_ref.rollout.name=hf`).

verl 0.9.1 registers only vLLM, SGLang and TensorRT-LLM rollouts. This one serves the
same token-in/token-out contract (`generate(prompt_ids, sampling_params, request_id)` ->
`TokenOutput`) from a transformers model, so training runs where vLLM is not installed:
a CPU machine, or a GPU without vLLM. Three pieces, as verl's own backends have them:

- `HFReplica` (RolloutReplicaRegistry "hf"): one server actor per training rank, on the
  rank's node and device (hybrid mode: rollout and trainer share the device);
- `HFRolloutServer` (Ray actor): the model; batches a step's requests (as many as the trainer
  announces before it dispatches them, `announce_steps`), decodes them with
  each distinct prompt prefilled once and its keys shared by its rows (`generate_batch`),
  samples from the distribution transformers' generate() samples from (its logits processors
  for the configured temperature / top-p / top-k / repetition penalty), each row with its
  own random numbers (`row_uniforms`), so that a seed gives the same completions however
  verl's requests arrive; returns log-probs when asked: the model's,
  log_softmax(logits / temperature) as verl's actor computes them, never the
  top-p/top-k-truncated sampling scores;
- `HFServerAdapter` (verl's worker-side `BaseRollout`): receives the actor's full weights
  at every sync (`checkpoint_engine.backend=naive`) and loads them into its server.
"""

from __future__ import annotations

import asyncio
import logging
import numbers
import os
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generator, Optional

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutMode, RolloutReplica, TokenOutput

logger = logging.getLogger(__name__)

_WEIGHT_BUCKET_BYTES = 256 << 20


def server_name(replica_rank: int) -> str:
    return f"bcr_hf_rollout_server_{replica_rank}"


@dataclass(frozen=True)
class SamplingKey:
    """Requests are batched together only when they sample identically (each row draws from its own seed)."""

    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float
    max_tokens: int
    logprobs: bool


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
        ROW_PLACE,
    }
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"HF rollout: sampling parameters {unknown} are not supported")
    if params.get("ignore_eos"):
        raise ValueError("HF rollout: ignore_eos=True is not supported")
    seed = params.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"HF rollout: sampling parameter seed must be a non-negative integer, got {seed!r}")
    max_tokens = params.get("max_tokens", params.get("max_new_tokens", default_max_tokens))
    return SamplingKey(
        temperature=float(params.get("temperature", 1.0)),
        top_p=float(params.get("top_p", 1.0)),
        top_k=max(0, int(params.get("top_k", -1) or 0)),
        repetition_penalty=float(params.get("repetition_penalty", 1.0) or 1.0),
        max_tokens=int(max_tokens),
        logprobs=bool(params.get("logprobs")),
    )


ROW_PLACE = "bcr_row_place"
"""A sampling parameter the agent loop may add: the row's place in its dispatch, (the prompt's position, its session),
which numbers the rows of a prompt in place of their arrival (`HFRolloutServer._number_rows`)."""


@dataclass
class _Request:
    prompt_ids: list[int]
    key: SamplingKey
    seed: Optional[int]  # None until the server numbers the row (`_number_rows`); set now for a request's own seed
    future: asyncio.Future = field(repr=False)
    place: Optional[tuple[int, ...]] = None  # ROW_PLACE


def trim_completion(row: list[int], eos_ids: set[int]) -> list[int]:
    """Generated ids up to and including the first EOS, as vLLM returns them (the rest is padding)."""
    for i, tok in enumerate(row):
        if tok in eos_ids:
            return row[: i + 1]
    return row


class SharedPrefixCache:
    """KV cache for sampling `group` completions of each distinct prompt: each prompt's keys and values
    (its prefill) are stored once and every completion of it attends to that one copy; each row's
    completion keys and values go into one buffer sized for the whole generation, written in place.

    A toy step samples 8 completions of each of 8 ~225-token prompts: with a copy of the prompt per row,
    reading the cache at every token was 44% of the rollout (sdpa over 64 rows; torch profiler), and the
    prefill computed every prompt 8 times. It is passed to the model both as `past_key_values` (the
    layers' `update`) and as the attention mask (`SHARED_PREFIX_ATTENTION` reads the prompts from it).
    Keys and values are kept in float32 whatever the model's dtype: the attention's scores and sums are
    then float32 as in sdpa's kernels, which the actor's log-probs come from (in bfloat16 scores rounded
    to 8 bits put the rollout's token probabilities up to 0.19 off the actor's on an H100)."""

    def __init__(self, prefix: Any, prompt_mask: torch.Tensor, rows: int, capacity: int) -> None:
        self.prefix = [(layer.keys.float(), layer.values.float()) for layer in prefix.layers]
        k = self.prefix[0][0]
        self.group = rows // k.shape[0]
        # additive mask over each prompt's positions (left padding -> -inf), broadcast over heads and queries
        self.prompt_bias = torch.zeros(prompt_mask.shape, dtype=k.dtype, device=k.device)
        self.prompt_bias.masked_fill_(prompt_mask == 0, torch.finfo(k.dtype).min)
        self.prompt_bias = self.prompt_bias[:, None, None, :]
        shape = (rows, k.shape[1], capacity, k.shape[-1])
        self.buffers = [(k.new_empty(shape), v.new_empty(shape[:-1] + (v.shape[-1],))) for _, v in self.prefix]
        self.lengths = [0] * len(self.prefix)

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any):
        end = self.lengths[layer_idx] + key.shape[-2]
        kb, vb = self.buffers[layer_idx]
        if end > kb.shape[-2]:
            raise RuntimeError(f"HF rollout: KV cache of {kb.shape[-2]} tokens overflowed ({end})")
        kb[:, :, self.lengths[layer_idx] : end] = key
        vb[:, :, self.lengths[layer_idx] : end] = value
        self.lengths[layer_idx] = end
        return kb[:, :, :end], vb[:, :, :end]


def shared_prefix_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: Optional[float] = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """One decoding token per row: softmax(q K^T * scaling) V over [its prompt's shared keys, its own
    completion's keys], the prompt part as one product per prompt for all its rows. Any other call (the
    prefill, training) is transformers' sdpa."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if not isinstance(attention_mask, SharedPrefixCache) or query.shape[2] != 1:
        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)
    cache = attention_mask
    pk, pv = cache.prefix[module.layer_idx]
    rows, heads, _, dim = query.shape
    prompts, kv_heads, plen, g = pk.shape[0], pk.shape[1], pk.shape[2], cache.group
    rep = heads // kv_heads
    scale = dim**-0.5 if scaling is None else scaling

    def by_prompt(x: torch.Tensor) -> torch.Tensor:  # (rows, kv, rep, n) -> (prompts, kv, g * rep, n)
        return x.view(prompts, g, kv_heads, rep, -1).transpose(1, 2).reshape(prompts, kv_heads, g * rep, -1)

    def by_row(x: torch.Tensor) -> torch.Tensor:  # the inverse
        return x.view(prompts, kv_heads, g, rep, -1).transpose(1, 2).reshape(rows, kv_heads, rep, -1)

    q = query.view(rows, kv_heads, rep, dim).float()  # the cache's keys and values are float32
    scores_prompt = torch.matmul(by_prompt(q), pk.transpose(-1, -2)) * scale + cache.prompt_bias
    scores_own = torch.matmul(q, key.transpose(-1, -2)) * scale
    probs = torch.softmax(torch.cat([by_row(scores_prompt), scores_own], -1), -1)
    out = by_row(torch.matmul(by_prompt(probs[..., :plen]), pv)) + torch.matmul(probs[..., plen:], value)
    return out.to(query.dtype).view(rows, 1, heads, dim), None


SHARED_PREFIX_ATTENTION = "bcr_shared_prefix"


def _register_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(SHARED_PREFIX_ATTENTION, shared_prefix_attention)
    AttentionMaskInterface.register(SHARED_PREFIX_ATTENTION, sdpa_mask)  # the prefill's mask: sdpa's


def logits_processors(key: SamplingKey) -> Any:
    """What generate() builds for these settings, in its order: repetition penalty, then the warpers."""
    from transformers import LogitsProcessorList
    from transformers.generation import logits_process as lp

    procs = LogitsProcessorList()
    if key.repetition_penalty != 1.0:
        procs.append(lp.RepetitionPenaltyLogitsProcessor(key.repetition_penalty))
    if key.temperature > 0:
        if key.temperature != 1.0:
            procs.append(lp.TemperatureLogitsWarper(key.temperature))
        if key.top_k > 0:
            procs.append(lp.TopKLogitsWarper(key.top_k))
        if key.top_p < 1.0:
            procs.append(lp.TopPLogitsWarper(key.top_p))
    return procs


def row_seed(seed: int, step: Optional[int], prompt: list[int], k: int) -> int:
    """The seed of one row's draws: (the server's seed, the training step, its prompt, how many rows of
    that prompt the server took before it in this step).

    verl sends each rollout to the server as its own request, so which rows share a batch and in what
    order depends on timing: one generator for the batch made a seed's run unrepeatable (two runs of
    the same seed ended 0.661 and 0.945 in first-position accuracy). A prompt's rows are exchangeable
    (its n rollouts), so numbering them by arrival leaves each row's draws independent of the batching,
    and counting over the step keeps two batches of one prompt from drawing alike."""
    import hashlib

    digest = hashlib.blake2b(repr((seed, step, k, prompt)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def row_uniforms(seeds: list[int], tokens: int) -> torch.Tensor:
    """(rows, tokens) uniform draws in [0, 1), float64, each row's from a generator of its own seed."""
    out = torch.empty(len(seeds), tokens, dtype=torch.float64)
    for r, seed in enumerate(seeds):
        out[r] = torch.rand(tokens, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return out


def sample_tokens(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One token per row by the inverse of its cumulative distribution at `u` (rows,): token i where
    cdf[i-1] <= u * total < cdf[i], so a token of probability 0 is never drawn. Float64 sums."""
    cdf = probs.double().cumsum(-1)
    total = cdf[:, -1:]
    x = torch.minimum(u[:, None] * total, torch.nextafter(total, torch.zeros_like(total)))
    return torch.searchsorted(cdf, x, right=True).squeeze(1)


def group_rows(prompts: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """(distinct prompts, row order that puts each prompt's rows together). Shared only when every
    distinct prompt has the same number of rows (verl's n rollouts per prompt); else one group per row."""
    distinct: dict[tuple[int, ...], list[int]] = {}
    for i, p in enumerate(prompts):
        distinct.setdefault(tuple(p), []).append(i)
    if len({len(rows) for rows in distinct.values()}) != 1:
        return prompts, list(range(len(prompts)))
    return [list(p) for p in distinct], [i for rows in distinct.values() for i in rows]


@torch.inference_mode()
def generate_batch(
    model: Any, prompts: list[list[int]], key: SamplingKey, eos_ids: set[int], pad_id: int, seeds: list[int]
) -> list[tuple[list[int], Optional[list[float]]]]:
    """Sample completions for left-padded prompts from what transformers' generate() samples from (its
    logits processors, softmax, pad after EOS), each row with the draws of its own seed (`seeds`, as
    `row_seed` makes them), each prompt prefilled once; each completion trimmed after its first EOS, with
    its log-probs: log_softmax(raw logits / temperature), what verl's actor recomputes (top-p/top-k only
    choose what is sampled)."""
    layer_types = set(getattr(model.config.get_text_config(), "layer_types", None) or ["full_attention"])
    if layer_types != {"full_attention"}:  # the shared-prefix attention has no sliding window
        raise ValueError(f"HF rollout: layer types {sorted(layer_types)} are not supported, only full_attention")
    if model.config._attn_implementation != SHARED_PREFIX_ATTENTION:
        _register_attention()
        model.set_attn_implementation(SHARED_PREFIX_ATTENTION)
    distinct, order = group_rows(prompts)
    rows, dev = len(prompts), model.device
    width = max(len(p) for p in distinct)
    ids = torch.full((len(distinct), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(distinct):  # left padding
        ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
        mask[i, width - len(p) :] = 1
    ids, mask = ids.to(dev), mask.to(dev)
    sample = key.temperature > 0
    temperature = key.temperature if sample else 1.0
    procs = logits_processors(key)
    out = model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0), logits_to_keep=1)
    g = rows // len(distinct)
    cache = SharedPrefixCache(out.past_key_values, mask, rows, key.max_tokens)
    logits = out.logits[:, -1].float().repeat_interleave(g, 0)
    position = mask.sum(-1).repeat_interleave(g, 0)[:, None]  # the first completion token's position
    seqs = torch.cat([ids.repeat_interleave(g, 0), torch.full((rows, key.max_tokens), pad_id, device=dev)], 1)
    eos = torch.tensor(sorted(eos_ids), device=dev)
    unfinished = torch.ones(rows, dtype=torch.long, device=dev)
    lps = torch.zeros(rows, key.max_tokens, device=dev) if key.logprobs else None
    steps = key.max_tokens
    draws = row_uniforms([seeds[i] for i in order], key.max_tokens).to(dev) if sample else None
    for t in range(key.max_tokens):
        scores = procs(seqs[:, : width + t], logits) if procs else logits
        if draws is not None:
            tokens = sample_tokens(torch.softmax(scores, -1), draws[:, t])
        else:
            tokens = torch.argmax(scores, -1)
        tokens = tokens * unfinished + pad_id * (1 - unfinished)
        seqs[:, width + t] = tokens
        if lps is not None:
            lps[:, t] = torch.log_softmax(logits / temperature, -1).gather(-1, tokens[:, None]).squeeze(-1)
        unfinished = unfinished & ~torch.isin(tokens, eos)
        if t + 1 == key.max_tokens or not bool(unfinished.any()):
            steps = t + 1
            break
        step = {"full_attention": cache}
        logits = (
            model(input_ids=tokens[:, None], position_ids=position + t, attention_mask=step, past_key_values=cache)
            .logits[:, -1]
            .float()
        )
    new = seqs[:, width : width + steps].tolist()
    lp = lps[:, :steps].tolist() if lps is not None else None
    results: list[tuple[list[int], Optional[list[float]]]] = [([], None)] * rows
    for r, i in enumerate(order):
        tokens = trim_completion(new[r], eos_ids)
        results[i] = (tokens, lp[r][: len(tokens)] if lp is not None else None)
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
        self.seed = int(self.config.seed) + replica_rank
        self._rows_taken: dict[tuple[int, ...], int] = {}  # prompt -> its rows taken in this step
        self._rows_step: Optional[int] = None
        self.global_steps: Optional[int] = None
        self.max_batch = max(1, int(self.config.max_num_seqs))
        self._pending: list[_Request] = []
        self._expected: Optional[int] = None  # requests the next dispatch sends, as the trainer announced them
        self._batcher: Optional[asyncio.Task] = None
        self._model_lock = asyncio.Lock()
        self._synced: set[str] = set()

    # the clock `_gather` waits by, and its pause (a test gives its own)
    _clock: Callable[[], float] = staticmethod(time.monotonic)
    _pause: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def ready(self) -> bool:
        return True

    async def expect(self, rows: int) -> None:
        """The next `rows` requests are one dispatch of verl's agent loop (a step's n x batch, or a validation
        batch's): `_gather` closes the batch on that count, not on a pause in the arrivals."""
        self._expected = int(rows)

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
        own = sampling_params.get("seed")
        seed = None if own is None else row_seed(int(own), None, prompt_ids, 0)  # a request's own seed replays it
        place = sampling_params.get(ROW_PLACE)
        self._pending.append(_Request(prompt_ids, key, seed, fut, None if place is None else tuple(place)))
        if self._batcher is None or self._batcher.done():
            self._batcher = asyncio.create_task(self._drain())
        token_ids, log_probs = await fut
        return TokenOutput(
            token_ids=token_ids,
            log_probs=log_probs,
            stop_reason="completed",
            extra_fields={"global_steps": self.global_steps},
        )

    def _number_rows(self) -> None:
        """Seeds for the waiting rows that came without one: (the server's seed, the step, the prompt, how many rows
        of that prompt the server took before it in this step), `row_seed`.

        A prompt's rollouts are exchangeable, but a prompt drawn twice in a step (two GRPO groups of equal text) is
        not: which of its completions land in which group moves the advantages. Numbered by arrival, that depended on
        timing (a toy pilot's seed drifted at step 30 with the same completions in other groups), so rows are numbered
        in the order of their places in the dispatch (`ROW_PLACE`, which the in-process agent loop sends), arrival
        only among rows without one."""
        if self._rows_step != self.global_steps:
            self._rows_taken, self._rows_step = {}, self.global_steps
        unnumbered = [r for r in self._pending if r.seed is None]
        for r in sorted(unnumbered, key=lambda r: (r.place is None, r.place or ())):  # stable: arrival breaks ties
            prompt = tuple(r.prompt_ids)
            k = self._rows_taken[prompt] = self._rows_taken.get(prompt, -1) + 1
            r.seed = row_seed(self.seed, self.global_steps, r.prompt_ids, k)

    async def _gather(self, quiet_s: float = 0.1, stall_s: float = 60.0, poll_s: float = 0.005) -> None:
        """Wait until the announced dispatch has fully arrived (`expect`); unannounced, until none has arrived for
        `quiet_s`.

        A step's requests reach the server one Ray call at a time, over ~0.1 s on a busy CPU, and a row's floats
        depend on the rows beside it in its batch (a CPU matmul may take another kernel for other shapes; the
        padding beside a longer prompt moves the last bits), so which rows share a batch must not depend on when
        they arrived: a batch closed early left stragglers for a second generate(), and the main part run again
        beside other jobs drew one token otherwise at step 7 of a seed. The trainer knows how many requests each
        dispatch sends and announces it (`announce_steps`), so the batch is the whole dispatch whatever the timing.
        Unannounced (several servers, whose shares verl's load balancer decides per request; a later turn of a
        multi-turn agent loop), the batch closes on `quiet_s` of quiet, and which rows share it can depend on
        timing. An announced dispatch that stops short (none for `stall_s`) is generated as it is, with a warning."""
        expected, self._expected = self._expected, None
        seen, last = len(self._pending), self._clock()
        while len(self._pending) < (expected or 0) or (not expected and self._clock() - last < quiet_s):
            if expected and self._clock() - last >= stall_s:
                logger.warning(
                    "HF rollout: %d of %d announced requests arrived in %.0f s; generating them",
                    seen,
                    expected,
                    stall_s,
                )
                return
            await self._pause(poll_s)
            if len(self._pending) != seen:
                seen, last = len(self._pending), self._clock()

    async def _drain(self) -> None:
        await self._gather()
        # the whole step in one order whatever its arrival, cut into batches of max_num_seqs: which rows share a
        # batch, and where each sits in its matmuls, is fixed by the rows alone (a step of 16 prompts x 8 rollouts
        # is two batches of 64; taken in arrival order, the rows of each depended on timing)
        while self._pending:
            self._number_rows()  # rows that arrived while a batch ran, too
            self._pending.sort(key=lambda r: (r.prompt_ids, r.seed))
            key = self._pending[0].key
            batch = [r for r in self._pending if r.key == key][: self.max_batch]
            taken = {id(r) for r in batch}
            self._pending = [r for r in self._pending if id(r) not in taken]
            try:
                async with self._model_lock:
                    results = await asyncio.to_thread(
                        generate_batch,
                        self.model,
                        [r.prompt_ids for r in batch],
                        key,
                        self.eos_ids,
                        self.pad_id,
                        [r.seed for r in batch],
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

    def start_server(self, node_id: str, cuda_visible_devices: Optional[str]) -> Any:
        """Create this replica's named server actor on `node_id` and return its handle at once: the
        server's process starts, imports and loads the model while the caller goes on."""
        from verl.plugin.platform import get_platform

        env_vars = {var: "1" for var in get_platform().ray_noset_envvars()}
        return (
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
                cuda_visible_devices=cuda_visible_devices,
            )
        )

    async def launch_servers(self) -> None:
        if self.rollout_mode != RolloutMode.HYBRID:
            raise NotImplementedError("the HF rollout runs colocated with the trainer only (hybrid mode)")
        if self.world_size != 1:
            raise ValueError(
                "the HF rollout keeps one model copy per device: set actor_rollout_ref.rollout."
                "tensor_model_parallel_size, data_parallel_size and pipeline_model_parallel_size to 1"
            )
        server = _PRESTARTED.pop(self.replica_rank, None)  # started ahead of the training workers
        if server is None:
            node_id, devices = await self.workers[0].__ray_call__.remote(
                lambda w: (ray.get_runtime_context().get_node_id(), os.environ.get("CUDA_VISIBLE_DEVICES"))
            )
            server = self.start_server(node_id, devices)
        await server.ready.remote()
        self.servers = [server]
        self._server_handle = server
        self._server_address = f"hf-rollout-{self.replica_rank}"


_PRESTARTED: dict[int, Any] = {}  # replica rank -> server handle, in the trainer's process until its replica takes it


def prestart_servers(config: Any) -> int:
    """Start the HF rollout servers of a CPU-only, one-node run before verl starts its training workers,
    so that the two processes start side by side instead of one after the other (~5 s of a toy run's
    start-up on 2 cores). There a server's node is the only node and its device the CPU, which verl
    would otherwise read from the training worker it waits for. Elsewhere (GPUs: the server must see
    its rank's CUDA_VISIBLE_DEVICES; several nodes) it starts nothing and verl's order stays.
    Returns the number of servers started."""
    rollout, model = config.actor_rollout_ref.rollout, config.actor_rollout_ref.model
    if rollout.name != "hf" or config.trainer.device != "cpu":
        return 0
    nodes = [n for n in ray.nodes() if n["Alive"]]
    if len(nodes) != 1:
        return 0
    replicas = config.trainer.n_gpus_per_node * config.trainer.nnodes  # one per training rank (world_size 1)
    for rank in range(replicas):
        replica = HFReplica(replica_rank=rank, config=rollout, model_config=model)
        _PRESTARTED[rank] = replica.start_server(nodes[0]["NodeID"], None)
    return replicas


def dispatch_rows(batch: Any, rollout: Any) -> int:
    """Requests one dispatch of verl's agent loop sends (`AgentLoopManagerTQ.generate_sequences`): per prompt its
    `__rollout_n__`, else rollout.n (val_kwargs.n for a validation batch), as `AgentLoopWorkerTQ._run_prompt` picks
    it; a single-turn agent loop sends one request per rollout."""
    if "__rollout_n__" in batch.keys():
        return sum(int(n) for n in batch.get("__rollout_n__").tolist())
    validate = "validate" in batch.keys() and bool(batch["validate"])
    return len(batch) * int(rollout.val_kwargs.n if validate else rollout.n)


class AnnouncingAgentLoopManager:
    """verl's agent loop manager, telling the HF server how many requests a dispatch sends before it sends them."""

    def __init__(self, manager: Any, rollout: Any, server: Any) -> None:
        self._manager, self._rollout, self._server = manager, rollout, server

    def generate_sequences(self, batch: Any) -> Any:
        ray.get(self._server.expect.remote(dispatch_rows(batch, self._rollout)))
        return self._manager.generate_sequences(batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)


def announce_steps(manager: Any, config: Any) -> Any:
    """The trainer's agent loop manager, announcing each dispatch's size to the HF server when one server takes
    every request (one replica: one training rank). With several, verl's load balancer picks a server per request,
    so no server knows its share ahead, and each closes its batches on a pause instead (`HFRolloutServer._gather`)."""
    rollout = config.actor_rollout_ref.rollout
    if rollout.name != "hf" or config.trainer.n_gpus_per_node * config.trainer.nnodes != 1:
        return manager
    return AnnouncingAgentLoopManager(manager, rollout, ray.get_actor(server_name(0)))


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
