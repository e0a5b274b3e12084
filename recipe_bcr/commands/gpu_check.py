"""`python -m recipe_bcr gpu-check --out DIR`: what only a GPU can prove, in one command.

Everything in the recipe runs on a CPU in CI except what needs a GPU: vLLM's sleep mode and
CUDA-graph capture, CUDA IPC weight transfer, NCCL, bf16 kernels, the HF rollout's offload on
CUDA. This command runs the toy model through both rollout engines on the GPU with the paper's
GPU settings (`bcr_device=gpu`), merges the vLLM-trained checkpoint, evaluates it with both
inference engines, and prints one verdict per stage with its evidence (exit 1 if any fails).
About 10 minutes on one GPU; `--device cpu` runs the same stages on a CPU (as its test does).
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

from recipe_bcr.commands.demo import flatten_metrics, run_stage, train_command
from recipe_bcr.toy.model import ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_benchmark, write_toy_data

# the rollout's log-probs against the actor's: fp32 on a CPU agrees to ~1e-5; bf16 kernels on a GPU
# differ by up to a few 1e-2 (verl's own CI threshold for bf16 is of that order)
PROBS_DIFF_LIMIT = {"cpu": 1e-3, "gpu": 0.1}


def _train(out: Path, data: Path, model: Path, device: str, runtime: str, steps: int) -> dict[str, float]:
    run = out / f"train_{runtime}"
    log = run / "verl_metrics.jsonl"
    extra = (f"bcr_device={device}", f"bcr_runtime={runtime}", "bcr.gpus=1", "bcr.completions_per_device=4")
    run_stage(train_command(data, model, run / "checkpoints", log, steps, extra=extra), run / "train.log", f"training ({runtime})")
    rows = flatten_metrics(log, run / "metrics.jsonl")
    return {
        "steps": len(rows),
        "probs_diff_max": max(r["training/rollout_probs_diff_max"] for r in rows),
        "step_s": rows[-1]["timing_s/step"],
        "score_first": rows[0]["critic/score/mean"],
        "score_last": rows[-1]["critic/score/mean"],
    }


def _evaluate(out: Path, model: Path, bench: Path, engine: str) -> dict[str, float]:
    run_dir = out / f"eval_{engine}"
    run_stage([sys.executable, "-m", "recipe_bcr.eval", f"engine={engine}", "bcr_model@model=tiny_qwen3", f"model.path={model}",
          f"label=gpu-check-{engine}", f"run_dir={run_dir}", "n=[1,2,3]", "sampling.max_tokens=72",
          "sampling.temperature=0.0", "sampling.top_p=1.0", "engine_options.dtype=float32", "progress=false",
          f"+benchmarks.Toy={{path:{bench},question:problem,answer:answer}}", "only=[Toy]"],
         run_dir.with_suffix(".log"), f"evaluation ({engine})")
    with (run_dir / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    return {f"acc_n{r['n']}": float(r["acc"]) for r in rows}


def run_gpu_check(out: str, device: str = "gpu", steps: int = 3) -> int:
    root = Path(out).resolve()
    t0 = time.time()
    task, mspec, toy = load_specs()
    model = ensure_model(Path(toy["cache_dir"]), task, mspec)
    data = root / "data"
    d = toy["data"]
    write_toy_data(data, d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    bench = write_toy_benchmark(data / "toy_benchmark.jsonl", 30, d["seed"], task)
    verdicts: dict[str, tuple[bool, str]] = {}
    for runtime in ("vllm", "hf"):
        stage = f"GRPO, bcr_device={device} bcr_runtime={runtime}"
        print(f"[gpu-check] {stage}, {steps} steps", flush=True)
        try:
            m = _train(root, data, model, device, runtime, steps)
            ok = m["steps"] == steps and m["probs_diff_max"] < PROBS_DIFF_LIMIT[device]
            verdicts[stage] = (ok, json.dumps({k: round(v, 6) for k, v in m.items()}))
        except RuntimeError as e:
            verdicts[stage] = (False, str(e).splitlines()[0])
    merged = root / "train_vllm" / "hf_model"
    try:
        run_stage([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir",
              str(root / "train_vllm" / "checkpoints" / f"global_step_{steps}" / "actor"), "--target_dir", str(merged)],
             root / "merge.log", "model merge")
        evaluated = merged
    except RuntimeError as e:
        verdicts["merge"] = (False, str(e).splitlines()[0])
        evaluated = model
    accs = {}
    for engine in ("vllm", "transformers"):
        stage = f"evaluation, engine={engine}"
        print(f"[gpu-check] {stage}", flush=True)
        try:
            accs[engine] = _evaluate(root, evaluated, bench, engine)
            verdicts[stage] = (True, json.dumps(accs[engine]))
        except RuntimeError as e:
            verdicts[stage] = (False, str(e).splitlines()[0])
    if len(accs) == 2:  # greedy decoding of one model: both engines should score alike
        gap = max(abs(accs["vllm"][k] - accs["transformers"][k]) for k in accs["vllm"])
        verdicts["engines agree (greedy, same model)"] = (gap <= 0.1, f"largest accuracy gap {gap:.3f}")
    print(f"\ngpu-check on {device} ({time.time() - t0:.0f} s), logs in {root}")
    for stage, (ok, evidence) in verdicts.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {stage}: {evidence}")
    return 0 if all(ok for ok, _ in verdicts.values()) else 1
