"""The recipe's preflight (recipe_bcr.verl_ext.preflight, run by a Hydra callback before Ray
starts): model paths, the toy model's cache, and the GPU count, each failure in one line."""

import os
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from recipe_bcr.toy.model import MODEL_DIR, built_with
from recipe_bcr.verl_ext.checks import compose_recipe
from recipe_bcr.verl_ext.preflight import PreflightError, check_gpus, check_model_paths, is_local


def _run_cfg(per_node=4, nodes=1, device="cuda", **ray_init):
    return OmegaConf.create({"trainer": {"n_gpus_per_node": per_node, "nnodes": nodes, "device": device},
                             "ray_kwargs": {"ray_init": ray_init}})


def test_hub_ids_are_not_local_paths():
    assert not is_local("Qwen/Qwen3-4B-Thinking-2507") and not is_local("gpt2")
    assert is_local("/models/x") and is_local("./x") and is_local("~/x") and is_local("models/org/x")


def test_toy_preset_materialises_its_model_in_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BCR_CACHE", str(tmp_path / "cache"))
    cfg = compose_recipe(["bcr_device=cpu", "bcr_model@bcr.model=tiny_qwen3"])
    assert check_model_paths(cfg) == [str(tmp_path / "cache" / MODEL_DIR)]   # bcr.model.path = actor's model.path
    assert built_with(tmp_path / "cache" / MODEL_DIR) is not None


def test_missing_model_folder_is_one_line_naming_key_path_and_fix(tmp_path):
    cfg = compose_recipe([f"bcr.model.path={tmp_path}/nope/model"])
    with pytest.raises(PreflightError) as e:
        check_model_paths(cfg)
    assert f"bcr.model.path={tmp_path}/nope/model: no such folder" in str(e.value)
    assert "python -m recipe_bcr toy" in str(e.value) and "\n" not in str(e.value)


def test_more_gpus_than_ray_sees_names_the_overrides_that_fit(monkeypatch):
    with pytest.raises(PreflightError, match=r"asks for 4 GPU.*sees 1 \(ray_kwargs.ray_init.num_gpus\).*"
                                             r"bcr.gpus=1 \| bcr_device=cpu \| \+recipe=bcr_toy"):
        check_gpus(_run_cfg(num_gpus=1))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")   # what Ray detects without num_gpus
    assert "4 GPU(s) asked" not in check_gpus(_run_cfg(per_node=2))
    with pytest.raises(PreflightError, match=r"sees 2 \(CUDA_VISIBLE_DEVICES\)"):
        check_gpus(_run_cfg(per_node=4))
    with pytest.raises(PreflightError, match=r"trainer.nnodes=2"):
        check_gpus(_run_cfg(per_node=2, nodes=2))


def test_a_running_cluster_is_not_second_guessed(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert "not checked" in check_gpus(_run_cfg(per_node=64))


def _run(args, env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


@pytest.mark.verl
def test_main_ppo_asking_for_absent_gpus_stops_before_ray(tmp_path):
    proc = _run(["verl.trainer.main_ppo", "+recipe=bcr"], {}, tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("[bcr preflight]")]
    assert errors == ["[bcr preflight] this run asks for 4 GPU(s) (trainer.n_gpus_per_node=4 x trainer.nnodes=1), a local "
                      "Ray start sees 0 (detected by Ray) on 1 node; overrides that fit: bcr_device=cpu | +recipe=bcr_toy"]
    assert "Started a local Ray instance" not in proc.stdout + proc.stderr


def test_eval_with_empty_cache_fails_in_one_line_naming_the_fix(tmp_path):
    proc = _run(["recipe_bcr.eval", "bcr_model@model=tiny_qwen3", "engine=transformers", f"run_dir={tmp_path / 'run'}"],
                {"BCR_CACHE": str(tmp_path / "empty")}, tmp_path)
    assert proc.returncode == 2
    [error] = [line for line in (proc.stdout + proc.stderr).splitlines() if "ERROR" in line]
    assert f"model.path={tmp_path / 'empty' / MODEL_DIR}: no such folder -> fix: `python -m recipe_bcr toy`" in error
    assert not (tmp_path / "run" / "config.yaml").exists()   # nothing of a run was written
