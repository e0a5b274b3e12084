"""Each distinct prompt of a micro-batch computed once (`shared_prompt_response_logits` in
recipe_bcr/verl_ext/engine_cpu.py, the CPU engine's forward step): the logits over every row's response window and
the gradients are those of the full rows, also with prompts of different lengths, rows in any order, prompts that
differ in one token, and completions of different lengths; through the engine, the log-probs verl reads (each row's
response window) and the gradients are verl's forward step's, and a step that asks for more than log-probs is verl's."""

import copy
from types import SimpleNamespace

import pytest
import torch

from recipe_bcr.verl_ext.engine_cpu import prompt_groups, shared_prompt_response_logits

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


def windows(mask, plens):
    """Each row's response window in its own layout: the positions from the prompt's last token to the response's
    last but one (position t predicts token t + 1), as verl's `no_padding_2_padding` reads log-probs."""
    w = torch.zeros_like(mask, dtype=torch.bool)
    for i, p in enumerate(plens.tolist()):
        w[i, p - 1 : int(mask[i].sum()) - 1] = True
    return w


def completion_loss(logits, ids, mask, plens):
    """Mean log-prob of the completions' tokens (what the policy loss weighs) from full-row logits."""
    lp = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    w = windows(mask, plens)[:, :-1]
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
    resp = shared_prompt_response_logits(model, ids, mask, pos, plens)
    real = torch.arange(resp.tokens.shape[1])[None, :] < resp.lengths[:, None]
    win = windows(mask, plens)
    assert resp.lengths.tolist() == (mask.sum(-1) - plens).tolist()
    assert torch.equal(resp.tokens[real], ids[torch.roll(win, 1, 1)])  # logits[i, j] predicts response token j
    assert torch.allclose(resp.logits[real], full[win], atol=2e-5, rtol=0)
    g_full = grads(model, completion_loss(full, ids, mask, plens))
    lp = torch.log_softmax(resp.logits, -1).gather(-1, resp.tokens[..., None]).squeeze(-1)
    g_shared = grads(model, (lp * real).sum() / real.sum())
    for name, g in g_full.items():
        assert torch.allclose(g_shared[name], g, atol=1e-5, rtol=1e-4), name


def test_nothing_is_shared_without_a_repeated_prompt(model):
    ids, mask, pos, plens = make_rows([0, 1, 2])
    assert shared_prompt_response_logits(model, ids, mask, pos, plens) is None


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


def engine_steps(model, monkeypatch, loss_fn, **flags):
    """verl's forward step and the CPU engine's on one micro-batch and model: {name: (model_output, gradients)},
    and whether the engine's step took the shared path."""
    from verl.utils import tensordict_utils as tu
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead

    from recipe_bcr.verl_ext import engine_cpu
    from recipe_bcr.verl_ext.engine_cpu import CPUFSDPEngineWithLMHead
    from recipe_bcr.verl_ext.plugin import register_platform

    register_platform()  # verl's device helpers: the CPU on this machine, as in the recipe's workers
    shared = []
    monkeypatch.setattr(
        engine_cpu,
        "shared_prompt_response_logits",
        lambda *a, **k: shared.append(shared_prompt_response_logits(*a, **k)) or shared[-1],
    )
    ids, mask, _, plens = make_rows(ORDER, seed=4)
    engine = object.__new__(CPUFSDPEngineWithLMHead)  # only what the forward step reads
    engine.module, engine._autocast_dtype, engine.pad_to_length = copy.deepcopy(model), torch.float32, False
    engine.get_data_parallel_group = lambda: None
    engine.engine_config = SimpleNamespace(entropy_checkpointing=False)
    out = {}
    for name, step in (("verl", FSDPEngineWithLMHead.forward_step), ("ours", CPUFSDPEngineWithLMHead.forward_step)):
        batch = micro_batch(ids, mask, plens)
        tu.assign_non_tensor(batch, **flags)
        loss, meta = step(engine, batch, loss_fn, forward_only=False)
        out[name] = (meta["model_output"], grads(engine.module, loss))
    return out, bool(shared) and shared[0] is not None, windows(mask, plens)[mask.bool()]


def test_cpu_engine_forward_step_is_verls(model, monkeypatch):
    """The CPU engine's forward step (shared prompts) against verl's own on the same micro-batch and model: the
    same log-probs over every row's response window (what verl's losses read; zeros elsewhere), and the same
    gradients of a loss over them."""
    from verl.workers.utils.padding import no_padding_2_padding

    def loss_fn(model_output, data, dp_group):
        return no_padding_2_padding(model_output["log_probs"], data).sum(), {}

    out, took_shared, win = engine_steps(model, monkeypatch, loss_fn)
    assert took_shared
    verl, ours = out["verl"][0]["log_probs"].values(), out["ours"][0]["log_probs"].values()
    assert verl.shape == ours.shape == win.shape
    assert torch.allclose(ours[win], verl[win], atol=2e-5, rtol=0)
    assert not ours[~win].any()
    for name, g in out["verl"][1].items():
        assert torch.allclose(out["ours"][1][name], g, atol=1e-4, rtol=1e-4), name


def test_cpu_engine_forward_step_asked_for_entropy_is_verls(model, monkeypatch):
    """Entropy (or any output besides log-probs) asked for: the engine runs verl's forward step, every position."""

    def loss_fn(model_output, data, dp_group):
        return model_output["log_probs"].values().sum() + model_output["entropy"].values().sum(), {}

    out, took_shared, _ = engine_steps(model, monkeypatch, loss_fn, calculate_entropy=True)
    assert not took_shared
    for key in ("log_probs", "entropy"):
        assert torch.equal(out["ours"][0][key].values(), out["verl"][0][key].values()), key
