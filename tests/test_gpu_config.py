"""The GPU preset's attention backend: sdpa (no flash-attn needed); packed or padded, both keep sequences apart
(tests/test_sdpa_packing.py)."""

import pytest

from recipe_bcr.miniature.toy.model import SHIPPED
from recipe_bcr.verl_ext.checks import attention, attention_problem, compose_recipe, requirements


@pytest.mark.parametrize("overrides", [["bcr_device=gpu"], ["bcr_device=gpu", "bcr_runtime=hf"]])
def test_gpu_preset_attention_agrees_with_remove_padding(overrides):
    cfg = compose_recipe(overrides)
    assert attention(cfg) == ("sdpa", False)
    assert attention_problem(cfg) is None
    needed = {m for r in requirements(cfg, "gpu") for m in r.modules}
    assert "flash_attn" not in needed and {"ray", "fastapi", "uvicorn", "cachetools"} <= needed
    assert ("vllm" in needed) == ("bcr_runtime=hf" not in overrides)


def test_verl_default_attention_needs_flash_attn_or_kernels():
    cfg = compose_recipe(
        [
            "bcr_device=gpu",
            "actor_rollout_ref.model.use_remove_padding=true",
            "actor_rollout_ref.model.override_config.attn_implementation=flash_attention_2",
        ]
    )
    assert attention_problem(cfg) is None
    flash = [r for r in requirements(cfg, "gpu") if "flash_attn" in r.modules]
    assert flash and flash[0].modules == ("flash_attn", "kernels") and "flash-attn" in flash[0].install


@pytest.mark.parametrize(
    "overrides, context",
    [([], 4096 + 5120), (["bcr.n=5"], 4096 + 8533), (["bcr_model@bcr.model=qwen3_4b_thinking"], 4096 + 8000)],
)
def test_vllm_context_is_prompt_plus_budget(overrides, context):
    """Unset, verl gives vLLM the model's full context (131,072 tokens for the 1.5B, 262,144 for Qwen3-4B)
    and vLLM sizes its KV cache for it. The key is verl's RolloutConfig.max_model_len."""
    from verl.utils.config import omega_conf_to_dataclass

    cfg = compose_recipe(["bcr.gpus=4", *overrides])  # resolving the rollout's config counts GPUs (none here)
    rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    assert rollout.max_model_len == context == cfg.data.max_prompt_length + cfg.data.max_response_length


def test_toy_context_fits_the_toy_model():
    import json

    cfg = compose_recipe(["bcr_device=cpu", "bcr_model@bcr.model=tiny_qwen3", "bcr.prompt_length=512"])
    limit = json.loads((SHIPPED / "config.json").read_text())["max_position_embeddings"]
    assert cfg.actor_rollout_ref.rollout.max_model_len <= limit  # verl refuses a max_model_len above it


def test_a_gpu_run_keeps_a_metric_file_and_prunes_checkpoints():
    cfg = compose_recipe([])
    assert list(cfg.trainer.logger) == ["console", "tensorboard"]  # verl's tensorboard is a verl-core dependency
    assert cfg.trainer.max_actor_ckpt_to_keep == 2
    import tensorboard  # noqa: F401  - what the logger imports (torch.utils.tensorboard needs it)
