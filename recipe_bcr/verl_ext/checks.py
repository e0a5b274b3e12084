"""The install checks behind `python -m recipe_bcr doctor`: verl, Hydra's plugin scan, the
recipe group, the reward, verl's and vLLM's hooks, whether torch can use the NVIDIA GPUs the
driver lists, and which device x engine pairs can run.

Without our Hydra search-path plugin, `+recipe=bcr` silently becomes a plain string and
verl trains on its stock defaults; each check says what is wrong and how to fix it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

VERL_VERSION = "0.9.1"
EDITABLE_FIX = (
    "a setuptools editable install (`pip install -e .`) hides hydra_plugins from Hydra's scan "
    "(hydra issue 2359); reinstall with `pip install --config-settings editable_mode=compat -e .` "
    "or a normal `pip install .`"
)


# --- GPUs that torch cannot use. The preflight, `bcr.gpus=auto` and the doctor ask here, so that a machine
# whose NVIDIA driver lists GPUs that torch cannot drive (a driver older than torch's CUDA build, a CPU build
# of torch, hidden devices) is named as such instead of being taken for a machine without GPUs. What the driver
# lists comes from `nvidia-smi` (platform_cpu.nvidia_gpus), which answers whatever CUDA_VISIBLE_DEVICES says
# and whatever CUDA torch was built for; `torch.cuda.is_available()` answers False in all those cases.

# Oldest Linux driver branch that runs a CUDA major release (NVIDIA's minor-version compatibility
# table, docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
DRIVER_FLOOR = {11: 450, 12: 525, 13: 580}
TORCH_INSTALL = "pip install torch==2.11.0 (PyPI's Linux wheel: the CUDA 13.0 build)"


def driver_floor(cuda: str | None) -> int | None:
    """The oldest driver branch that runs torch's CUDA build `cuda` (e.g. "13.0" -> 580)."""
    if not cuda:
        return None
    return DRIVER_FLOOR.get(int(cuda.split(".")[0]))


def _branch(driver: str) -> int:
    return int(driver.split(".")[0])


def _cuda_init_error() -> str:
    """torch's own reason why CUDA did not initialise (a warning it emits once), if it gave one."""
    import torch

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.device_count()
    return next((str(w.message).splitlines()[0] for w in caught), "")


def gpu_problem() -> str | None:
    """Why torch cannot run on this machine's NVIDIA GPUs, most basic cause first, with the fix
    (None: torch sees a CUDA device)."""
    import torch

    from recipe_bcr.verl_ext.platform_cpu import nvidia_gpus

    if torch.cuda.is_available():
        return None
    gpus = nvidia_gpus()
    if gpus is None:
        return (
            "no NVIDIA driver: nvidia-smi is not on PATH or fails -> fix: run on a machine with NVIDIA GPUs and "
            "their driver"
        )
    if not gpus:
        return "nvidia-smi lists no GPU -> fix: check the driver (`nvidia-smi`) and the container's device mounts"
    listed = f"nvidia-smi lists {len(gpus)} x {gpus[0].name}, driver {gpus[0].driver}"
    if torch.version.cuda is None:
        return f"{listed}, but torch {torch.__version__} is a CPU build -> fix: {TORCH_INSTALL}"
    floor = driver_floor(torch.version.cuda)
    if floor is not None and _branch(gpus[0].driver) < floor:
        return (
            f"{listed}: older than the {floor} that torch {torch.__version__} "
            f"(built for CUDA {torch.version.cuda}) "
            f"needs -> fix: upgrade the NVIDIA driver to {floor} or newer (where you cannot: docs/gpu.md, Install "
            "and the doctor: CUDA forward compatibility)"
        )
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and not hidden.strip(","):
        return f"{listed}, but CUDA_VISIBLE_DEVICES={hidden!r} hides them -> fix: unset CUDA_VISIBLE_DEVICES"
    why = _cuda_init_error()
    cannot = f"{listed}, but torch {torch.__version__} (CUDA {torch.version.cuda}) cannot use them"
    return cannot + (f": {why}" if why else "")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    info: bool = False  # for the record only (a runtime this machine cannot run): never a failure


def _verl_version() -> Check:
    import verl

    version = getattr(verl, "__version__", "unknown")
    ok = version == VERL_VERSION
    fix = "" if ok else f" -> fix: pip install 'verl[verl-core,math]=={VERL_VERSION}'"
    return Check("verl version", ok, f"verl {version} (recipe pinned to {VERL_VERSION}){fix}")


def _editable_finder() -> Check:
    finders = [
        type(f).__module__
        for f in sys.meta_path
        if "__editable__" in type(f).__module__ and "bcr" in type(f).__module__
    ]
    if finders:
        return Check("install mode", False, f"{finders[0]}: {EDITABLE_FIX}")
    return Check("install mode", True, "no setuptools editable finder for bcr-recipe")


def _plugin() -> Check:
    from hydra.core.plugins import Plugins
    from hydra.plugins.search_path_plugin import SearchPathPlugin

    names = [p.__name__ for p in Plugins.instance().discover(SearchPathPlugin)]
    ok = "BCRRecipeSearchPathPlugin" in names
    detail = (
        "Hydra discovers BCRRecipeSearchPathPlugin"
        if ok
        else (
            f"Hydra does not discover hydra_plugins.bcr_recipe (found: {names or 'none'}), so +recipe=bcr would "
            f"compose to a plain string -> fix: install bcr-recipe into this environment; {EDITABLE_FIX}"
        )
    )
    return Check("hydra plugin", ok, detail)


def _recipe_composes() -> Check:
    from omegaconf import OmegaConf

    cfg = compose_recipe([])
    recipe = cfg.get("recipe")
    if isinstance(recipe, str) or "bcr" not in cfg:
        return Check("recipe group", False, "+recipe=bcr composed to a string: the recipe config group was not found")
    path = OmegaConf.select(cfg, "reward.custom_reward_function.path")
    ok = path == "pkg://reward_fns.bcr" and int(cfg.data.max_response_length) == int(cfg.bcr.max_response_length)
    return Check(
        "recipe group",
        ok,
        f"+recipe=bcr -> reward {path}, budget {cfg.data.max_response_length} at n={cfg.bcr.n}, "
        f"experiment {cfg.trainer.experiment_name}",
    )


def _reward() -> Check:
    from verl.utils.import_utils import load_extern_object

    fn = load_extern_object("pkg://reward_fns.bcr", "compute_score")
    text = "### Problem 1\nAnswer1: \\boxed{(x+1)^2}\n### Problem 2\nAnswer2: \\boxed{0.5}"
    out = fn("doctor", text, ["x^2+2x+1", "\\frac{1}{2}"], {"n": 2})
    ok = out["score"] == 3.0
    return Check("reward function", ok, f"pkg://reward_fns.bcr compute_score -> score {out['score']} (expected 3.0)")


def _reward_manager() -> Check:
    from verl.utils.import_utils import load_extern_object

    cls = load_extern_object("pkg://recipe_bcr.verl_ext.reward_manager", "BCRRewardManager")
    return Check("reward manager", True, f"{cls.__module__}.{cls.__name__} loads")


def _verl_hooks() -> Check:
    """What every Ray worker registers (recipe_bcr.verl_ext.plugin.worker_setup) still fits this verl."""
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.workers.rollout.base import get_rollout_class

    from recipe_bcr.verl_ext.plugin import worker_setup

    worker_setup()
    trainer, rollout = get_trainer_cls("sync").__name__, get_rollout_class("hf", "async").__name__
    return Check(
        "verl hooks", True, f"trainer_mode=sync -> {trainer}; rollout hf -> {rollout}; platform cpu registered"
    )


@functools.cache
def _vllm_platform() -> tuple[str | None, str | None]:
    """(vLLM's platform device type, None) if vLLM imports and finds a device, else (None, why not)."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return None, "vllm is not installed (GPU: pip install -e '.[gpu]'; CPU: bash .ci/setup)"
    from vllm.platforms import current_platform

    if current_platform.is_unspecified():
        return None, f"vLLM {importlib.metadata.version('vllm')} finds no device it can run on"
    return current_platform.device_type, None


def runtime_name(device: str, runtime: str) -> str:
    return f"bcr_device={device} bcr_runtime={runtime}"


def runtimes() -> dict[str, str | None]:
    """`bcr_device=D bcr_runtime=R` (and eval engine) -> None if this install can run it, else why not."""
    import torch

    devices = {
        "gpu": gpu_problem(),
        "cpu": None if torch.distributed.is_gloo_available() else "torch was built without gloo",
    }
    vllm_device, vllm_why = _vllm_platform()
    found: dict[str, str | None] = {}
    for device, why in devices.items():
        wrong = (
            None
            if vllm_device is None or vllm_device == ("cpu" if device == "cpu" else "cuda")
            else f"this vLLM build runs on {vllm_device}"
        )
        found[runtime_name(device, "vllm")] = why or vllm_why or wrong
        found[runtime_name(device, "hf")] = why
    found["eval engine=vllm"] = vllm_why
    found["eval engine=transformers"] = None
    return found


def _runtimes() -> Check:
    found = runtimes()
    detail = "; ".join(f"{name}: {'yes' if why is None else 'no (' + why + ')'}" for name, why in found.items())
    return Check("runtimes", any(why is None for why in found.values()), detail)


# verl 0.9.1 loads the actor with override_config.attn_implementation, default flash_attention_2
# (verl/workers/config/model.py); transformers 5.9 runs that with the flash_attn package or, without
# it, fetches kernels-community/flash-attn2 from the hub through the `kernels` package (network).
VERL_DEFAULT_ATTENTION = "flash_attention_2"
FLASH_ATTN_INSTALL = (
    "pip install flash-attn==2.8.3 --no-build-isolation (what verl's flash-attn-cu130torch211 extra "
    "pins; no wheel for torch 2.11/CUDA 13 on PyPI: it compiles from source, see the README), or "
    "actor_rollout_ref.model.override_config.attn_implementation=sdpa (bcr_device=gpu's, no package)"
)


@dataclass
class Requirement:
    modules: tuple[str, ...]  # any one of them satisfies it
    why: str
    install: str


def attention(cfg: Any) -> tuple[str, bool]:
    """(attention implementation, remove padding) that verl's actor gets from this config."""
    model = cfg.actor_rollout_ref.model
    attn = (model.get("override_config") or {}).get("attn_implementation", VERL_DEFAULT_ATTENTION)
    return str(attn), bool(model.use_remove_padding)


# Implementations whose packed (remove-padding) input verl 0.9.1 keeps apart. verl calls the model with
# use_cache=False, attention_mask=None and position_ids that restart at 0 for each packed sequence; transformers
# 5.9 then builds a block-causal mask from the position_ids for sdpa and eager (masking_utils:
# find_packed_sequence_indices), and flash-attn takes them as varlen boundaries. tests/test_sdpa_packing.py runs
# that call on tiny random Qwen2 and Qwen3: packed and padded logits agree to float rounding.
PACKED_ATTENTION = ("flash_attention_2", "flash_attention_3", "sdpa", "eager")


def attention_problem(cfg: Any) -> str | None:
    """Why this config's attention backend and remove-padding disagree (None: they agree): an
    implementation not known to keep packed sequences apart (PACKED_ATTENTION), or the CPU engine."""
    attn, remove_padding = attention(cfg)
    if remove_padding and cfg.trainer.device == "cpu":
        return (
            "actor_rollout_ref.model.use_remove_padding=true with bcr_device=cpu: the recipe's CPU engine "
            "(recipe_bcr/verl_ext/engine_cpu.py) takes padded micro-batches only -> fix: "
            "actor_rollout_ref.model.use_remove_padding=false"
        )
    if remove_padding and attn not in PACKED_ATTENTION:
        return (
            f"actor_rollout_ref.model.use_remove_padding=true with attn_implementation={attn}: not known to keep "
            f"packed sequences apart -> fix: actor_rollout_ref.model.use_remove_padding=false, or "
            f"actor_rollout_ref.model.override_config.attn_implementation=sdpa"
        )
    return None


def attention_note(cfg: Any) -> str:
    """What the actor's attention costs, for the preflight's line."""
    attn, remove_padding = attention(cfg)
    if not remove_padding:
        return f"{attn} on padded micro-batches (each row padded to the micro-batch's longest)"
    if attn == "sdpa":
        return (
            "sdpa on packed sequences (transformers' block mask from position_ids; not timed against padded "
            "batches on a GPU)"
        )
    return f"{attn} on packed sequences"


def requirements(cfg: Any, device: str) -> list[Requirement]:
    """What a composed `+recipe=bcr` config imports in its driver and workers."""
    setup = "pip install --config-settings editable_mode=compat -e '.[gpu]'" if device == "gpu" else "bash .ci/setup"
    found = [
        Requirement(("ray",), "verl's workers", f"pip install 'ray[default]>=2.41' (or {setup})"),
        Requirement(("fastapi",), "verl's agent loop (rollout server)", f"pip install fastapi uvicorn (or {setup})"),
        Requirement(("uvicorn",), "verl's agent loop (rollout server)", f"pip install fastapi uvicorn (or {setup})"),
        # imported by verl/workers/rollout/router.py but not declared by verl 0.9.1 (vLLM brings it)
        Requirement(("cachetools",), "verl's agent loop (rollout router)", "pip install cachetools"),
    ]
    if cfg.actor_rollout_ref.rollout.name == "vllm":
        found.append(Requirement(("vllm",), "bcr_runtime=vllm", setup))
    if attention(cfg)[0] == VERL_DEFAULT_ATTENTION:
        found.append(
            Requirement(("flash_attn", "kernels"), "attn_implementation=flash_attention_2", FLASH_ATTN_INSTALL)
        )
    return found


def missing(reqs: list[Requirement]) -> list[Requirement]:
    return [r for r in reqs if not any(importlib.util.find_spec(m) is not None for m in r.modules)]


def compose_recipe(overrides: list[str], recipe: str | None = "bcr", resolve: bool = False) -> Any:
    """verl's ppo_trainer with `+recipe=<recipe>` (None: the overrides name it) and `overrides`, as the stock entry
    point composes it; `resolve` resolves every interpolation (what the workers read)."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    with initialize_config_module("verl.trainer.config", version_base=None):
        cfg = compose("ppo_trainer", overrides=[*([f"+recipe={recipe}"] if recipe else []), *overrides])
    if resolve:
        OmegaConf.resolve(cfg)
    return cfg


def runtime_requirements(device: str, runtime: str, not_here: str | None = None) -> Check:
    """Every import `bcr_device=D bcr_runtime=R` needs, and its attention settings' agreement;
    `not_here`: why this machine cannot run it (then the line is for the record only)."""
    name = f"imports for {runtime_name(device, runtime)}"
    cfg = compose_recipe([f"bcr_device={device}", f"bcr_runtime={runtime}"])
    if "bcr" not in cfg:  # the recipe group is not found: the "recipe group" check says why
        return Check(name, False, "+recipe=bcr does not compose, so its imports are unknown (see recipe group)")
    reqs = requirements(cfg, device)
    attn, remove_padding = attention(cfg)
    extra = "flash_attn or kernels" if attn == VERL_DEFAULT_ATTENTION else "torch only, no flash-attn"
    needs = (
        f"{', '.join('/'.join(r.modules) for r in reqs)}; attention {attn} ({extra}), "
        f"use_remove_padding={str(remove_padding).lower()}"
    )
    if not_here:
        return Check(name, True, f"not runnable here ({not_here}); it needs {needs}", info=True)
    problems = [f"{'/'.join(r.modules)} missing ({r.why}) -> fix: {r.install}" for r in missing(reqs)]
    problems += [p for p in [attention_problem(cfg)] if p]
    return Check(name, not problems, "; ".join(problems) if problems else needs)


def _vllm_plugin() -> Check:
    """vLLM loads the recipe's plugin in its own processes (verl's rollout on a CPU needs it)."""
    import importlib.metadata

    if _vllm_platform()[0] is None:
        return Check("vllm plugin", True, "not needed: vLLM cannot run here")
    names = [ep.name for ep in importlib.metadata.entry_points(group="vllm.general_plugins")]
    if "bcr_recipe" not in names:
        return Check(
            "vllm plugin",
            False,
            f"entry point vllm.general_plugins:bcr_recipe not found ({names}) -> fix: "
            "reinstall bcr-recipe into this environment",
        )
    from recipe_bcr.verl_ext.vllm_plugin import check_vllm_hook

    check_vllm_hook()
    return Check("vllm plugin", True, "vllm.general_plugins:bcr_recipe registered; its vLLM hook fits this vLLM")


CHECKS: list[Callable[[], Check]] = [
    _verl_version,
    _editable_finder,
    _plugin,
    _recipe_composes,
    _reward,
    _reward_manager,
    _verl_hooks,
    _vllm_plugin,
    _runtimes,
]


def runtime_checks(required: tuple[str, str] | None = None) -> list[Check]:
    """runtime_requirements for every device x rollout pair (checked where `runtimes` says this
    install can run it, listed for the record where not). The `required` pair (doctor's
    `bcr_device=D [bcr_runtime=R]`) fails where it cannot run, naming why."""
    found = runtimes()
    checks = []
    for device in ("gpu", "cpu"):
        for runtime in ("vllm", "hf"):
            why = found[runtime_name(device, runtime)]
            if (device, runtime) == required and why:
                checks.append(
                    Check(f"imports for {runtime_name(device, runtime)}", False, f"asked for, cannot run here: {why}")
                )
            else:
                checks.append(runtime_requirements(device, runtime, why))
    return checks


def gpu_check(required: bool = False) -> Check:
    """Whether torch can use this machine's NVIDIA GPUs. A failure where the driver lists GPUs (a
    driver older than torch's CUDA build, a CPU build of torch), or where a GPU run was asked for;
    for the record only on a machine without NVIDIA GPUs."""
    import torch

    from recipe_bcr.verl_ext.platform_cpu import nvidia_gpus

    problem = gpu_problem()
    if problem is None:
        listed = nvidia_gpus() or ()
        what = f": {listed[0].name}, driver {listed[0].driver}" if listed else ""
        return Check(
            "gpu",
            True,
            f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees {torch.cuda.device_count()} GPU(s){what}",
        )
    if not nvidia_gpus() and not required:
        return Check("gpu", True, f"no NVIDIA GPU here ({problem.split(' -> ')[0]}): CPU runs only", info=True)
    return Check("gpu", False, problem)
