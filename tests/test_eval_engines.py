"""Engines on CPU: the prompt ids both engines send, exact sampling settings, vLLM finish reasons,
the derived context length. The real vLLM runs in test_vllm_cpu.py; here the vLLM engine is driven
through a stand-in for the vLLM 0.24 surface it uses (LLM.enqueue, LLM.llm_engine.step,
SamplingParams, outputs) only for what the real one cannot show: the exact ids and SamplingParams
the engine hands over, and the finish reasons real vLLM produces only on failures (abort, error,
repetition)."""

import sys
import types
import uuid
from dataclasses import dataclass, field

import pytest
from transformers import AutoTokenizer

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.engines.base import Request, Sampling, generate_all
from recipe_bcr.engines.context import plan_context, with_context
from recipe_bcr.engines.render import render_ids, render_text

DEEPSEEK_BOS = 151646
MESSAGES = [
    build_messages(["What is $1+1$?", "Compute $2^{10}$."], style="group"),
    build_messages(["Solve $x^2=4$."], style="single"),
]


@pytest.fixture(scope="module")
def deepseek(shared):
    return str(shared / "tokenizers/deepseek-r1-distill-qwen-1.5b")


# ---- a stand-in for the vLLM 0.24 API surface the engine uses -------------------------------------
@dataclass
class _Completion:
    text: str
    token_ids: list
    finish_reason: str | None


@dataclass
class _RequestOutput:
    request_id: str
    outputs: list
    finished: bool = True


@dataclass
class _FakeLLMEngine:
    queued: list = field(default_factory=list)  # (request id, prompt, params)
    reasons: dict = field(default_factory=dict)  # prompt index -> finish reason to report

    def has_unfinished_requests(self):
        return bool(self.queued)

    def step(self):  # one request finishes per step, as in continuous batching
        rid, prompt, params = self.queued.pop(0)
        reason = self.reasons.get(int(rid), "stop")
        return [_RequestOutput(rid, [_Completion("ok", [1, 2, 3], reason)])]


class _FakeLLM:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.llm_engine = _FakeLLMEngine()
        self.tokenizer = AutoTokenizer.from_pretrained(kwargs["tokenizer"])
        self.sent, self.params = [], []

    def get_tokenizer(self):
        return self.tokenizer

    def enqueue(self, prompts, sampling_params, use_tqdm=True):
        assert isinstance(prompts, list) and len(prompts) == len(sampling_params) and use_tqdm is False
        self.sent += [p["prompt_token_ids"] for p in prompts]  # kept after the requests finish
        self.params += [s.kwargs for s in sampling_params]
        start = len(self.sent) - len(prompts)
        ids = [str(start + i) for i in range(len(prompts))]
        self.llm_engine.queued += list(zip(ids, prompts, sampling_params))
        return [f"{i}-{uuid.uuid4().hex[:8]}" for i in ids]  # internal ids; outputs carry the counter alone


class _FakeSamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = _FakeLLM
    module.SamplingParams = _FakeSamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    # the engine asks vLLM's platform where it runs; without this the fake passed only after a test that had
    # imported the real vllm.platforms (it failed run alone)
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: False, device_name="cuda")
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    return module


def _vllm_engine(model, **kw):
    from recipe_bcr.engines.vllm_engine import VLLMEngine

    return VLLMEngine(model=model, max_model_len=kw.pop("max_model_len", 40000), **kw)


# ---- 1. one BOS, the same ids in both engines ---------------------------------------------------------
def test_deepseek_template_writes_the_bos_so_text_prompts_would_get_two(deepseek):
    tok = AutoTokenizer.from_pretrained(deepseek)
    text = render_text(tok, MESSAGES[0])
    assert tok(text, add_special_tokens=True)["input_ids"][:2] == [
        DEEPSEEK_BOS,
        DEEPSEEK_BOS,
    ]  # what vLLM did with text
    ids = render_ids(tok, MESSAGES[0])
    assert ids[0] == DEEPSEEK_BOS and ids.count(DEEPSEEK_BOS) == 1


def test_both_engines_receive_identical_prompt_ids(deepseek, shared, fake_vllm):
    from recipe_bcr.engines.hf_engine import TransformersEngine

    hf = TransformersEngine(
        str(shared / "tiny_models/tiny-qwen3-config"), tokenizer=deepseek, random_init=True, batch_size=1
    )
    seen = []
    real = hf.model.generate

    def spy(input_ids, attention_mask, **kw):
        seen.append([t for t, m in zip(input_ids[0].tolist(), attention_mask[0].tolist()) if m])
        return real(input_ids=input_ids, attention_mask=attention_mask, **kw)

    hf.model.generate = spy
    sampling = Sampling(max_tokens=2)
    generate_all(hf, MESSAGES, sampling)
    vllm = _vllm_engine(deepseek)
    generate_all(vllm, MESSAGES, sampling)
    sent = vllm.llm.sent
    assert len(sent) == 2 and seen == sent
    assert all(ids[0] == DEEPSEEK_BOS and ids.count(DEEPSEEK_BOS) == 1 for ids in sent)


# ---- 3. exactly the configured sampling -------------------------------------------------------------
def test_vllm_gets_exactly_the_configured_sampling(deepseek, fake_vllm):
    engine = _vllm_engine(deepseek)
    assert engine.llm.kwargs["generation_config"] == "vllm" and engine.llm.kwargs["max_model_len"] == 40000
    generate_all(engine, MESSAGES, Sampling(k=2, seed=5, max_tokens=7))
    params = engine.llm.params
    assert [p["seed"] for p in params] == [5, 6, 5, 6]
    assert all(p["top_k"] == 0 and p["repetition_penalty"] == 1.0 and p["min_p"] == 0.0 for p in params)
    assert all(p["temperature"] == 0.6 and p["top_p"] == 0.9 and p["max_tokens"] == 7 for p in params)
    generate_all(engine, MESSAGES[:1], Sampling(top_k=20, repetition_penalty=1.1))
    assert engine.llm.params[-1]["top_k"] == 20 and engine.llm.params[-1]["repetition_penalty"] == 1.1


@pytest.mark.requires("vllm")
def test_vllm_sampling_fields_exist_in_the_installed_vllm():
    import vllm

    from recipe_bcr.engines.vllm_engine import sampling_kwargs

    params = vllm.SamplingParams(**sampling_kwargs(Sampling(), 1))
    assert params.top_k == 0 and params.seed == 1


@pytest.fixture(scope="module")
def tiny_with_generation_defaults(tmp_path_factory, shared):
    """A saved tiny model whose generation_config.json asks for top_k=5, repetition_penalty=1.3, min_p=0.2."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    path = tmp_path_factory.mktemp("tiny_gen")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(shared / "tiny_models/tiny-qwen3-config"))
    model.generation_config = GenerationConfig(
        do_sample=True,
        top_k=5,
        repetition_penalty=1.3,
        min_p=0.2,
        temperature=0.1,
        eos_token_id=[151645, 151643],
        bos_token_id=151643,
    )
    model.save_pretrained(path)
    return str(path)


def test_transformers_samples_with_exactly_the_configured_settings(tiny_with_generation_defaults, shared):
    from recipe_bcr.engines.hf_engine import TransformersEngine

    engine = TransformersEngine(tiny_with_generation_defaults, tokenizer=str(shared / "tokenizers/qwen3"))
    effective, _ = engine.model._prepare_generation_config(engine.generation_config(Sampling()))
    # neither the model's generation_config (5, 1.3, 0.2, 0.1) nor transformers' default top_k=50
    assert effective.top_k == 0 and effective.repetition_penalty == 1.0 and effective.min_p is None
    assert effective.temperature == 0.6 and effective.top_p == 0.9 and effective.do_sample
    assert {151645, 151643} <= engine.eos_ids  # the model's stop tokens are kept
    configured, _ = engine.model._prepare_generation_config(
        engine.generation_config(Sampling(top_k=7, repetition_penalty=1.2))
    )
    assert configured.top_k == 7 and configured.repetition_penalty == 1.2


# ---- 4. finish reasons ----------------------------------------------------------------------------------
def test_vllm_finish_reasons_stay_distinct_and_failures_are_not_answers(deepseek, fake_vllm):
    engine = _vllm_engine(deepseek)
    prompts = MESSAGES * 3  # 6 prompts, one request each
    engine.llm.llm_engine.reasons = {1: "length", 2: "abort", 3: "error", 4: "repetition"}
    requests = [Request(i, m, tuple(engine.render_ids(m)), 0) for i, m in enumerate(prompts)]
    engine.submit(requests, Sampling())
    got = dict(x for _ in range(6) for x in engine.poll())
    assert [got[i].finish_reason for i in range(6)] == ["stop", "length", "abort", "error", "repetition", "stop"]
    assert [got[i].failed for i in range(6)] == [False, False, True, True, False, False]
    assert got[3].error and engine.unfinished() == 0
    engine.llm.llm_engine.reasons = {7: "error"}  # the second of the next two requests
    with pytest.raises(RuntimeError, match="failed in the engine"):  # whole-result callers (probes) never measure one
        generate_all(engine, MESSAGES, Sampling())


# ---- 2. context length ----------------------------------------------------------------------------------
def test_context_is_longest_prompt_plus_max_tokens_within_the_model_limit():
    assert plan_context(900, 32768, 131072, None)[0] == 33668
    assert plan_context(900, 32768, 131072, 40000)[0] == 40000
    with pytest.raises(ValueError, match="'length'"):  # a set value that would cut the budget short
        plan_context(900, 32768, 131072, 32768)
    with pytest.raises(ValueError, match="at most 31868"):
        plan_context(900, 32768, 32768, None)


def test_with_context_renders_the_real_prompts(shared):
    options = {"model": str(shared / "tiny_models/tiny-qwen3-config"), "tokenizer": str(shared / "tokenizers/qwen3")}
    longest = max(len(render_ids(AutoTokenizer.from_pretrained(options["tokenizer"]), m)) for m in MESSAGES)
    assert with_context("vllm", options, MESSAGES, Sampling(max_tokens=100))["max_model_len"] == longest + 100
    with pytest.raises(ValueError, match="4096"):  # the tiny config's max_position_embeddings
        with_context("vllm", options, MESSAGES, Sampling(max_tokens=5000))
    assert "max_model_len" not in with_context("transformers", options, MESSAGES, Sampling())


def test_vllm_refuses_a_request_that_does_not_fit(deepseek, fake_vllm):
    engine = _vllm_engine(deepseek, max_model_len=50)
    with pytest.raises(ValueError, match="exceeds max_model_len 50"):
        generate_all(engine, MESSAGES, Sampling(max_tokens=40))
