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
"""

from __future__ import annotations

import os
from typing import Any

import torch
from verl.workers.engine import EngineRegistry
from verl.workers.engine.fsdp import transformer_impl
from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead
from verl.workers.engine_workers import ActorRolloutRefWorker


def batched_logprobs(logits: torch.Tensor, labels: torch.Tensor, inplace_backward: bool = True) -> torch.Tensor:
    """log_softmax(logits)[label], as `logprobs_from_logits_v2` computes it (logit - logsumexp), in one call."""
    if logits.dtype not in (torch.float32, torch.float64):  # v2's own bf16 path: log_softmax per row
        return torch.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


transformer_impl.logprobs_from_logits = batched_logprobs


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
