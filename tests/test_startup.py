"""What shortens a CPU run's start-up (issue 34, benchmarks/step_speed.md): the HF rollout's server starts before
the training workers and the replica takes that server; vLLM's CPU worker runs inside its engine-core process;
no torch.compile on the CPU preset. The GPU preset keeps verl's order and settings."""

import asyncio
import os
import subprocess
import sys

import pytest

from recipe_bcr.verl_ext.checks import compose_recipe

pytestmark = pytest.mark.verl


def composed(*overrides):
    return compose_recipe(list(overrides), recipe=None, resolve=True)


@pytest.mark.parametrize("recipe", ["+recipe=bcr_toy", "+recipe=bcr bcr_device=cpu"])
def test_cpu_preset_runs_vllms_worker_in_its_engine_core_without_torch_compile(recipe):
    cpu = composed(*recipe.split())
    assert cpu.actor_rollout_ref.rollout.engine_kwargs.vllm.distributed_executor_backend == "uni"
    assert cpu.ray_kwargs.ray_init.runtime_env.env_vars.TORCH_COMPILE_DISABLE == "1"  # a string for Ray
    gpu = composed("+recipe=bcr")
    assert "distributed_executor_backend" not in gpu.actor_rollout_ref.rollout.engine_kwargs.vllm  # verl's "mp"
    assert "env_vars" not in gpu.ray_kwargs.ray_init.runtime_env


def test_torch_compile_disable_makes_compiled_functions_run_eagerly():
    """The preset's variable is the one this torch reads: a torch.compile'd function compiles no frame."""
    code = (
        "import torch\n"
        "from torch._dynamo.utils import counters\n"
        "f = torch.compile(lambda x: x.softmax(-1).argmax(-1), backend='eager')\n"
        "f(torch.randn(3, 5))\n"
        "print(sum(counters['frames'].values()), sum(counters['stats'].values()))\n"
    )

    def frames(disable: str) -> list[int]:
        env = {**os.environ, "TORCH_COMPILE_DISABLE": disable}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        return [int(x) for x in out.stdout.split()]

    assert frames("1") == [0, 0]
    assert frames("0")[0] > 0  # the counters do count a compiled frame


def test_hf_servers_are_prestarted_only_for_a_cpu_hf_run():
    from recipe_bcr.verl_ext.hf_rollout import prestart_servers

    assert prestart_servers(composed("+recipe=bcr_toy", "bcr_runtime=vllm")) == 0
    assert prestart_servers(composed("+recipe=bcr", "bcr_runtime=hf")) == 0  # GPUs: verl's order


@pytest.mark.slow
def test_hf_replica_takes_the_prestarted_server(toy):
    """The replica takes the server started ahead of the workers and never asks a training worker
    (it has none here) where to start one; the server it takes generates."""
    import ray
    from verl.workers.rollout.replica import RolloutMode

    from recipe_bcr.verl_ext.hf_rollout import HFReplica, prestart_servers, server_name

    cfg = composed("+recipe=bcr_toy", "bcr_runtime=hf", f"bcr.model.path={toy[1]}", "bcr.data_dir=unused")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": "recipe_bcr.verl_ext.plugin.worker_setup"},
    )
    try:
        assert prestart_servers(cfg) == 1
        rollout, model = cfg.actor_rollout_ref.rollout, cfg.actor_rollout_ref.model
        replica = HFReplica(replica_rank=0, config=rollout, model_config=model)
        replica.rollout_mode, replica.workers = RolloutMode.HYBRID, []
        asyncio.run(replica.launch_servers())
        assert replica._server_handle._actor_id == ray.get_actor(server_name(0))._actor_id
        out = ray.get(
            replica._server_handle.generate.remote(
                prompt_ids=[5, 6, 7], sampling_params={"temperature": 1.0, "max_tokens": 4}, request_id="r0"
            )
        )
        assert 1 <= len(out.token_ids) <= 4
    finally:
        ray.shutdown()
