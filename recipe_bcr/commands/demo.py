"""`python -m recipe_bcr demo --out DIR`: the whole recipe in miniature, on CPU, offline.

Each stage runs the product's own command, as a user would:
1. `build_groups` on the bundled DeepMath-shaped sample (the data pipeline, N=3);
2. the toy task and the tiny Qwen3 warm-started on it (`python -m recipe_bcr toy`, cached);
3. GRPO with the stock `python -m verl.trainer.main_ppo +recipe=bcr_toy` on the CPU (real Ray,
   FSDP2, the BCR reward; verl's transformers rollout, or its vLLM rollout with `--rollout vllm`)
   -> DIR/train/checkpoints, metrics.jsonl;
4. `python -m verl.model_merger merge` -> DIR/train/hf_model (config.json + safetensors);
5. `python -m recipe_bcr.eval` on the base (warm-started) and the trained model at N = 1..3 ->
   DIR/eval_base, DIR/eval_run, and both side by side (`mode=compare`) -> DIR/compare
   (table.md, plots/accuracy_vs_n.png, plots/tokens_per_problem_vs_n.png);
then a short report. Steps and sizes are in hydra_configs/demo.yaml.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recipe_bcr.data.pipeline import build_groups
from recipe_bcr.eval.runner import SAMPLES, iter_records
from recipe_bcr.toy.model import ensure_model, load_specs
from recipe_bcr.toy.profile import profile
from recipe_bcr.toy.task import write_toy_benchmark, write_toy_data


def _cfg() -> dict[str, Any]:
    return OmegaConf.to_container(OmegaConf.load(Path(str(resources.files("hydra_configs") / "demo.yaml"))))


def run_stage(cmd: list[str], log: Path, what: str) -> None:
    """Run one stage's command; its full output goes to `log`, a failure names the log."""
    print(f"      $ {' '.join(cmd)}", flush=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"{what} failed (exit {proc.returncode}); full log: {log}\n{tail}")


def train_command(data_dir: Path, model: Path, ckpt: Path, metrics_log: Path, steps: int,
                  save_freq: int | None = None, extra: tuple[str, ...] = (),
                  loggers: tuple[str, ...] = ("console", "file")) -> list[str]:
    """The stock verl entry point with the toy recipe: validation at start and end, a checkpoint
    every `save_freq` steps (default: at the end), verl's `loggers`, its file logger at `metrics_log`."""
    return [
        sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=bcr_toy",
        f"bcr.data_dir={data_dir}", f"bcr.model.path={model}", f"trainer.default_local_dir={ckpt}",
        f"trainer.total_training_steps={steps}", f"trainer.save_freq={save_freq or steps}", f"trainer.test_freq={steps}",
        f"trainer.logger=[{','.join(loggers)}]",
        f"+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FILE_LOGGER_PATH={metrics_log}",
        *extra,
    ]


def flatten_metrics(verl_log: Path, out: Path) -> list[dict[str, Any]]:
    """verl's file logger writes {"step", "data"} per log call (validation and training);
    metrics.jsonl holds one flat object per training step: {"step": N, "<verl metric>": value}."""
    steps: dict[int, dict[str, Any]] = {}
    for line in verl_log.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            steps.setdefault(int(rec["step"]), {}).update(rec["data"])
    rows = [{"step": s, **m} for s, m in sorted(steps.items()) if "training/global_step" in m]
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(out)
    return rows


def run_demo(out: str, rollout: str | None = None) -> int:
    cfg = _cfg()
    overrides = [o for o in cfg["train_overrides"] if not o.startswith("bcr_runtime=")] + \
        ([f"bcr_runtime={rollout}"] if rollout else [o for o in cfg["train_overrides"] if o.startswith("bcr_runtime=")])
    root = Path(out).resolve()
    t0 = time.time()
    print(f"[1/5] build_groups on the bundled DeepMath-shaped sample -> {root / 'data'}")
    m = build_groups(source="sample", output_dir=root / "data", n=[3], groups=300, val_groups=20, seed=42, progress=False)
    q = m["per_n"]["3"]["quality"]
    print(f"      {m['input_rows']} rows read, {m['cleaning']['dropped']} dropped; {m['per_n']['3']['train_groups']} train "
          f"/ {m['per_n']['3']['val_groups']} val groups; group-mean spread vs random {q['spread_ratio']:.2f}")

    print("[2/5] toy arithmetic-chain task + tiny Qwen3 warm-started on it (committed copy, cached)")
    task, mspec, toy = load_specs()
    model = ensure_model(Path(toy["cache_dir"]), task, mspec)
    data_dir = root / "toy"
    write_toy_data(data_dir, toy["data"]["n"], toy["data"]["train_groups"], toy["data"]["val_groups"], toy["data"]["seed"], task)
    bench = write_toy_benchmark(data_dir / "toy_benchmark.jsonl", cfg["eval_problems"], toy["data"]["seed"], task)
    print(f"      model {model}; data {data_dir}")

    steps = int(cfg["train_steps"])
    train = root / "train"
    print(f"[3/5] GRPO, {steps} steps: stock verl entry point, CPU, {' '.join(overrides) or 'vLLM rollout'} -> {train}")
    verl_log = train / "verl_metrics.jsonl"
    run_stage(train_command(data_dir, model, train / "checkpoints", verl_log, steps, extra=tuple(overrides)),
              train / "train.log", "training")
    rows = flatten_metrics(verl_log, train / "metrics.jsonl")

    print(f"[4/5] merge the last checkpoint -> {train / 'hf_model'}")
    run_stage([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp",
          "--local_dir", str(train / "checkpoints" / f"global_step_{steps}" / "actor"),
          "--target_dir", str(train / "hf_model")], train / "merge.log", "model merge")

    run_dir, base_dir, compare_dir = root / "eval_run", root / "eval_base", root / "compare"
    print(f"[5/5] evaluate the base and the trained model at N = 1..3 ({cfg['eval_engine']} engine), side by side -> {compare_dir}")
    for label, path, folder in (("base", model, base_dir), ("trained", train / "hf_model", run_dir)):
        run_stage([sys.executable, "-m", "recipe_bcr.eval", f"engine={cfg['eval_engine']}", "engine_options.dtype=float32",
                   "bcr_model@model=tiny_qwen3", f"model.path={path}", f"label={label}", f"run_dir={folder}", "n=[1,2,3]",
                   f"+benchmarks.Toy={{path:{bench},question:problem,answer:answer}}", "only=[Toy]",
                   f"sampling.max_tokens={cfg['eval_max_tokens']}", f"sampling.k={cfg['eval_samples']}",
                   "sampling.temperature=0.6", "sampling.top_p=0.9", "progress=false"],
                  root / f"eval_{label}.log", f"evaluating the {label} model")
    run_stage([sys.executable, "-m", "recipe_bcr.eval", "mode=compare", f"compare.runs=[{base_dir},{run_dir}]",
               f"compare.out_dir={compare_dir}", f"hydra.run.dir={compare_dir}/.hydra"], root / "compare.log", "comparison")

    print("\nreport")
    keys = ("critic/score/mean", "bcr/acc", "bcr/fmt", "bcr/tokens_per_problem", "actor/grad_norm")
    for r in (rows[0], rows[-1]):
        print(f"  step {r['step']:>3}: " + "  ".join(f"{k} {r[k]:.3f}" for k in keys if k in r))
    print((compare_dir / "table.md").read_text())
    for label, folder in (("base", base_dir), ("trained", run_dir)):
        recs = list(iter_records(folder / SAMPLES))
        line = "  ".join(f"N={n}: {p['filler_per_problem']:.2f} filler, {100 * p['share_with_steps']:.0f}% with steps"
                         for n in (1, 2, 3) for p in [profile(recs, n)])
        print(f"  {label:>7} per problem  {line}")
    print(f"done in {time.time() - t0:.0f} s: {train / 'metrics.jsonl'}, {train / 'checkpoints'}, "
          f"{train / 'hf_model'}, {compare_dir / 'table.md'}, {compare_dir / 'plots'}")
    return 0
