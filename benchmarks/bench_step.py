"""Seconds per toy GRPO step on the CPU: the CPU preset's step settings against the ones before them,
side by side in one run.

`python -m verl.trainer.main_ppo +recipe=bcr_toy` (bcr_device=cpu) with each rollout engine, once
with today's preset ("new") and once with the overrides that restore the previous settings ("old":
`OLD_SETTINGS`), interleaved (old/new, then new/old in the next round) so that other load on a
shared machine falls on both. Per phase the median of verl's `timing_s/*` over every step after the
first (which warms up) of every round; the load average is sampled at the start and end of each run.
Before that, the threads question on its own: one forward/backward of the toy model over 32 x 230
tokens in fresh processes with 1 torch thread, 2 (libgomp's default spinning wait) and 2 passive,
interleaved (`--omp-rounds`).

    python benchmarks/bench_step.py [--runtimes hf vllm] [--rounds 2] [--steps 5] [--out benchmarks/out/step]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from recipe_bcr.commands.demo import flatten_metrics, train_command
from recipe_bcr.toy.model import ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_data

# What hydra_configs/bcr_device/cpu.yaml set before the step work (issue 23): micro-batches of 4
# completions, verl's 2 s replay-buffer poll, libgomp's default (spinning) wait policy.
OLD_SETTINGS = (
    "bcr.completions_per_device=4",
    "~bcr.replay_poll_s",
    "~ray_kwargs.ray_init.runtime_env.env_vars.OMP_WAIT_POLICY",
)
SETTINGS = {"old": OLD_SETTINGS, "new": ()}
OMP_SETTINGS = {
    "1 thread": {"OMP_NUM_THREADS": "1"},
    "2 threads": {"OMP_NUM_THREADS": "2"},
    "2 threads, passive": {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"},
}
OMP_PROBE = """
import statistics, sys, time, torch
from transformers import AutoModelForCausalLM
m = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32, attn_implementation="sdpa")
x = torch.randint(0, m.config.vocab_size, (32, 230), generator=torch.Generator().manual_seed(0))
times = []
for _ in range(4):
    t0 = time.perf_counter()
    for i in range(0, 32, 8):
        m(input_ids=x[i:i + 8]).logits.log_softmax(-1).mean().backward()
    times.append(time.perf_counter() - t0)
print(statistics.median(times[1:]))
"""
PHASES = ("gen", "old_log_prob", "ref", "adv", "update_actor", "update_weights", "step")


def run_once(model: Path, data: Path, run: Path, runtime: str, settings: tuple[str, ...], steps: int) -> dict:
    """One training run; its per-step timings (first step dropped) and the load around it."""
    log = run / "verl_metrics.jsonl"
    run.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    cmd = train_command(data, model, run / "ckpt", log, steps, save_freq=10 * steps,
                        extra=(f"bcr_runtime={runtime}", "trainer.val_before_train=false", "trainer.test_freq=-1",
                               *settings))
    load = [os.getloadavg()[0]]
    t0 = time.perf_counter()
    with (run / "train.log").open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=run)
    wall = time.perf_counter() - t0
    load.append(os.getloadavg()[0])
    if proc.returncode != 0:
        raise RuntimeError(f"{runtime} training failed ({' '.join(settings) or 'preset'}); log: {run / 'train.log'}")
    rows = flatten_metrics(log, run / "metrics.jsonl")[1:]
    return {"rows": rows, "wall_s": wall, "load": load}


def omp_probe(model: Path, rounds: int) -> dict[str, list[float]]:
    """Seconds of one toy forward/backward per OpenMP setting, each in a fresh process, interleaved."""
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, env in OMP_SETTINGS.items():
            out = subprocess.run([sys.executable, "-c", OMP_PROBE, str(model)], capture_output=True, text=True,
                                 env={**os.environ, **env}, check=True)
            times.setdefault(name, []).append(float(out.stdout.split()[-1]))
    return times


def median_phases(runs: list[dict]) -> dict[str, float]:
    rows = [r for run in runs for r in run["rows"]]
    return {p: statistics.median(r.get(f"timing_s/{p}", 0.0) for r in rows) for p in PHASES}


def report(results: dict[tuple[str, str], list[dict]], runtimes: list[str], rounds: int, steps: int) -> None:
    """The table so far (printed after every round, so that a run cut short still reports)."""
    loads = [x for runs in results.values() for r in runs for x in r["load"]]
    print(f"\n+recipe=bcr_toy, {rounds} round(s) x {steps} steps per setting, median over steps 2..{steps}; "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"old = {' '.join(OLD_SETTINGS)}\n")
    print("| rollout | phase | old s | new s | old / new |\n|---|---|---|---|---|")
    done = [rt for rt in runtimes if (rt, "old") in results and (rt, "new") in results]
    for runtime in done:
        old, new = median_phases(results[(runtime, "old")]), median_phases(results[(runtime, "new")])
        for p in PHASES:
            ratio = f"{old[p] / new[p]:.2f}x" if new[p] > 0 else "-"
            print(f"| {runtime} | {p} | {old[p]:.2f} | {new[p]:.2f} | {ratio} |")
    if {"hf", "vllm"} <= set(done):
        for name in ("old", "new"):
            hf, vl = median_phases(results[("hf", name)]), median_phases(results[("vllm", name)])
            train = ("old_log_prob", "ref", "update_actor")
            print(f"{name}: training phases with vLLM resident / with HF: "
                  + ", ".join(f"{p} {vl[p] / hf[p]:.2f}x" for p in train if hf[p] > 0))
    print(flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtimes", nargs="+", default=["hf", "vllm"], choices=["hf", "vllm"])
    ap.add_argument("--rounds", type=int, default=2, help="old/new pairs per rollout engine")
    ap.add_argument("--steps", type=int, default=5, help="GRPO steps per run (the first is dropped)")
    ap.add_argument("--omp-rounds", type=int, default=3, help="interleaved rounds of the OpenMP probe (0: skip)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/step"))
    args = ap.parse_args()
    if args.steps < 2:
        ap.error("--steps must be at least 2: the first step warms up and is dropped")

    task, mspec, cfg = load_specs()
    model = ensure_model(Path(cfg["cache_dir"]), task, mspec)
    out = args.out.resolve()
    data = out / "data"
    d = cfg["data"]
    write_toy_data(data, d["n"], d["train_groups"], d["val_groups"], d["seed"], task)

    if args.omp_rounds:
        load = os.getloadavg()[0]
        probe = omp_probe(model, args.omp_rounds)
        print(f"OpenMP probe (toy forward/backward, 32 x 230 tokens), median of {args.omp_rounds}, "
              f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}:")
        for name, ts in probe.items():
            print(f"  {name}: {statistics.median(ts):.2f} s  ({', '.join(f'{t:.2f}' for t in ts)})", flush=True)

    results: dict[tuple[str, str], list[dict]] = {}
    for rnd in range(args.rounds):
        for runtime in args.runtimes:
            order = ("old", "new") if rnd % 2 == 0 else ("new", "old")
            for name in order:
                r = run_once(model, data, out / f"{runtime}_{name}_{rnd}", runtime, SETTINGS[name], args.steps)
                results.setdefault((runtime, name), []).append(r)
                print(f"round {rnd + 1} {runtime} {name}: median step {median_phases([r])['step']:.2f} s, "
                      f"run {r['wall_s']:.0f} s, load {r['load'][0]:.1f} -> {r['load'][1]:.1f}", flush=True)
        report(results, args.runtimes, rnd + 1, args.steps)


if __name__ == "__main__":
    main()
