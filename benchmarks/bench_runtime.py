"""The paper's runtime against the transformers one, on this machine, in one run:

1. evaluation throughput: `engine=vllm` vs `engine=transformers` on the same prompts (the toy
   model, N=3 groups in the paper's prompt, k samples each, same sampling), generated tokens per
   second of generation (engine start-up reported apart);
2. GRPO step time: `python -m verl.trainer.main_ppo +recipe=bcr_toy` with the vLLM rollout vs the
   HF rollout, the same steps, seeds and data; mean `timing_s/step` and `timing_s/gen` over the
   steps after the first (the first one warms up).

    python benchmarks/bench_runtime.py [--prompts 48] [--k 4] [--steps 4] [--out benchmarks/out/runtime]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import time
from pathlib import Path

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.engines.base import Sampling, generate_all
from recipe_bcr.miniature.stages import flatten_metrics, train_command
from recipe_bcr.miniature.toy.model import ensure_model, load_specs
from recipe_bcr.miniature.toy.task import make_problem, write_toy_data


def engine_options() -> dict:
    """The engine settings the product's commands use (hydra_configs/engine_options/default.yaml), in fp32
    so that both engines run the same arithmetic."""
    from importlib import resources

    from omegaconf import OmegaConf

    options = OmegaConf.to_container(
        OmegaConf.load(str(resources.files("hydra_configs") / "engine_options/default.yaml"))
    )
    return {**options, "dtype": "float32", "replicas": 1}


def eval_throughput(model: Path, prompts: list, sampling: Sampling) -> dict[str, dict[str, float]]:
    from recipe_bcr.engines import make_engine

    options = {**engine_options(), "model": str(model)}
    results = {}
    for name, build in (
        ("vllm", lambda: make_engine("vllm", {**options, "max_model_len": 512})),
        ("transformers", lambda: make_engine("transformers", {**options, "batch_size": 16})),
    ):
        t0 = time.perf_counter()
        engine = build()
        start = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = generate_all(engine, prompts, sampling)
        gen = time.perf_counter() - t0
        tokens = sum(g.num_tokens for gs in out for g in gs)
        results[name] = {"start_s": start, "gen_s": gen, "tokens": tokens, "tokens_per_s": tokens / gen}
        del engine
    return results


def grpo_step_times(model: Path, data: Path, out: Path, steps: int) -> dict[str, dict[str, float]]:
    results = {}
    for runtime in ("vllm", "hf"):
        run = out / f"grpo_{runtime}"
        log = run / "verl_metrics.jsonl"
        run.mkdir(parents=True, exist_ok=True)
        cmd = train_command(
            data,
            model,
            run / "ckpt",
            log,
            steps,
            save_freq=10 * steps,
            extra=(f"bcr_runtime={runtime}", "trainer.val_before_train=false", "trainer.test_freq=-1"),
        )
        t0 = time.perf_counter()
        with (run / "train.log").open("w") as f:
            proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=run)
        if proc.returncode != 0:
            raise RuntimeError(f"{runtime} training failed; log: {run / 'train.log'}")
        rows = flatten_metrics(log, run / "metrics.jsonl")[1:]  # the first step warms up
        results[runtime] = {
            "wall_s": time.perf_counter() - t0,
            "step_s": statistics.mean(r["timing_s/step"] for r in rows),
            "gen_s": statistics.mean(r["timing_s/gen"] for r in rows),
            "probs_diff_max": max(r["training/rollout_probs_diff_max"] for r in rows),
        }
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=48, help="N=3 prompts for the evaluation throughput")
    ap.add_argument("--k", type=int, default=4, help="samples per prompt")
    ap.add_argument("--max-tokens", type=int, default=72, help="generation limit per prompt (72 in the README figures)")
    ap.add_argument("--steps", type=int, default=4, help="GRPO steps per rollout engine")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/runtime"))
    args = ap.parse_args()

    task, mspec, cfg = load_specs()
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec)
    rng = random.Random(0)
    prompts = [
        build_messages([make_problem(rng, task, 3 * i + j).question for j in range(3)], style="group")
        for i in range(args.prompts)
    ]
    sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=args.max_tokens, k=args.k, seed=0)
    ev = eval_throughput(model, prompts, sampling)

    data = args.out / "data"
    d = cfg["data"]
    write_toy_data(data, d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    grpo = grpo_step_times(model, data.resolve(), args.out.resolve(), args.steps)

    print(
        f"\n1. evaluation: {args.prompts} N=3 prompts x {args.k} samples, max_tokens {args.max_tokens}, fp32, toy model"
    )
    print("| engine | start-up s | generation s | generated tokens | tokens/s |\n|---|---|---|---|---|")
    for name, r in ev.items():
        print(f"| {name} | {r['start_s']:.1f} | {r['gen_s']:.1f} | {r['tokens']} | {r['tokens_per_s']:.0f} |")
    print(f"vllm / transformers throughput: {ev['vllm']['tokens_per_s'] / ev['transformers']['tokens_per_s']:.1f}x")
    print(f"\n2. GRPO (+recipe=bcr_toy, bcr_device=cpu), {args.steps} steps, mean over steps 2..{args.steps}")
    print("| rollout | step s | generation s | rollout-vs-actor probs diff max | run wall s |\n|---|---|---|---|---|")
    for name, r in grpo.items():
        print(f"| {name} | {r['step_s']:.1f} | {r['gen_s']:.1f} | {r['probs_diff_max']:.1e} | {r['wall_s']:.0f} |")
    print(
        f"HF / vLLM step time: {grpo['hf']['step_s'] / grpo['vllm']['step_s']:.2f}x; "
        f"generation: {grpo['hf']['gen_s'] / grpo['vllm']['gen_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
