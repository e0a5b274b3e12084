"""`python -m recipe_bcr doctor [bcr_device=gpu|cpu] [bcr_runtime=vllm|hf]`: is this install able to
run `main_ppo +recipe=bcr`? One line per check (recipe_bcr.verl_ext.checks), each failure with its
fix; then, for every device x rollout pair, every import that pair's composed config needs (checked
where this machine can run the pair, listed for the record where not).

The GPU is a failure, not a note, where the NVIDIA driver lists GPUs that torch cannot use, and
where `bcr_device=gpu` is asked for: then the pair asked for (its rollout by default vLLM, the
recipe's) must run here, or the doctor names what is missing (driver, its version, the GPU, vLLM). The
memory line says which memory preset the paper's runs need on these GPUs (advice, by arithmetic)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from recipe_bcr.verl_ext.checks import CHECKS, Check, compose_recipe, gpu_check, runtime_checks

DEVICES, RUNTIMES = ("gpu", "cpu"), ("vllm", "hf")


def memory_check() -> Check:
    """For this machine's GPUs (nvidia-smi's count and smallest memory.total), which memory preset the paper's
    runs need, by arithmetic (recipe_bcr.verl_ext.memory, the preflight's formula). Advice: never a failure."""
    from recipe_bcr.verl_ext.memory import TABLE_RUNS, candidates, first_fit
    from recipe_bcr.verl_ext.platform_cpu import nvidia_gpus

    gpus = [g for g in nvidia_gpus() or () if g.memory_mib]
    if not gpus:
        return Check("memory", True, "no GPU memory listed by nvidia-smi (docs/gpu.md, Memory)", info=True)
    small = min(gpus, key=lambda g: g.memory_mib or 0)
    memory = (small.memory_mib or 0) / 1024
    fits = []
    for label, overrides in TABLE_RUNS:
        fit = first_fit(candidates(compose_recipe([*overrides, f"bcr.gpus={len(gpus)}"])), memory)
        what = "does not fit" if fit is None else "default" if fit == "as composed" else fit
        fits.append(f"{label} {overrides[-1]}: {what}")
    return Check(
        "memory",
        True,
        f"{len(gpus)} x {small.name} ({memory:.1f} GiB), by arithmetic (docs/gpu.md, Memory): " + "; ".join(fits),
        info=True,
    )


def required_pair(overrides: list[str]) -> tuple[str, str] | None:
    """(device, rollout) the overrides ask for, None when they name no device; ValueError on anything else."""
    asked = dict(o.split("=", 1) for o in overrides if "=" in o)
    unknown = [o for o in overrides if "=" not in o or o.split("=", 1)[0] not in ("bcr_device", "bcr_runtime")]
    device, runtime = asked.get("bcr_device"), asked.get("bcr_runtime", "vllm")
    if unknown or device not in (None, *DEVICES) or runtime not in RUNTIMES:
        raise ValueError(
            f"doctor takes bcr_device={'|'.join(DEVICES)} and bcr_runtime={'|'.join(RUNTIMES)}, got "
            f"{' '.join(overrides)}"
        )
    return (device, runtime) if device else None


def run(overrides: list[str] | None = None) -> int:
    required = required_pair(overrides or [])
    checks: list[tuple[str, Callable[[], Check | list[Check]]]] = [
        *((c.__name__.strip("_").replace("_", " "), c) for c in CHECKS),
        ("gpu", partial(gpu_check, required is not None and required[0] == "gpu")),
        ("memory", memory_check),
        ("runtime imports", partial(runtime_checks, required)),
    ]
    failed = 0
    for name, check in checks:
        try:
            results = check()
        except Exception as e:  # noqa: BLE001 - a failing check is a finding, not a crash
            results = Check(name, False, f"{type(e).__name__}: {e}")
        for result in results if isinstance(results, list) else [results]:
            failed += not result.ok
            status = "info" if result.info else "ok" if result.ok else "FAIL"
            print(f"[{status}] {result.name}: {result.detail}", flush=True)
    print("doctor: all checks passed" if not failed else f"doctor: {failed} check(s) failed")
    return 1 if failed else 0
