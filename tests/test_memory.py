"""GPU memory by arithmetic (recipe_bcr.verl_ext.memory): docs/gpu.md's table is the formula's output, the
low-memory preset composes with `+recipe=bcr` and passes verl's validation, and the preflight prints the estimate
against each GPU's memory.total (faked nvidia-smi), naming the preset that fits when the run does not."""

import re
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from recipe_bcr.verl_ext import memory
from recipe_bcr.verl_ext.checks import compose_recipe
from recipe_bcr.verl_ext.preflight import PreflightError, check_memory, preflight

DOC = Path(__file__).resolve().parents[1] / "docs" / "gpu.md"
H100 = "NVIDIA H100 80GB HBM3, 580.65.06, 81559"
RTX4090 = "NVIDIA GeForce RTX 4090, 580.65.06, 24564"


def test_the_docs_memory_table_is_the_formulas_output():
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- memory table: .*? -->\n(.*?)\n<!-- end memory table -->", text, re.S)
    assert found, "docs/gpu.md has no memory table between its markers"
    assert found.group(1) == memory.table()


@pytest.mark.parametrize(
    "overrides", [[], ["bcr.n=5"], ["bcr_model@bcr.model=qwen3_4b_thinking"], ["bcr_runtime=hf"], ["bcr.gpus=16"]]
)
def test_the_low_memory_preset_composes_and_passes_verls_validation(overrides):
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    cfg = compose_recipe(["bcr.gpus=8", *overrides, "bcr_memory=low"], resolve=True)
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    assert actor.use_dynamic_bsz and actor.ppo_max_token_len_per_gpu == cfg.actor_rollout_ref.rollout.max_model_len
    assert actor.fsdp_config.param_offload and actor.fsdp_config.optimizer_offload
    assert cfg.actor_rollout_ref.ref.fsdp_config.param_offload
    # verl derives the log-prob passes' token budgets from the actor's
    assert cfg.actor_rollout_ref.ref.log_prob_use_dynamic_bsz and cfg.actor_rollout_ref.rollout.log_prob_use_dynamic_bsz
    assert (
        cfg.actor_rollout_ref.rollout.gpu_memory_utilization
        < compose_recipe([]).actor_rollout_ref.rollout.gpu_memory_utilization
    )
    assert cfg.actor_rollout_ref.model.use_remove_padding  # packed: the token budget bounds a micro-batch


def estimate(*overrides, gib=79.6):
    return memory.estimate(memory.Settings.of(compose_recipe(["bcr.gpus=8", *overrides])), gib)


def test_the_estimate_follows_the_settings_it_depends_on():
    base = estimate()
    assert estimate("bcr.n=5").update > base.update  # longer budget, more tokens per micro-batch
    assert estimate("bcr.completions_per_device=1").update < base.update
    assert estimate("bcr.gpus=4").resident > base.resident  # FSDP shards over fewer GPUs
    assert estimate("bcr_model@bcr.model=qwen3_4b_thinking").update > base.update
    low = estimate("bcr_memory=low")
    assert low.resident < base.resident and low.update < base.update and low.vllm < base.vllm
    assert estimate(gib=22.5).vllm < base.vllm  # vLLM takes a share of the GPU


def test_preflight_prints_the_estimate_against_memory_total(smi):
    smi([H100] * 8)
    line = check_memory(compose_recipe(["bcr.gpus=8"]))
    assert line.startswith("NVIDIA H100 80GB HBM3 (79.6 GiB): rollout ") and line.endswith(
        "fits (arithmetic, docs/gpu.md Memory)"
    )


def test_a_run_too_big_for_its_gpus_names_the_preset_that_fits(smi):
    smi([RTX4090] * 8)
    with pytest.raises(PreflightError) as e:
        check_memory(compose_recipe(["bcr.gpus=8"]))
    assert "NVIDIA GeForce RTX 4090 (24.0 GiB)" in str(e.value) and "-> fix: bcr_memory=low" in str(e.value)
    assert "\n" not in str(e.value)
    assert check_memory(compose_recipe(["bcr.gpus=8", "bcr_memory=low"])).endswith("(arithmetic, docs/gpu.md Memory)")
    with pytest.raises(
        PreflightError, match=r"no preset fits: more GPUs \(the training state is \d+\.\d GiB per GPU on 8"
    ):
        check_memory(compose_recipe(["bcr.gpus=8", "bcr_model@bcr.model=qwen3_4b_thinking"]))
    warned = check_memory(compose_recipe(["bcr.gpus=8", "bcr.check_memory=false"]))
    assert "bcr.check_memory=false, going on" in warned


def test_mixed_gpus_are_each_checked_smallest_first(smi):
    smi([H100] * 4 + [RTX4090] * 4)
    with pytest.raises(PreflightError, match=r"RTX 4090"):
        check_memory(compose_recipe(["bcr.gpus=8"]))


def test_preflight_runs_the_memory_check(smi, monkeypatch):
    from recipe_bcr.verl_ext import preflight as pf

    monkeypatch.setattr(pf, "check_model_paths", lambda *a: [])
    for name in ("check_device", "check_data", "check_imports", "check_gpus"):
        monkeypatch.setattr(pf, name, lambda *a: "ok")
    smi([RTX4090] * 8)
    with pytest.raises(PreflightError, match="bcr_memory=low"):
        preflight(compose_recipe(["bcr.gpus=8"]))
    assert OmegaConf.select(compose_recipe([]), "bcr.check_memory") is True


def test_model_shapes_come_to_the_published_parameter_counts():
    """1.78B (DeepSeek-R1-Distill-Qwen-1.5B) and 4.02B (Qwen3-4B): a wrong size in a shape would show here."""
    assert round(memory.MODELS["justrl-deepseek-1.5b"].params / 1e9, 2) == 1.78
    assert round(memory.MODELS["qwen3-4b-thinking"].params / 1e9, 2) == 4.02
