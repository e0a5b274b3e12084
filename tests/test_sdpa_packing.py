"""verl's remove-padding call under sdpa: the fact behind checks.PACKED_ATTENTION. verl 0.9.1's FSDP engine
packs a micro-batch into one row and calls the model with use_cache=False, attention_mask=None and position_ids
that restart at 0 per sequence (verl/workers/engine/fsdp/transformer_impl.py); transformers 5.9 then builds a
block-causal mask from the position_ids. Before: the preflight refused remove-padding with sdpa, from a test that
left the KV cache on (where transformers skips that detection)."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from recipe_bcr.verl_ext.checks import attention_note, attention_problem, compose_recipe

LENGTHS = (7, 5, 9)


def _logits(shared, name: str, attn: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(packed as verl calls it, packed with the cache on, padded batch) logits of LENGTHS random sequences."""
    config = AutoConfig.from_pretrained(shared / "tiny_models" / name)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation=attn, dtype=torch.float32).eval()
    gen = torch.Generator().manual_seed(0)
    seqs = [torch.randint(5, 1000, (n,), generator=gen) for n in LENGTHS]
    ids = torch.cat(seqs)[None]
    positions = torch.cat([torch.arange(n) for n in LENGTHS])[None]
    width = max(LENGTHS)
    padded_ids = torch.zeros(len(seqs), width, dtype=torch.long)
    mask = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):
        padded_ids[i, : len(s)], mask[i, : len(s)] = s, 1
    with torch.no_grad():
        packed = model(input_ids=ids, attention_mask=None, position_ids=positions, use_cache=False).logits[0]
        cached = model(input_ids=ids, position_ids=positions).logits[0]
        padded = model(
            input_ids=padded_ids, attention_mask=mask, position_ids=torch.arange(width).expand(len(seqs), width)
        ).logits
    return packed, cached, torch.cat([padded[i, :n] for i, n in enumerate(LENGTHS)])


@pytest.mark.parametrize("name", ["tiny-qwen2-config", "tiny-qwen3-config"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_verls_packed_call_equals_padded_batches(shared, name, attn):
    packed, cached, padded = _logits(shared, name, attn)
    assert (packed - padded).abs().max() < 1e-4
    # the old test's call: with the cache on, the packed sequences do attend to each other
    assert (cached - padded).abs().max() > 1e-2


def test_remove_padding_with_sdpa_is_allowed_and_said():
    cfg = compose_recipe(["bcr_device=gpu", "actor_rollout_ref.model.use_remove_padding=true"])
    assert attention_problem(cfg) is None
    assert attention_note(cfg).startswith("sdpa on packed sequences")


def test_an_implementation_not_known_to_keep_packed_sequences_apart_is_refused():
    cfg = compose_recipe(
        [
            "bcr_device=gpu",
            "actor_rollout_ref.model.use_remove_padding=true",
            "actor_rollout_ref.model.override_config.attn_implementation=flex_attention",
        ]
    )
    problem = attention_problem(cfg)
    assert "attn_implementation=flex_attention" in problem and "use_remove_padding=false" in problem


def test_packed_sequences_on_the_cpu_engine_are_refused():
    """The recipe's CPU engine groups each micro-batch's rows by prompt and cannot take one packed row (a 1-step
    toy run with bcr_memory=low on bcr_device=cpu failed in engine_cpu.prompt_groups); GPUs use verl's engine."""
    problem = attention_problem(compose_recipe(["bcr_device=cpu", "bcr_memory=low"]))
    assert "bcr_device=cpu" in problem and problem.endswith("actor_rollout_ref.model.use_remove_padding=false")
    assert (
        attention_problem(
            compose_recipe(["bcr_device=cpu", "bcr_memory=low", "actor_rollout_ref.model.use_remove_padding=false"])
        )
        is None
    )
