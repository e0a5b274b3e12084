"""GPU memory of a composed `+recipe=bcr` run, per GPU, by arithmetic (nothing here was measured on a GPU).

verl 0.9.1 colocates on every GPU the FSDP actor (fp32 weights, gradients and Adam state, sharded over the
GPUs), the reference model (fp32, sharded) and a vLLM engine (bf16 weights, whole, and its KV cache). Two moments
bound the memory: the rollout, when vLLM asks for `gpu_memory_utilization` x the GPU's memory beside what training
keeps resident (vLLM refuses to start when less is free), and the update, when vLLM sleeps and one micro-batch's
activations and logits sit beside the actor's weights, gradients and optimizer. Without this the first sign of a
GPU too small for N=3 is an out-of-memory error some minutes into the first step.

The preflight prints `estimate()` for the composed run against each GPU's memory.total; docs/gpu.md's memory
table is `table()` (tests/test_memory.py keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

GIB = 1024**3

# Assumptions, each a named constant so that the table and the preflight say the same:
# bf16 logits, their bf16 gradient and one fp32 copy inside the log-softmax: bytes per (token x vocabulary entry)
LOGIT_BYTES = 8
# CUDA contexts of the training process and vLLM's worker, NCCL buffers, allocator fragmentation
OVERHEAD_GIB = 3.0
# what a sleeping vLLM keeps (verl's free_cache_engine: weights offloaded, KV cache released; CUDA graphs stay)
VLLM_ASLEEP_GIB = 1.0
# vLLM's own activations and CUDA graphs inside its share, beside weights and KV cache
VLLM_WORKSPACE_GIB = 1.5


@dataclass(frozen=True)
class ModelShape:
    """What the arithmetic needs of a model: the sizes in its config.json."""

    hidden: int
    layers: int
    intermediate: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    tied: bool  # tie_word_embeddings: one vocab x hidden matrix, not two

    @property
    def params(self) -> float:
        """Embeddings, attention and MLP weights (biases and norms are under 0.1%)."""
        attention = 2 * self.hidden * self.heads * self.head_dim + 2 * self.hidden * self.kv_heads * self.head_dim
        embeddings = self.vocab * self.hidden * (1 if self.tied else 2)
        return embeddings + self.layers * (attention + 3 * self.hidden * self.intermediate)

    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * 2  # K and V, bf16


# keyed by the bcr_model presets' `name`; their params come to the published 1.78B and 4.02B
MODELS = {
    # hbx/JustRL-DeepSeek-1.5B: Qwen2 (DeepSeek-R1-Distill-Qwen-1.5B)
    "justrl-deepseek-1.5b": ModelShape(1536, 28, 8960, 151936, 12, 2, 128, tied=False),
    # Qwen/Qwen3-4B-Thinking-2507
    "qwen3-4b-thinking": ModelShape(2560, 36, 9728, 151936, 32, 8, 128, tied=True),
}


@dataclass(frozen=True)
class Settings:
    """The memory-relevant keys of a composed config."""

    model: str
    gpus: int  # world size
    budget: int  # data.max_response_length
    seq_len: int  # max prompt + budget
    tokens_per_micro: int  # tokens of one update micro-batch on one GPU (worst case)
    step_completions: int
    vllm_utilization: float | None  # None: not vLLM (the HF rollout: a bf16 copy of the model)
    param_offload: bool
    optimizer_offload: bool
    ref_offload: bool
    use_ref: bool
    checkpointing: bool

    @classmethod
    def of(cls, cfg: Any) -> Settings:
        arr = cfg.actor_rollout_ref
        actor = arr.actor
        seq_len = int(cfg.data.max_prompt_length) + int(cfg.data.max_response_length)
        if actor.get("use_dynamic_bsz"):
            tokens = max(int(actor.ppo_max_token_len_per_gpu), seq_len)  # a longer sequence goes alone
        else:
            tokens = int(actor.ppo_micro_batch_size_per_gpu) * seq_len  # padded to the longest, or packed
        rollout = arr.rollout
        return cls(
            model=str(OmegaConf.select(cfg, "bcr.model.name", default="")),
            gpus=int(cfg.trainer.n_gpus_per_node) * int(cfg.trainer.nnodes),
            budget=int(cfg.data.max_response_length),
            seq_len=seq_len,
            tokens_per_micro=tokens,
            step_completions=int(cfg.data.train_batch_size) * int(rollout.n),
            vllm_utilization=float(rollout.gpu_memory_utilization) if rollout.name == "vllm" else None,
            param_offload=bool(actor.fsdp_config.param_offload),
            optimizer_offload=bool(actor.fsdp_config.optimizer_offload),
            ref_offload=bool(arr.ref.fsdp_config.param_offload),
            use_ref=bool(actor.use_kl_loss) or bool(cfg.algorithm.use_kl_in_reward),
            checkpointing=bool(arr.model.enable_gradient_checkpointing),
        )


@dataclass(frozen=True)
class Estimate:
    """GiB per GPU at the two peaks, and what vLLM gets."""

    resident: float  # training state kept on the GPU while vLLM runs
    vllm: float  # vLLM's share (gpu_memory_utilization x memory), or the HF rollout's model copy
    kv_cache: float  # of vLLM's share, what is left for the KV cache
    rollout: float  # resident + vLLM
    update: float  # weights, gradients, optimizer, reference, activations, logits, sleeping vLLM
    activations: float
    logits: float
    one_sequence_kv: float  # KV cache of one sequence of seq_len tokens
    state: float  # the sharded training state (weights, gradients, Adam, reference), whether offloaded or not

    def problem(self, memory: float) -> str | None:
        """Why this does not fit a GPU of `memory` GiB (None: it fits)."""
        if self.rollout > memory:
            return f"rollout needs {self.rollout:.1f} GiB (training {self.resident:.1f} + vLLM {self.vllm:.1f})"
        if self.kv_cache < self.one_sequence_kv:
            return f"vLLM's KV cache ({self.kv_cache:.1f} GiB) holds no full sequence ({self.one_sequence_kv:.1f} GiB)"
        if self.update > memory:
            return f"update needs {self.update:.1f} GiB (logits {self.logits:.1f}, activations {self.activations:.1f})"
        return None


def estimate(s: Settings, memory: float) -> Estimate:
    """GiB per GPU of `s` on GPUs of `memory` GiB (memory only matters for vLLM's share)."""
    m = MODELS[s.model]
    shard = m.params / s.gpus / GIB
    weights, grads, adam, ref = 4 * shard, 4 * shard, 8 * shard, (4 * shard if s.use_ref else 0.0)
    resident = (
        (0.0 if s.param_offload else weights)
        + (0.0 if s.optimizer_offload else adam)
        + (0.0 if s.ref_offload else ref)
        + OVERHEAD_GIB
    )
    bf16_model = 2 * m.params / GIB
    vllm = s.vllm_utilization * memory if s.vllm_utilization is not None else bf16_model
    kv_cache = vllm - bf16_model - VLLM_WORKSPACE_GIB if s.vllm_utilization is not None else float("inf")
    t = s.tokens_per_micro
    if s.checkpointing:  # each layer's input kept, one layer recomputed at a time
        activations = (t * m.hidden * m.layers * 2 + t * (4 * m.hidden + 3 * m.intermediate) * 2) / GIB
    else:
        activations = t * m.layers * (4 * m.hidden + 3 * m.intermediate) * 2 / GIB
    logits = t * m.vocab * LOGIT_BYTES / GIB
    # verl loads offloaded parameters (and, for the step, the optimizer) back for the update
    update = (
        weights + grads + adam + (0.0 if s.ref_offload else ref) + activations + logits + VLLM_ASLEEP_GIB + OVERHEAD_GIB
    )
    return Estimate(
        resident=resident,
        vllm=vllm,
        kv_cache=kv_cache,
        rollout=resident + vllm,
        update=update,
        activations=activations,
        logits=logits,
        one_sequence_kv=m.kv_bytes_per_token() * s.seq_len / GIB,
        state=weights + grads + adam + ref,
    )


# --- What the preflight names when the composed run does not fit: the run with a preset group's settings on top
# (hydra_configs/bcr_memory/; the composed run's own values first)
PRESETS = ("bcr_memory=low",)


def candidates(cfg: Any) -> dict[str, Settings]:
    """The composed run, then the run with each preset's settings merged over it."""
    import hydra_configs

    found = {"as composed": Settings.of(cfg)}
    for preset in PRESETS:
        group, name = preset.split("=")
        path = Path(hydra_configs.__file__).parent / group / f"{name}.yaml"
        found[preset] = Settings.of(OmegaConf.merge(cfg, OmegaConf.load(path)))
    return found


def first_fit(found: dict[str, Settings], memory: float) -> str | None:
    """The first candidate that fits GPUs of `memory` GiB (None: none does)."""
    return next((name for name, s in found.items() if estimate(s, memory).problem(memory) is None), None)


# --- docs/gpu.md's memory table. memory.total as nvidia-smi lists it: A10 23,028 MiB, A100 40 GB 40,960 MiB,
# L40S 46,068 MiB, H100 80 GB 81,559 MiB, H200 143,771 MiB.
GPU_SIZES = {"24 GB": 22.5, "40 GB": 40.0, "48 GB": 45.0, "80 GB": 79.6, "141 GB": 140.4}  # GiB
TABLE_RUNS = [
    ("JustRL-1.5B", ["bcr.n=3"]),
    ("JustRL-1.5B", ["bcr.n=5"]),
    ("Qwen3-4B", ["bcr_model@bcr.model=qwen3_4b_thinking", "bcr.n=3"]),
    ("Qwen3-4B", ["bcr_model@bcr.model=qwen3_4b_thinking", "bcr.n=5"]),
]


def table(gpus: int = 8) -> str:
    """Markdown: per model, N (budget) and GPU size on `gpus` GPUs, the first preset that fits, with the
    default preset's peaks on an 80 GB GPU."""
    from recipe_bcr.verl_ext.checks import compose_recipe

    head = "| model | N | budget | default on 80 GB: rollout / update (GiB) | " + " | ".join(GPU_SIZES) + " |"
    rows = [head, "|" + "---|" * (4 + len(GPU_SIZES))]
    for label, overrides in TABLE_RUNS:
        found = candidates(compose_recipe([*overrides, f"bcr.gpus={gpus}"]))
        default = found["as composed"]
        e = estimate(default, GPU_SIZES["80 GB"])
        cells = [
            (first_fit(found, m) or "does not fit").replace("as composed", "default").removeprefix("bcr_memory=")
            for m in GPU_SIZES.values()
        ]
        n = overrides[-1].split("=")[1]
        rows.append(
            f"| {label} | {n} | {default.budget} | {e.rollout:.1f} / {e.update:.1f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(rows)
