"""The HF rollout's generation (recipe_bcr/verl_ext/hf_rollout.py) on the toy model: its decoding loop (each
distinct prompt prefilled once and shared by its rows, completions in a preallocated KV cache) samples what
transformers' stock generate() samples, the log-probs are the ones verl's actor recomputes, and a step's
requests arriving one by one end up in one batch."""

import asyncio

import pytest
import torch

from recipe_bcr.verl_ext.hf_rollout import HFRolloutServer, SamplingKey, _Request, generate_batch, group_rows


@pytest.fixture(scope="module")
def model(toy):
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    return AutoModelForCausalLM.from_pretrained(toy[1], dtype=torch.float32, attn_implementation="sdpa").eval()


@pytest.fixture(scope="module")
def prompts():
    g = torch.Generator().manual_seed(3)
    return [torch.randint(3, 500, (n,), generator=g).tolist() for n in (12, 20, 7, 20)]


def stock_generate(model, prompts, key, eos_ids, pad_id):
    """transformers' generate() with its default (concatenating) cache and per-token log_softmax."""
    from transformers import GenerationConfig

    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts])
    mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts])[:, None]).long()
    torch.manual_seed(key.seed)
    with torch.inference_mode():
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            generation_config=GenerationConfig(
                max_new_tokens=key.max_tokens,
                do_sample=True,
                temperature=key.temperature,
                top_p=key.top_p,
                top_k=key.top_k or None,
                repetition_penalty=key.repetition_penalty,
                eos_token_id=sorted(eos_ids),
                pad_token_id=pad_id,
                output_logits=True,
                return_dict_in_generate=True,
            ),
        )
    rows = []
    for i, row in enumerate(out.sequences[:, width:].tolist()):
        end = next((t + 1 for t, tok in enumerate(row) if tok in eos_ids), len(row))
        lps = [float(torch.log_softmax(out.logits[t][i] / key.temperature, -1)[row[t]]) for t in range(end)]
        rows.append((row[:end], lps))
    return rows


def test_decoding_samples_what_stock_generate_samples(model, prompts):
    key = SamplingKey(
        temperature=0.8, top_p=0.9, top_k=0, repetition_penalty=1.0, max_tokens=40, logprobs=True, seed=11
    )
    ours = generate_batch(model, prompts, key, {2}, 0)
    ref = stock_generate(model, prompts, key, {2}, 0)
    assert [t for t, _ in ours] == [t for t, _ in ref]
    for (_, a), (_, b) in zip(ours, ref):
        assert a == pytest.approx(b, abs=1e-5)


def test_rows_of_one_prompt_share_its_prefill_and_sample_what_stock_generate_samples(model, prompts):
    """verl's n rollouts of a prompt: one prefill and one copy of its keys for the group, same tokens."""
    rows = [prompts[0]] * 3 + [prompts[2]] * 3  # unequal lengths: the shared prompts are left-padded
    key = SamplingKey(
        temperature=0.9, top_p=0.95, top_k=40, repetition_penalty=1.1, max_tokens=30, logprobs=True, seed=7
    )
    assert group_rows(rows) == ([prompts[0], prompts[2]], [0, 1, 2, 3, 4, 5])
    ours = generate_batch(model, rows, key, {2}, 0)
    ref = stock_generate(model, rows, key, {2}, 0)
    assert [t for t, _ in ours] == [t for t, _ in ref]
    assert len({tuple(t) for t, _ in ours}) > 2  # the rows of a group sample independently
    for (_, a), (_, b) in zip(ours, ref):
        assert a == pytest.approx(b, abs=1e-5)


@pytest.mark.parametrize(
    "layout, groups", [("interleaved", ([0, 1], [0, 2, 1, 3])), ("unequal", ([0, 1, 2], [0, 1, 2]))]
)
def test_grouped_decoding_gives_each_row_its_own_prompts_log_probs(model, prompts, layout, groups):
    """Rows of a prompt arriving interleaved are grouped, and back in their order; groups of unequal
    size share nothing (one group per row). Either way each row's log-probs are its own prompt's."""
    rows = [prompts[0], prompts[1], prompts[0], prompts[1]] if layout == "interleaved" else prompts[:2] + prompts[:1]
    distinct, order = group_rows(rows)
    assert (distinct, order) == ([rows[i] for i in groups[0]], groups[1])
    key = SamplingKey(temperature=1.0, top_p=1.0, top_k=0, repetition_penalty=1.0, max_tokens=25, logprobs=True)
    for p, (tokens, lps) in zip(rows, generate_batch(model, rows, key, {2}, 0)):
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([p + tokens])).logits[0, len(p) - 1 : -1]
        want = torch.log_softmax(logits, -1).gather(-1, torch.tensor(tokens)[:, None]).squeeze(-1)
        assert lps == pytest.approx(want.tolist(), abs=1e-4)


def test_models_with_sliding_window_layers_are_refused(model, prompts, monkeypatch):
    """The shared-prefix attention sees every key: a sliding-window layer would attend too far, silently."""
    monkeypatch.setattr(model.config, "layer_types", ["sliding_attention", "full_attention"])
    key = SamplingKey(1.0, 1.0, 0, 1.0, 4, False)
    with pytest.raises(ValueError, match="sliding_attention"):
        generate_batch(model, prompts, key, {2}, 0)


def test_rollout_log_probs_are_the_actors_teacher_forced_ones(model, prompts):
    """verl's bypass of the old-log-prob pass (bcr_device=cpu) uses these as the PPO anchor."""
    key = SamplingKey(temperature=0.7, top_p=1.0, top_k=0, repetition_penalty=1.0, max_tokens=30, logprobs=True, seed=5)
    for p, (tokens, lps) in zip(prompts, generate_batch(model, prompts, key, {2}, 0)):
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([p + tokens])).logits[0, len(p) - 1 : -1]
        want = torch.log_softmax(logits / 0.7, -1).gather(-1, torch.tensor(tokens)[:, None]).squeeze(-1)
        assert lps == pytest.approx(want.tolist(), abs=1e-4)


@pytest.mark.parametrize("gap_s", [0.008, 0.04])
def test_requests_arriving_one_by_one_make_one_batch(gap_s):
    """A busy CPU spreads a step's requests out (0.04 s apart split a step's batch in two at the old 0.02 s)."""
    server = HFRolloutServer.__new__(HFRolloutServer)
    server._pending, server.max_batch = [], 64
    key = SamplingKey(1.0, 1.0, 0, 1.0, 8, False)

    async def arrive():
        loop = asyncio.get_running_loop()
        for _ in range(10):
            server._pending.append(_Request([1], key, loop.create_future()))
            await asyncio.sleep(gap_s)

    async def main():
        arrivals = asyncio.create_task(arrive())
        await asyncio.sleep(0)
        await server._gather()
        n = len(server._pending)
        await arrivals
        return n

    assert asyncio.run(main()) == 10
