"""verl's FSDP engine and hybrid worker on a CPU-only machine.

Two things stop verl 0.9.1's own classes there, and both are fixed by subclassing:
- `initialize_global_process_group_ray` builds the backend "cpu:gloo,cpu:gloo", which
  torch rejects; the worker opens the plain gloo group first (verl skips its own when
  a group exists);
- FSDP2 gives the forward-only reference model `CPUOffloadPolicy(pin_memory=True)`, and
  pinning needs CUDA; on a CPU, offloading to the CPU is moot, so the engine builds
  the reference like any other module. FSDP1 (`strategy=fsdp`) hard-codes
  `sync_module_states=True`, which needs a GPU, so it is refused with the fix.

And one is slow: without flash-attn's cross-entropy, verl's FSDP engine takes each token's log-prob
with `logprobs_from_logits_v2`, which calls `logsumexp` once per row of the (tokens, vocab) logits,
a Python loop over every token of a micro-batch (a fifth of the trainer's time in a toy step, py-spy;
benchmarks/step_profile.md). On a CPU the engine module's name is bound to one batched call instead.

And one computes what it need not: every row's prompt, though GRPO's rows repeat each prompt n times, and a
log-softmax at every position, though verl reads each row's response window only. On a CPU the engine's forward
step computes each distinct prompt of a micro-batch once and log-probs over the response windows
(`shared_prompt_response_logits`, below: same log-probs there, and gradients to float rounding).

And one ran on one core: Ray gives an actor that asks for no CPUs one torch thread, and verl's workers ask for
none; the worker takes the threads `BCR_TRAIN_THREADS` names (recipe_bcr/verl_ext/threads.py).

And one made runs unrepeatable: with verl's bypass mode the PPO anchor is the rollout's log-probs, whose last
bits depend on which requests shared the rollout's batch (timing). On-policy (one mini-batch, one epoch; the
trainer sets `bcr_anchor_on_actor` only then, `bcr.anchor_on_actor`) the anchor is the policy the update starts
from, which is the update's own forward: `anchor_on_actor` takes it from there (detached), as verl's old-log-prob
pass would compute it, and reports how far the rollout's log-probs were (the weight-sync check).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

import torch
from tensordict import TensorDict
from verl.utils import tensordict_utils as tu
from verl.utils.device import get_device_id, get_device_name
from verl.utils.metric import AggregationType, Metric
from verl.workers.engine import EngineRegistry
from verl.workers.engine.fsdp import transformer_impl
from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead
from verl.workers.engine.utils import detach_tree
from verl.workers.engine_workers import ActorRolloutRefWorker
from verl.workers.utils.padding import no_padding_2_padding

from recipe_bcr.verl_ext.threads import apply_train_threads

ANCHOR_FLAG = "bcr_anchor_on_actor"  # a non-tensor field of the update's batch (BCRTrainer._update_actor)


def batched_logprobs(logits: torch.Tensor, labels: torch.Tensor, inplace_backward: bool = True) -> torch.Tensor:
    """log_softmax(logits)[label], as `logprobs_from_logits_v2` computes it (logit - logsumexp), in one call."""
    if logits.dtype not in (torch.float32, torch.float64):  # v2's own bf16 path: log_softmax per row
        return torch.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


transformer_impl.logprobs_from_logits = batched_logprobs


def anchor_on_actor(loss_function: Any, model_output: dict, data: TensorDict, dp_group: Any = None) -> Any:
    """`loss_function` with the batch's old log-probs replaced by the update's own (detached), plus
    actor/rollout_logprob_gap_max: the largest per-token gap between the rollout's log-probs and these."""
    old = data["old_log_probs"]
    if not old.is_nested:  # verl 0.9.1's v1 trainer hands the engine jagged rows (TransferQueue)
        raise RuntimeError(
            "bcr.anchor_on_actor expects the update's old_log_probs as a jagged nested tensor, as verl 0.9.1 sends "
            "them: recipe_bcr/verl_ext/engine_cpu.py must be updated for this verl, or set bcr.anchor_on_actor=false"
        )
    own = no_padding_2_padding(model_output["log_probs"], data).detach()  # (rows, width of the loss's tensors)
    lengths = old.offsets().diff().tolist()
    gap = (old.values() - torch.cat([own[i, :n] for i, n in enumerate(lengths)])).abs().max()
    data = data.copy()  # shallow: the caller's batch keeps the rollout's log-probs
    data["old_log_probs"] = own  # padded like the loss pads every field (zeros past each row's end, masked)
    loss, metrics = loss_function(model_output=model_output, data=data, dp_group=dp_group)
    metrics["actor/rollout_logprob_gap_max"] = Metric(value=gap.item(), aggregation=AggregationType.MAX)
    return loss, metrics


@EngineRegistry.register(model_type="language_model", backend=["fsdp", "fsdp2"], device="cpu")
class CPUFSDPEngineWithLMHead(FSDPEngineWithLMHead):
    def _build_fsdp_module(self, module: torch.nn.Module) -> Any:
        if self.engine_config.strategy != "fsdp2":
            raise ValueError(
                "on a CPU-only machine verl's FSDP1 cannot start (it hard-codes sync_module_states=True, "
                "which needs a GPU): use the cpu device (bcr_device=cpu), which sets strategy=fsdp2"
            )
        forward_only = self.engine_config.forward_only
        self.engine_config.forward_only = False
        try:
            return super()._build_fsdp_module(module)
        finally:
            self.engine_config.forward_only = forward_only

    def forward_step(self, micro_batch: TensorDict, loss_function: Any, forward_only: bool) -> Any:
        """verl's forward step with the model's forward through `shared_prompt_response_logits` where it applies:
        padded text rows (no remove-padding, fused kernels or multi-modal inputs), fp32, prompts repeated, and only
        log-probs asked for (no entropy, sum of squared probabilities or distillation)."""
        micro_batch = micro_batch.to(get_device_id())
        if loss_function is not None and tu.get_non_tensor_data(data=micro_batch, key=ANCHOR_FLAG, default=False):
            loss_function = partial(anchor_on_actor, loss_function)
        model_inputs, output_args = self.prepare_model_inputs(micro_batch=micro_batch)
        prompt_lens = prompt_lengths(micro_batch)
        response = None
        if (
            set(model_inputs) == {"input_ids", "attention_mask", "position_ids"}
            and model_inputs["position_ids"].dim() == 2
            and getattr(self, "_autocast_dtype", None) == torch.float32
            and prompt_lens is not None
            and micro_batch["input_ids"].is_nested
            and not any(tu.get_non_tensor_data(data=micro_batch, key=k, default=False) for k in OTHER_OUTPUTS)
        ):
            response = shared_prompt_response_logits(
                self.module, **model_inputs, prompt_lens=prompt_lens.to(get_device_id())
            )
        if response is None:
            return super().forward_step(micro_batch, loss_function, forward_only)
        temperature = torch.as_tensor(output_args["temperature"], device=response.logits.device)
        logits = transformer_impl._scale_logits_by_temperature(  # as verl's prepare_model_outputs scales them
            response.logits,
            temperature.reshape(-1, 1, 1),
            is_unit_temperature=output_args.get("temperature_is_one", False),
        )
        model_output = {"log_probs": response.log_probs_in_rows(logits, micro_batch["input_ids"].offsets())}
        if loss_function is not None:
            loss, metrics = loss_function(
                model_output=model_output, data=micro_batch, dp_group=self.get_data_parallel_group()
            )
        else:
            loss, metrics = torch.tensor(1.0, device=get_device_name()), {}
        return loss, {"model_output": detach_tree(model_output), "loss": loss.detach().item(), "metrics": metrics}


# Outputs of verl's `prepare_model_outputs` besides log-probs: with any of them asked for, verl's forward step runs.
OTHER_OUTPUTS = ("calculate_entropy", "calculate_sum_pi_squared", "distillation_use_topk", "distillation_only")


# One forward of a micro-batch whose rows repeat prompts (GRPO: n completions of each prompt), with each
# distinct prompt computed once, and log-probs only where verl reads them.
#
# verl's actor and reference run the model over every row's whole sequence, prompt included: at the toy's
# sizes ~225 of a row's ~395 tokens are its prompt, the same tokens (and so the same activations) in all 8
# rows of a prompt. Here the distinct prompts go through the model once (with their keys and values kept),
# then every row's completion goes through it attending to its prompt's keys and values and to its own
# earlier tokens: the logits are those of the full rows (to float rounding), and since each row reads its
# prompt's activations through one gather, backward sums the rows' gradients into them, which is the
# gradient of the full rows. The linear layers and the LM head then see ~6,300 tokens a micro-batch of 32
# rows instead of ~12,600; attention does the same products as before.
#
# verl takes a log-softmax over the vocabulary at every position of every row, then keeps each row's
# response window (`no_padding_2_padding`, `response_from_nested`: the positions from the prompt's last
# token to the response's last but one). Here the log-softmax runs over that window only, and the other
# positions of verl's per-row layout hold zeros, which nothing reads.


class PrefixKV:
    """`past_key_values` for the completion pass: each layer's keys and values are the row's prompt's
    (gathered per row from the prompt pass) followed by the row's own."""

    def __init__(self, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        self.layers = layers

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any):
        pk, pv = self.layers[layer_idx]
        return torch.cat([pk, key], dim=-2), torch.cat([pv, value], dim=-2)


def prompt_groups(input_ids: torch.Tensor, prompt_lens: torch.Tensor) -> tuple[list[int], torch.Tensor]:
    """(first row of each distinct prompt, each row's distinct-prompt index), rows compared by their
    prompt tokens."""
    firsts: list[int] = []
    seen: dict[tuple[int, ...], int] = {}
    group = []
    for i, p in enumerate(prompt_lens.tolist()):
        key = tuple(input_ids[i, :p].tolist())
        if key not in seen:
            seen[key] = len(firsts)
            firsts.append(i)
        group.append(seen[key])
    return firsts, torch.tensor(group, dtype=torch.long)


@dataclass
class ResponseLogits:
    """Each row's logits over its response window: `logits[i, j]` predicts `tokens[i, j]`, the row's j-th
    response token (read from the prompt's last position for j = 0); real for j < lengths[i]."""

    logits: torch.Tensor  # (rows, longest response, vocab)
    tokens: torch.Tensor  # (rows, longest response)
    lengths: torch.Tensor  # (rows,)
    prompt_lens: torch.Tensor  # (rows,)

    def log_probs_in_rows(self, logits: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """log_softmax(logits)[token] of every real response token, placed where verl's per-row layout
        (a jagged tensor of prompt + response tokens per row, `offsets`) has them: position t holds the
        log-prob of token t + 1. Zeros elsewhere."""
        cols = torch.arange(self.tokens.shape[1], device=logits.device)
        real = cols[None, :] < self.lengths[:, None]
        where = offsets[:-1, None] + self.prompt_lens[:, None] - 1 + cols
        values = batched_logprobs(logits[real], self.tokens[real])
        flat = values.new_zeros(int(offsets[-1])).index_put((where[real],), values)
        return torch.nested.nested_tensor_from_jagged(flat, offsets)


def shared_prompt_response_logits(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    prompt_lens: torch.Tensor,
) -> Optional[ResponseLogits]:
    """The logits of `model(input_ids, attention_mask, position_ids)` over each row's response window, for
    right-padded rows of [prompt, completion] (prompt_lens[i] tokens, then the rest of attention_mask[i]'s
    ones), each distinct prompt computed once. None when no prompt repeats (nothing to share) or when the
    model has other than full-attention layers."""
    layer_types = set(getattr(model.config.get_text_config(), "layer_types", None) or ["full_attention"])
    if layer_types != {"full_attention"}:
        return None
    rows, width = input_ids.shape
    firsts, group = prompt_groups(input_ids, prompt_lens)
    if len(firsts) == rows:
        return None
    dev = input_ids.device
    group = group.to(dev)
    seq_lens = attention_mask.sum(-1)
    comp_lens = seq_lens - prompt_lens
    plens = prompt_lens[firsts].tolist()
    pwidth, cwidth = max(plens), int(comp_lens.max())

    # the distinct prompts, left-padded, with their own positions
    p_ids = input_ids.new_zeros(len(firsts), pwidth)
    p_pos = position_ids.new_zeros(len(firsts), pwidth)
    p_mask = attention_mask.new_zeros(len(firsts), pwidth)
    for g, (i, p) in enumerate(zip(firsts, plens)):
        p_ids[g, pwidth - p :] = input_ids[i, :p]
        p_pos[g, pwidth - p :] = position_ids[i, :p]
        p_mask[g, pwidth - p :] = 1
    prompt_out = model(input_ids=p_ids, attention_mask=p_mask, position_ids=p_pos, use_cache=True)
    cache = prompt_out.past_key_values
    prefix = PrefixKV([(layer.keys[group], layer.values[group]) for layer in cache.layers])

    # every row's completion, right-padded; padded slots continue the row's positions
    cols = torch.arange(cwidth, device=dev)
    src = (prompt_lens[:, None] + cols).clamp(max=width - 1)
    real = cols[None, :] < comp_lens[:, None]
    c_ids = torch.where(real, input_ids.gather(1, src), torch.zeros_like(src))
    c_pos = torch.where(real, position_ids.gather(1, src), position_ids.gather(1, src) + cols)
    own = (cols[None, :, None] >= cols[None, None, :]) & real[:, None, :]  # causal, real keys only
    prompt_keys = p_mask.bool()[group][:, None, :].expand(rows, cwidth, pwidth)
    mask = torch.cat([prompt_keys, own], dim=-1)[:, None]  # (rows, 1, queries, prompt + own keys)
    comp_logits = model(
        input_ids=c_ids,
        attention_mask={"full_attention": mask},
        position_ids=c_pos,
        past_key_values=prefix,
        use_cache=False,
    ).logits

    # token j of a completion is predicted at the prompt's last position (j = 0) or at completion token j - 1
    logits = torch.cat([prompt_out.logits[:, -1][group][:, None], comp_logits[:, :-1]], dim=1)
    return ResponseLogits(logits, c_ids, comp_lens, prompt_lens)


def prompt_lengths(data: TensorDict) -> Optional[torch.Tensor]:
    """Each row's prompt length, read as verl's `no_padding_2_padding` reads it; None without a prompt field."""
    if "prompts" not in data.keys():
        return None
    prompts = data["prompts"]
    if prompts.is_nested:
        return prompts.offsets().diff()
    if "attention_mask" not in data.keys() or data["attention_mask"].is_nested:
        return None
    return data["attention_mask"][:, : prompts.shape[1]].sum(dim=1)


def init_gloo_process_group() -> None:
    """The process group verl would open, with the backend string torch accepts on a CPU."""
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(
            backend="gloo",
            rank=int(os.environ.get("RANK", 0)),
            world_size=int(os.environ.get("WORLD_SIZE", 1)),
            init_method=os.environ.get("DIST_INIT_METHOD", None),
        )


class CPUActorRolloutRefWorker(ActorRolloutRefWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # sets RANK, WORLD_SIZE, MASTER_ADDR/PORT from the worker group
        init_gloo_process_group()
        apply_train_threads()
