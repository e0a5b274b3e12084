"""Seconds per toy GRPO step on the CPU at a fixed reference size (the verbose toy, 8 prompts x 8 rollouts, ~170
tokens; not the miniature's current sizes), the recipe at an older commit ("old") against this checkout ("new"), side by
side in one run, with each phase's share of its arithmetic limit.

`python -m verl.trainer.main_ppo +recipe=bcr_toy` on the verbose toy (N=3, 8 prompts x 8 rollouts, budget 170
tokens: ~170-token completions), with each rollout engine. "old" runs the code and presets of `--old` (a
temporary `git worktree`, put first on PYTHONPATH, removed at the end); "new" this checkout. Runs are
interleaved (old/new, then new/old in the next round) so that other load on a shared machine falls on both;
per phase the median of verl's `timing_s/*` over every step after the first (which warms up); the load
average is sampled at the start and end of each run.

Arithmetic limit: the phase's matmul FLOPs (the toy model's linear layers, attention and LM head over the
phase's tokens; backward = 2x forward; in the reference and update phases each distinct prompt of a
micro-batch once and every completion over its prompt's keys, as this checkout's CPU engine computes them,
recipe_bcr/verl_ext/engine_cpu.py) divided by the throughput of `a @ b` at the same shapes, measured
in this process (float32, best of 1 and 2 torch threads, passive OpenMP wait) after every run; each engine's limit is
taken at the best throughput seen after any run of the round (on a shared machine a probe that met other load
under-states the CPU). Share = limit / measured phase time.

    python benchmarks/bench_step.py [--old REV] [--runtimes hf vllm] [--rounds 2] [--steps 4]
                                    [--out benchmarks/out/step] [--write benchmarks/step_profile.md]
                                    [--old-overrides KEY=VALUE ...] [--new-overrides KEY=VALUE ...]

Two settings of one commit side by side: `--old HEAD --old-overrides A --new-overrides B` (the limit columns
stay float32's: a bf16 side's share is of the float32 limit).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP: spinning 2-thread matmuls stall

import torch  # noqa: E402

from recipe_bcr.miniature.stages import flatten_metrics, train_command  # noqa: E402
from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs  # noqa: E402
from recipe_bcr.miniature.toy.task import write_toy_data  # noqa: E402

GAP = "actor/rollout_logprob_gap_max"  # the rollout's log-probs against the update's own

REPO = Path(__file__).resolve().parents[1]
ROLLOUTS = 8
SIZES = (f"actor_rollout_ref.rollout.n={ROLLOUTS}", "bcr.budget=170")  # the miniature: 8 prompts x 8, ~170 tokens
PHASES = ("gen", "old_log_prob", "ref", "adv", "update_actor", "update_weights", "step")
DEFAULT_OLD = "47dddf9"  # main before issue 34


def run_once(
    tree: Path, model: Path, data: Path, run: Path, runtime: str, steps: int, overrides: tuple[str, ...] = ()
) -> dict:
    """One training run with the recipe of `tree` (and Hydra `overrides`); its per-step metrics (first step
    dropped) and the load."""
    log = run / "verl_metrics.jsonl"
    run.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    cmd = train_command(
        data,
        model,
        run / "ckpt",
        log,
        steps,
        save_freq=10 * steps,
        extra=(f"bcr_runtime={runtime}", "trainer.val_before_train=false", "trainer.test_freq=-1", *SIZES, *overrides),
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}  # that checkout alone: its recipe_bcr, hydra_configs, plugins
    load = [os.getloadavg()[0]]
    t0 = time.perf_counter()
    with (run / "train.log").open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=run, env=env)
    wall = time.perf_counter() - t0
    load.append(os.getloadavg()[0])
    if proc.returncode != 0:
        raise RuntimeError(f"{runtime} training with {tree} failed; log: {run / 'train.log'}")
    all_rows = flatten_metrics(log, run / "metrics.jsonl")
    rows = all_rows[1:]
    return {
        "rows": rows,
        "first_step_s": all_rows[0].get("timing_s/step") if all_rows else None,
        "wall_s": wall,
        "load": load,
        "startup_s": startup_seconds(run / "train.log", wall, rows),
        "run": run,
    }


def startup_seconds(train_log: Path, wall: float, rows: list[dict]) -> float | None:
    """Seconds from launch to verl's "ready to fit": the run's wall time minus what followed (the steps
    and the shutdown are not in train.log's clock, so this is wall - time after the ready line)."""
    text = train_log.read_text(errors="replace")
    mark = text.find("all initialize finished, ready to fit")
    if mark < 0:
        return None
    line = text[text.rfind("\n", 0, mark) + 1 : mark]
    stamp = line.split("INFO:")[-1].rsplit(":", 1)[0]
    ready = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
    return ready - (train_log.stat().st_mtime - wall)


def micro_batch(run: Path) -> int:
    """Rows per forward in the training phases: the run's composed actor micro-batch."""
    from omegaconf import OmegaConf

    return int(
        OmegaConf.load(
            run / "ckpt" / "hydra" / ".hydra" / "config.yaml"
        ).actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu
    )


def median_phases(runs: list[dict]) -> dict[str, float]:
    rows = [r for run in runs for r in run["rows"]]
    return {p: statistics.median(r.get(f"timing_s/{p}", 0.0) for r in rows) for p in PHASES}


def matmul_gflops(m: int, k: int, n: int, batch: int = 1, trials: int = 7) -> float:
    """GFLOP/s of `a @ b` at (batch, m, k) x (k, n) in float32: the best of `trials` at 1 and at 2 torch threads
    (on a shared machine one of them is the CPU's limit at the moment; the best trial is the least disturbed)."""
    a, b = torch.randn(batch, m, k), torch.randn(batch, k, n)
    best = float("inf")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        a @ b
        best = min(best, *(_timed(lambda: a @ b) for _ in range(trials)))
    return 2 * batch * m * k * n / best / 1e9


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def forward_shapes(cfg: dict, seqs: int, seq_len: int, ctx: int) -> list[tuple[int, int, int, int]]:
    """(batch, m, k, n) of the matmuls of one forward of `seqs` rows of `seq_len` new tokens over `ctx`
    keys: per layer q/k/v/o, gate/up/down and the attention products; the LM head."""
    h, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, d = cfg["num_attention_heads"], cfg.get("head_dim") or h // cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads", heads) * d
    m = seqs * seq_len
    layer = [
        (1, m, h, heads * d),
        (1, m, h, kv),
        (1, m, h, kv),
        (1, m, heads * d, h),
        (1, m, h, f),
        (1, m, h, f),
        (1, m, f, h),
        (seqs * heads, seq_len, d, ctx),
        (seqs * heads, seq_len, ctx, d),
    ]
    return layer * cfg["num_hidden_layers"] + [(1, m, h, v)]


BEST_GFLOPS: dict[tuple[int, int, int, int], float] = {}  # per matmul shape, the best seen in this benchmark


def arithmetic_limits(cfg: dict, rows: list[dict], micro: int, probe: bool = True) -> dict[str, tuple[float, float]]:
    """Per phase: (GFLOP, seconds at the best matmul throughput of its shapes seen so far); `probe`
    measures the shapes again (after every run: the least disturbed measurement is the CPU's limit)."""
    n = int(statistics.median(r["response_length/mean"] for r in rows) + 0.5)
    p = int(statistics.median(r["prompt_length/mean"] for r in rows) + 0.5)
    batch = int(rows[0]["global_seqlen/mean"] // (p + n) + 0.5) if rows[0].get("global_seqlen/mean") else 64

    def cost(shapes: list[tuple[int, int, int, int]], times: int = 1) -> tuple[float, float]:
        flops = secs = 0.0
        for s in shapes:
            if s not in BEST_GFLOPS or probe:
                BEST_GFLOPS[s] = max(BEST_GFLOPS.get(s, 0.0), matmul_gflops(s[1], s[2], s[3], s[0]))
            f = 2 * s[0] * s[1] * s[2] * s[3] / 1e9
            flops, secs = flops + f * times, secs + f * times / BEST_GFLOPS[s]
        return flops, secs

    # generation: a prefill over the prompts, then one token per row at a time (context: its mean)
    pf, ps = cost(forward_shapes(cfg, batch, p, p))
    df, ds = cost(forward_shapes(cfg, batch, 1, p + n // 2), times=n)
    prompts = max(1, micro // ROLLOUTS)  # distinct prompts in a micro-batch (each computed once)
    mb = [*forward_shapes(cfg, prompts, p, p), *forward_shapes(cfg, micro, n, p + n)]
    ff, fs = cost(mb, times=batch // micro)
    phases = {"gen": (pf + df, ps + ds), "ref": (ff, fs), "update_actor": (3 * ff, 3 * fs)}
    if any("training/rollout_probs_diff_max" in r for r in rows):  # the old-log-prob pass ran (no bypass)
        phases["old_log_prob"] = (ff, fs)
    return phases


def report(
    results: dict,
    runtimes: list[str],
    rounds: int,
    steps: int,
    old: str,
    new: str,
    limits: dict[str, dict[str, tuple[float, float]]],
) -> str:
    loads = [x for runs in results.values() for r in runs for x in r["load"]]
    lines = [
        f"+recipe=bcr_toy {' '.join(SIZES)} (verbose toy, N=3), {rounds} round(s) x {steps} steps per "
        f"variant, median over steps 2..{steps}; load average {min(loads):.1f}-{max(loads):.1f} on "
        f"{os.cpu_count()} CPUs",
        f"old = {old}, new = {new}",
        "",
        "| rollout | phase | old s | new s | old / new | new GFLOP | new limit s | new share of limit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for runtime in runtimes:
        if not results.get((runtime, "old")) or not results.get((runtime, "new")):
            continue
        o, nw = median_phases(results[(runtime, "old")]), median_phases(results[(runtime, "new")])
        lim = limits.get(runtime, {})
        for ph in PHASES:
            ratio = f"{o[ph] / nw[ph]:.2f}x" if nw[ph] > 0 else "-"
            gf, ls = lim.get(ph, (None, None))
            if ph == "step":
                gf, ls = sum(g for g, _ in lim.values()), sum(s for _, s in lim.values())
            share = f"{ls / nw[ph]:.1%}" if ls is not None and nw[ph] > 0 else "-"
            gtxt = f"{gf:.1f}" if gf is not None else "-"
            ltxt = f"{ls:.3f}" if ls is not None else "-"
            lines.append(f"| {runtime} | {ph} | {o[ph]:.2f} | {nw[ph]:.2f} | {ratio} | {gtxt} | {ltxt} | {share} |")
        su = {k: [r["startup_s"] for r in results[(runtime, k)] if r["startup_s"] is not None] for k in ("old", "new")}
        lines.append(
            f"| {runtime} | start-up (launch to ready to fit) | "
            f"{statistics.median(su['old']) if su['old'] else float('nan'):.0f} | "
            f"{statistics.median(su['new']) if su['new'] else float('nan'):.0f} | | | | |"
        )
        # verl starts the agent-loop workers and the load balancer after "ready to fit": step 1 waits for them
        extra = {
            k: [r["first_step_s"] - median_phases([r])["step"] for r in results[(runtime, k)] if r["first_step_s"]]
            for k in ("old", "new")
        }
        lines.append(
            f"| {runtime} | start-up inside step 1 (step 1 - median step) | "
            f"{statistics.median(extra['old']) if extra['old'] else float('nan'):.0f} | "
            f"{statistics.median(extra['new']) if extra['new'] else float('nan'):.0f} | | | | |"
        )
    lines.append("")
    for runtime in runtimes:  # the bypass's precondition (old: the pass on) and its check (new: the update's ratio)
        o = [r for run in results.get((runtime, "old"), []) for r in run["rows"]]
        nw = [r for run in results.get((runtime, "new"), []) for r in run["rows"]]
        diff = {
            k: max(
                (r["training/rollout_probs_diff_max"] for r in rows if "training/rollout_probs_diff_max" in r),
                default=float("nan"),
            )
            for k, rows in (("old", o), ("new", nw))
        }
        kl = max((abs(r["actor/ppo_kl"]) for r in nw if "actor/ppo_kl" in r), default=float("nan"))
        gap = max((r[GAP] for r in nw if GAP in r), default=float("nan"))  # bcr.anchor_on_actor: ppo_kl is 0
        clip = max((r["actor/pg_clipfrac"] for r in nw if "actor/pg_clipfrac" in r), default=float("nan"))
        new_diff = f" (new {diff['new']:.2e})" if diff["new"] == diff["new"] else ""
        lines.append(
            f"{runtime}: old max training/rollout_probs_diff_max {diff['old']:.2e}{new_diff}; "
            f"new max {GAP} {gap:.1e}, max |actor/ppo_kl| {kl:.1e}, max actor/pg_clipfrac {clip:g}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", default=DEFAULT_OLD, help="git revision of the 'old' side (default: main before #34)")
    ap.add_argument("--runtimes", nargs="+", default=["hf", "vllm"], choices=["hf", "vllm"])
    ap.add_argument("--rounds", type=int, default=2, help="old/new pairs per rollout engine")
    ap.add_argument("--steps", type=int, default=4, help="GRPO steps per run (the first is dropped)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/step"))
    ap.add_argument(
        "--old-overrides",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="Hydra overrides for the old side only: settings side by side (with --old HEAD)",
    )
    ap.add_argument(
        "--new-overrides", nargs="*", default=[], metavar="KEY=VALUE", help="Hydra overrides for the new side only"
    )
    ap.add_argument("--write", type=Path, help="also write the table (with the command and date) to this file")
    args = ap.parse_args()
    if args.steps < 2:
        ap.error("--steps must be at least 2: the first step warms up and is dropped")

    task, mspec, cfg = load_specs(["config=toy_verbose"])
    model = ensure_model(
        Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"], shipped=RESOURCES / cfg["shipped"]
    )
    out = args.out.resolve()
    data = out / "data"
    d = cfg["data"]
    write_toy_data(data, d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    old_sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", args.old], capture_output=True, text=True, check=True
    ).stdout.strip()
    new_sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    ).stdout.strip()
    new_name = f"{new_sha}{' + uncommitted changes' if dirty else ''} (this checkout)"
    old_tree = out / "old_tree"
    if old_tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], check=False)
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(old_tree), old_sha], check=True, capture_output=True
    )
    trees = {"old": old_tree, "new": REPO}
    if args.old_overrides:
        old_sha += " + " + " ".join(args.old_overrides)
    if args.new_overrides:
        new_name += " + " + " ".join(args.new_overrides)
    model_cfg = json.loads((model / "config.json").read_text())
    results: dict[tuple[str, str], list[dict]] = {}
    limits: dict[str, dict] = {}
    command = "python benchmarks/bench_step.py " + shlex.join(sys.argv[1:])
    try:
        for rnd in range(args.rounds):
            for runtime in args.runtimes:
                for name in ("old", "new") if rnd % 2 == 0 else ("new", "old"):
                    extra = tuple(args.old_overrides if name == "old" else args.new_overrides)
                    r = run_once(trees[name], model, data, out / f"{runtime}_{name}_{rnd}", runtime, args.steps, extra)
                    results.setdefault((runtime, name), []).append(r)
                    arithmetic_limits(model_cfg, r["rows"], micro_batch(r["run"]))  # probe the shapes again
                    print(
                        f"round {rnd + 1} {runtime} {name}: median step {median_phases([r])['step']:.2f} s, "
                        f"run {r['wall_s']:.0f} s, start-up {r['startup_s'] or float('nan'):.0f} s, "
                        f"load {r['load'][0]:.1f} -> {r['load'][1]:.1f}",
                        flush=True,
                    )
            for runtime in args.runtimes:  # at the best throughput seen after any run so far, for every engine
                new_rows = [row for run in results[(runtime, "new")] for row in run["rows"]]
                limits[runtime] = arithmetic_limits(
                    model_cfg, new_rows, micro_batch(out / f"{runtime}_new_{rnd}"), probe=False
                )
            table = report(results, args.runtimes, rnd + 1, args.steps, f"{old_sha} (git worktree)", new_name, limits)
            print("\n" + table + "\n", flush=True)
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], check=False)
    if args.write:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        tmp = args.write.with_suffix(".tmp")
        tmp.write_text(
            f"# Toy GRPO step at a fixed reference size (verbose toy, 8 x 8 rollouts), old against new\n\n`{command}`, {stamp}, "
            f"torch {torch.__version__}, {os.cpu_count()} CPUs shared with other jobs.\n\n{table}\n"
        )
        tmp.replace(args.write)


if __name__ == "__main__":
    main()
