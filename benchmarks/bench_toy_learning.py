"""Does BCR training learn? The tiny warm-started Qwen3 on the toy arithmetic-chain task, trained with
the stock `python -m verl.trainer.main_ppo +recipe=bcr_toy` on the CPU runtime.

Prints, per step, the reward score, accuracy, format rate, tokens per problem and truncation
rate, plus validation (greedy) before and after, and plots them. The toy model was warm-started
on answers with written steps (sometimes slipping) or guesses, padded with 0-3 filler sentences
(README "The toy task"), under a budget (tokens_per_problem x N) that the verbose answers overflow:
accuracy can rise and tokens per problem can fall, the BCR effect in miniature.

    python benchmarks/bench_toy_learning.py [--steps 40] [--out benchmarks/out/toy_learning] [--budget-per-problem 28]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from recipe_bcr.commands.demo import _run, flatten_metrics, train_command
from recipe_bcr.toy.model import ensure_model, load_specs
from recipe_bcr.toy.task import write_toy_data

COLUMNS = [
    ("critic/score/mean", "score"),
    ("bcr/acc", "acc"),
    ("bcr/fmt", "fmt"),
    ("bcr/answered", "answered"),
    ("bcr/tokens_per_problem", "tok/prob"),
    ("bcr/truncation_rate", "trunc"),
    ("actor/grad_norm", "grad"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--out", default="benchmarks/out/toy_learning")
    ap.add_argument("--budget-per-problem", type=float, default=None, help="bcr.tokens_per_problem (preset: 28)")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    task, mspec, toy = load_specs()
    model = ensure_model(Path(toy["cache_dir"]), task, mspec)
    write_toy_data(out / "data", toy["data"]["n"], toy["data"]["train_groups"], toy["data"]["val_groups"], 0, task)
    extra = (f"bcr.tokens_per_problem={args.budget_per_problem}",) if args.budget_per_problem else ()
    log = out / "verl_metrics.jsonl"
    t0 = time.time()
    _run(
        train_command(out / "data", model, out / "ckpt", log, args.steps, save_freq=-1, extra=extra),
        out / "train.log",
        "training",
    )
    rows = flatten_metrics(log, out / "metrics.jsonl")
    print(
        f"{args.steps} GRPO steps in {time.time() - t0:.0f} s (N={toy['data']['n']}, 8 prompts x 4 rollouts per step)"
    )
    print("step " + " ".join(f"{name:>9}" for _, name in COLUMNS))
    for r in rows:
        print(f"{r['step']:>4} " + " ".join(f"{r.get(k, float('nan')):9.3f}" for k, _ in COLUMNS))
    records = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    val = [(r["step"], {k: v for k, v in r["data"].items() if k.startswith("val-core/")}) for r in records]
    val = [(s, v) for s, v in val if v]
    for step, v in (val[0], val[-1]):
        print(f"validation (greedy) at step {step}: " + ", ".join(f"{k} {x:.3f}" for k, x in sorted(v.items())))
    plot(rows, out / "toy_learning.png")
    print(f"plot: {out / 'toy_learning.png'}; per-step metrics: {out / 'metrics.jsonl'}")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for key, name in COLUMNS[:4]:
        axes[0].plot(steps, [r[key] for r in rows], label=name)
    axes[0].set_title("reward and its parts")
    axes[1].plot(steps, [r["bcr/tokens_per_problem"] for r in rows], color="tab:red")
    axes[1].set_title("tokens per problem")
    axes[2].plot(steps, [r["bcr/truncation_rate"] for r in rows], color="tab:purple")
    axes[2].set_title("truncation rate")
    for ax in axes:
        ax.set_xlabel("GRPO step")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
