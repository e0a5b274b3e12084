"""Each distinct prompt of a micro-batch computed once (`shared_prompt_logits` in recipe_bcr/verl_ext/engine_cpu.py,
the CPU engine's forward step): the logits of every real token and the gradients are those of the full rows, also
with prompts of different lengths, rows in any order, prompts that differ in one token, and completions of
different lengths; through the engine, its log-probs and gradients are verl's forward step's."""

import copy

import pytest
import torch

from recipe_bcr.verl_ext.engine_cpu import prompt_groups, shared_prompt_logits

pytestmark = pytest.mark.verl


@pytest.fixture(scope="module")
def model(toy):
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    return AutoModelForCausalLM.from_pretrained(toy[1], dtype=torch.float32, attn_implementation="sdpa")


def make_rows(order, seed=1):
    """Right-padded rows of [prompt, completion]: prompts 0 and 1 have the same length and differ in one
    middle token; prompt 2 is shorter."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randint(3, 500, (30,), generator=g)
    other = base.clone()
    other[15] = (other[15] + 1) % 500
    prompts = [base, other, torch.randint(3, 500, (21,), generator=g)]
    lens = torch.randint(4, 19, (len(order),), generator=g).tolist()
    rows = [(prompts[k], torch.randint(3, 500, (n,), generator=g)) for k, n in zip(order, lens)]
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, (p, c) in enumerate(rows):
        ids[i, : len(p) + len(c)] = torch.cat([p, c])
        mask[i, : len(p) + len(c)] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids, mask, pos, torch.tensor([len(p) for p, _ in rows])


def completion_loss(logits, ids, mask, plens):
    """Mean log-prob of the completions' tokens (what the policy loss weighs), and the per-token log-probs."""
    lp = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    w = torch.zeros_like(lp)
    for i, p in enumerate(plens.tolist()):
        w[i, p - 1 : int(mask[i].sum()) - 1] = 1
    return (lp * w).sum() / w.sum()


def grads(model, loss):
    model.zero_grad()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}


ORDER = [0, 2, 1, 0, 2, 2, 1, 0]


def test_rows_are_grouped_by_their_whole_prompt():
    ids, _, _, plens = make_rows(ORDER)
    firsts, group = prompt_groups(ids, plens)
    assert firsts == [0, 1, 2] and group.tolist() == [0, 1, 2, 0, 1, 1, 2, 0]  # 0 and 1 differ in one token


def test_logits_and_gradients_are_the_full_rows(model):
    ids, mask, pos, plens = make_rows(ORDER)
    full = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False).logits
    shared = shared_prompt_logits(model, ids, mask, pos, plens)
    real = mask.bool()
    assert shared.shape == full.shape
    assert torch.allclose(shared[real], full[real], atol=2e-5, rtol=0)  # prompt and completion tokens
    g_full = grads(model, completion_loss(full, ids, mask, plens))
    g_shared = grads(model, completion_loss(shared, ids, mask, plens))
    for name, g in g_full.items():
        assert torch.allclose(g_shared[name], g, atol=1e-5, rtol=1e-4), name


def test_nothing_is_shared_without_a_repeated_prompt(model):
    ids, mask, pos, plens = make_rows([0, 1, 2])
    assert shared_prompt_logits(model, ids, mask, pos, plens) is None


def micro_batch(ids, mask, plens):
    """The micro-batch verl's engine gets: left-padded prompts and right-padded responses turned into nested
    rows by verl's own `left_right_2_no_padding`."""
    from tensordict import TensorDict
    from verl.utils import tensordict_utils as tu
    from verl.workers.utils.padding import left_right_2_no_padding

    rows, pw = len(plens), int(plens.max())
    rw = int((mask.sum(-1) - plens).max())
    prompts, responses = torch.zeros(rows, pw, dtype=torch.long), torch.zeros(rows, rw, dtype=torch.long)
    am = torch.zeros(rows, pw + rw, dtype=torch.long)
    for i, p in enumerate(plens.tolist()):
        r = int(mask[i].sum()) - p
        prompts[i, pw - p :], responses[i, :r] = ids[i, :p], ids[i, p : p + r]
        am[i, pw - p : pw + r] = 1
    td = TensorDict(
        {
            "prompts": prompts,
            "responses": responses,
            "input_ids": torch.cat([prompts, responses], 1),
            "attention_mask": am,
            "response_mask": am[:, pw:],
            "position_ids": (am.cumsum(-1) - 1).clamp(min=0),
        },
        batch_size=[rows],
    )
    td = left_right_2_no_padding(td)
    tu.assign_non_tensor(td, use_remove_padding=False, temperature=1.0, pad_token_id=0, calculate_entropy=False)
    return td


def test_cpu_engine_forward_step_is_verls(model, monkeypatch):
    """The CPU engine's forward step (shared prompts) against verl's own on the same micro-batch and model:
    the same log-probs of every token, and the same gradients of a loss over them."""
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead

    from recipe_bcr.verl_ext import engine_cpu
    from recipe_bcr.verl_ext.engine_cpu import CPUFSDPEngineWithLMHead
    from recipe_bcr.verl_ext.plugin import register_platform

    register_platform()  # verl's device helpers: the CPU on this machine, as in the recipe's workers
    shared = []
    monkeypatch.setattr(
        engine_cpu, "shared_prompt_logits", lambda *a, **k: shared.append(shared_prompt_logits(*a, **k)) or shared[-1]
    )

    ids, mask, _, plens = make_rows(ORDER, seed=4)
    engine = object.__new__(CPUFSDPEngineWithLMHead)  # only what the forward step reads
    engine.module, engine._autocast_dtype, engine.pad_to_length = copy.deepcopy(model), torch.float32, False
    engine.get_data_parallel_group = lambda: None

    def loss_fn(model_output, data, dp_group):
        return model_output["log_probs"].values().sum(), {}

    out = {}
    for name, step in (("verl", FSDPEngineWithLMHead.forward_step), ("ours", CPUFSDPEngineWithLMHead.forward_step)):
        loss, meta = step(engine, micro_batch(ids, mask, plens), loss_fn, forward_only=False)
        out[name] = (meta["model_output"]["log_probs"].values(), grads(engine.module, loss))
    assert len(shared) == 1 and shared[0] is not None  # our step took the shared path
    assert out["verl"][0].shape == out["ours"][0].shape == (int(mask.sum()),)
    assert torch.allclose(out["ours"][0], out["verl"][0], atol=2e-5, rtol=0)
    for name, g in out["verl"][1].items():
        assert torch.allclose(out["ours"][1][name], g, atol=1e-4, rtol=1e-4), name
