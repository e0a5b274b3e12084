"""Checks of a composed `+recipe=bcr` config that run before Ray or any worker starts
(recipe_bcr.verl_ext.hydra_callbacks.Preflight): model paths, attention settings and their
packages, and whether Ray will see the GPUs the run asks for. Without them, a missing model
surfaces as a transformers "Repo id must be in the form ..." error inside a worker, and a run that
asks for more GPUs than there are waits on Ray's scheduler with no message."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recipe_bcr.toy.model import MODEL_DIR, ensure_model, load_specs
from recipe_bcr.verl_ext.checks import attention, attention_problem, missing, requirements

# the config keys that name a model or tokenizer folder (verl reads the tokenizer from model.path
# unless tokenizer_path is set)
MODEL_KEYS = ("bcr.model.path", "bcr.model.tokenizer", "actor_rollout_ref.model.path",
              "actor_rollout_ref.model.tokenizer_path")


class PreflightError(RuntimeError):
    """One line: what is wrong and the command or override that fixes it."""


def is_local(path: str) -> bool:
    """A folder, not a hub id ("namespace/name": at most one '/', no leading '/', '.' or '~')."""
    return path.startswith(("/", ".", "~")) or path.count("/") > 1


def check_model_paths(cfg: Any) -> list[str]:
    """Every local model path the config names exists; the toy model's cache (CACHE/toy-qwen3) is
    filled from the committed warm start when empty. Returns the folders checked, once each."""
    checked = []
    for key in MODEL_KEYS:
        value = OmegaConf.select(cfg, key, default=None)
        if not value or not is_local(str(value)):
            continue
        path = Path(str(value)).expanduser()
        if not path.exists() and path.name == MODEL_DIR:
            spec, mspec, _ = load_specs()
            ensure_model(path.parent, spec, mspec, progress=False)
        if not path.exists():
            raise PreflightError(
                f"{key}={value}: no such folder -> fix: download or build the model there, or set {key} to a model "
                f"folder or a hub id (the toy model: `python -m recipe_bcr toy`, which writes $BCR_CACHE/{MODEL_DIR})")
        checked.append(str(path))
    return list(dict.fromkeys(checked))


def check_imports(cfg: Any) -> str:
    """The actor's attention backend agrees with remove-padding, and what the config imports
    (recipe_bcr.verl_ext.checks.requirements, doctor's list) is installed."""
    problem = attention_problem(cfg)
    if problem:
        raise PreflightError(problem)
    device = "cpu" if cfg.trainer.device == "cpu" else "gpu"
    reqs = requirements(cfg, device)
    for req in missing(reqs):
        raise PreflightError(f"{'/'.join(req.modules)} is not installed ({req.why}) -> fix: {req.install}")
    return f"{attention(cfg)[0]}; {', '.join('/'.join(r.modules) for r in reqs)} import"


def visible_gpus(cfg: Any) -> tuple[int, str]:
    """GPUs a local Ray start will offer, and whence: ray_init.num_gpus when set (the CPU preset's
    logical slots), else what Ray detects (CUDA_VISIBLE_DEVICES, else the node's NVIDIA GPUs)."""
    num_gpus = OmegaConf.select(cfg, "ray_kwargs.ray_init.num_gpus", default=None)
    if num_gpus is not None:
        return int(num_gpus), "ray_kwargs.ray_init.num_gpus"
    from ray._private.accelerators import get_accelerator_manager_for_resource

    manager = get_accelerator_manager_for_resource("GPU")
    ids = manager.get_current_process_visible_accelerator_ids()
    if ids is not None:
        return len(ids), "CUDA_VISIBLE_DEVICES"
    return manager.get_current_node_num_accelerators(), "detected by Ray"


def check_gpus(cfg: Any) -> str:
    """The run asks for no more GPUs and nodes than a local Ray start has. A run that joins a
    running cluster (ray_init.address or RAY_ADDRESS) is not checked: its resources are the
    cluster's. Returns what was found."""
    address = OmegaConf.select(cfg, "ray_kwargs.ray_init.address", default=None) or os.environ.get("RAY_ADDRESS")
    if address:
        return f"joins the Ray cluster at {address}: its GPUs are not checked here"
    per_node, nodes = int(cfg.trainer.n_gpus_per_node), int(cfg.trainer.nnodes)
    visible, source = visible_gpus(cfg)
    if nodes == 1 and per_node <= visible:
        return f"{per_node} GPU(s) asked, {visible} visible to Ray ({source})"
    fits = [f"bcr.gpus={visible}"] if visible else []
    fits += [] if cfg.trainer.device == "cpu" else ["bcr_device=cpu", "+recipe=bcr_toy"]
    raise PreflightError(
        f"this run asks for {per_node * nodes} GPU(s) (trainer.n_gpus_per_node={per_node} x trainer.nnodes={nodes}), "
        f"a local Ray start sees {visible} ({source}) on 1 node; overrides that fit: {' | '.join(fits)}")


def preflight(cfg: Any) -> list[str]:
    """All checks, cheapest first; raises PreflightError on the first failure. Returns one line per check."""
    return [f"models: {', '.join(check_model_paths(cfg)) or 'hub ids only'}",
            f"attention and imports: {check_imports(cfg)}",
            f"gpus: {check_gpus(cfg)}"]
