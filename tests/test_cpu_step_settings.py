"""The CPU preset's step settings (issue 23, benchmarks/bench_step.py) and that the GPU preset has none of them.

On the CPU: one micro-batch per phase (the whole mini-batch), a fast replay-buffer poll that reaches
verl's buffer through BCRTrainer, and passive OpenMP threads in every Ray worker. On GPUs: verl's and
the paper's values, untouched.
"""

import os

import pytest
import torch

from recipe_bcr.verl_ext.checks import compose_recipe

pytestmark = pytest.mark.verl


def composed(*overrides):
    return compose_recipe(list(overrides), recipe=None, resolve=True)


def replay_buffer_of(cfg):
    from recipe_bcr.verl_ext.trainer import BCRTrainer

    trainer = object.__new__(BCRTrainer)  # only what _build_replay_buffer reads
    trainer.config, trainer.trainer_mode = cfg, cfg.trainer.v1.trainer_mode
    return trainer._build_replay_buffer()


@pytest.mark.parametrize("recipe", ["+recipe=bcr_toy", "+recipe=bcr bcr_device=cpu"])
@pytest.mark.parametrize("runtime", ["vllm", "hf"])
def test_cpu_preset_takes_each_mini_batch_in_one_micro_batch(recipe, runtime):
    cfg = composed(*recipe.split(), f"bcr_runtime={runtime}")
    a = cfg.actor_rollout_ref
    per_process = a.actor.ppo_mini_batch_size * a.rollout.n // cfg.trainer.n_gpus_per_node
    assert per_process == 32  # the paper's update: 8 prompts x 4 completions
    assert a.actor.ppo_micro_batch_size_per_gpu == per_process
    assert a.ref.log_prob_micro_batch_size_per_gpu == a.rollout.log_prob_micro_batch_size_per_gpu == per_process
    # the batch semantics stay the paper's: one optimizer step per 8 prompts x 4 rollouts
    assert cfg.data.train_batch_size == a.actor.ppo_mini_batch_size == 8 and a.rollout.n == 4
    assert cfg.ray_kwargs.ray_init.runtime_env.env_vars.OMP_WAIT_POLICY == "PASSIVE"
    assert cfg.data.dataloader_num_workers == 0  # no forked loader workers to outlive a run


def test_cpu_preset_polls_the_replay_buffer_fast_and_gpu_keeps_verls_interval():
    cpu = composed("+recipe=bcr_toy")
    assert cpu.bcr.replay_poll_s == 0.05
    assert replay_buffer_of(cpu).poll_interval == 0.05
    gpu = composed("+recipe=bcr")
    assert "replay_poll_s" not in gpu.bcr
    assert replay_buffer_of(gpu).poll_interval == 2.0  # verl's default, unchanged


@pytest.mark.parametrize("runtime", ["vllm", "hf"])
def test_gpu_preset_has_none_of_the_cpu_step_settings(runtime):
    cfg = composed("+recipe=bcr", f"bcr_runtime={runtime}")
    a = cfg.actor_rollout_ref
    assert a.actor.ppo_micro_batch_size_per_gpu == a.ref.log_prob_micro_batch_size_per_gpu == 2  # the paper's
    assert a.rollout.log_prob_micro_batch_size_per_gpu == 2
    assert "env_vars" not in cfg.ray_kwargs.ray_init.runtime_env
    assert cfg.trainer.device == "cuda"
    assert cfg.data.dataloader_num_workers == 8  # verl's default


@pytest.mark.parametrize("recipe", ["+recipe=bcr_toy", "+recipe=bcr bcr_device=cpu"])
def test_cpu_preset_takes_the_ppo_anchor_from_the_rollout_and_gpu_recomputes_it(recipe):
    """verl's bypass: old_log_probs = the rollout's log-probs (fp32 on the CPU: equal to the actor's to ~2e-6),
    no second actor pass; on GPUs (bf16 rollout) the anchor stays the recomputed one."""
    cpu = composed(*recipe.split())
    assert cpu.algorithm.rollout_correction.bypass_mode is True
    assert cpu.actor_rollout_ref.rollout.calculate_log_probs is True  # the bypass reads rollout_log_probs
    assert cpu.algorithm.rollout_correction.rollout_is is None and cpu.algorithm.rollout_correction.rollout_rs is None
    assert composed("+recipe=bcr").algorithm.rollout_correction.bypass_mode is False


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cpu_engine_log_probs_equal_verls_row_loop_in_one_call(dtype):
    from verl.utils.torch_functional import logprobs_from_logits_v2
    from verl.workers.engine.fsdp import transformer_impl

    from recipe_bcr.verl_ext.engine_cpu import batched_logprobs

    assert transformer_impl.logprobs_from_logits is batched_logprobs
    g = torch.Generator().manual_seed(0)
    logits = (4 * torch.randn(300, 598, generator=g)).to(dtype).requires_grad_()
    labels = torch.randint(0, 598, (300,), generator=g)
    ours = batched_logprobs(logits, labels)
    (grad_ours,) = torch.autograd.grad(ours.float().sum(), logits)
    theirs = logprobs_from_logits_v2(logits, labels)
    (grad_theirs,) = torch.autograd.grad(theirs.float().sum(), logits)
    tol = 1e-5 if dtype == torch.float32 else 0
    assert ours.dtype == theirs.dtype and torch.allclose(ours.float(), theirs.float(), atol=tol, rtol=0)
    assert torch.allclose(grad_ours.float(), grad_theirs.float(), atol=tol, rtol=0)


def test_cpu_preset_starts_ray_without_dashboard_or_prestarted_workers_and_gpu_keeps_rays_defaults():
    cpu = composed("+recipe=bcr_toy").ray_kwargs.ray_init
    assert cpu.include_dashboard is False
    assert cpu._system_config == {"prestart_worker_first_driver": False, "enable_worker_prestart": False}
    gpu = composed("+recipe=bcr").ray_kwargs.ray_init
    assert "include_dashboard" not in gpu and "_system_config" not in gpu


def test_cpu_preset_gives_the_training_worker_every_core_and_a_run_may_set_a_count():
    """Ray gives an actor without CPUs one torch thread; the CPU preset's training worker takes every core
    ("auto"), a whole number overrides it (as the paper command does for runs trained at once)."""
    env = composed("+recipe=bcr_toy").ray_kwargs.ray_init.runtime_env.env_vars
    assert env.BCR_TRAIN_THREADS == "auto"
    set_two = composed("+recipe=bcr_toy", 'ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS="2"')
    assert set_two.ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS == "2"  # a string, as Ray needs


def test_train_threads_reads_a_count_auto_or_nothing_and_names_the_key_when_wrong():
    from recipe_bcr.verl_ext.threads import train_threads

    assert train_threads(None, 4) is None and train_threads("", 4) is None  # Ray's one thread stays
    assert train_threads("auto", 4) == 4 and train_threads("3", 4) == 3
    for bad in ("0", "two", "-1", "1.5", "²"):  # "²" passes str.isdigit, not int()
        with pytest.raises(ValueError, match="BCR_TRAIN_THREADS"):
            train_threads(bad, 4)


def test_training_worker_sets_torch_threads_from_the_environment(monkeypatch):
    from recipe_bcr.verl_ext.threads import apply_train_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("BCR_TRAIN_THREADS", "1")
        apply_train_threads()
        assert torch.get_num_threads() == 1
        monkeypatch.setenv("BCR_TRAIN_THREADS", "auto")
        apply_train_threads()
        assert torch.get_num_threads() == len(os.sched_getaffinity(0))
    finally:
        torch.set_num_threads(before)
