"""`python -m recipe_bcr demo out=DIR`: the whole recipe in miniature, on CPU, offline.

Each stage runs the product's own command, as a user would:
1. `build_groups` on the bundled DeepMath-shaped sample (the data pipeline, N=3);
2. the toy task of the third miniature and the tiny Qwen3 warm-started on it (its base,
   `python -m recipe_bcr toy config=toy_gaps_fill20`, committed);
3. a few GRPO steps with the stock `python -m verl.trainer.main_ppo +recipe=bcr_toy` on the CPU
   (real Ray, FSDP2, the BCR reward; verl's transformers rollout, or its vLLM rollout with
   `--rollout vllm`), with the N, budget and GRPO sizes of the committed BCR model's paper run
   -> DIR/train/checkpoints, metrics.jsonl;
4. `python -m verl.model_merger merge` -> DIR/train/hf_model (config.json + safetensors);
5. `python -m recipe_bcr.eval` at N = 1..3 on the base, on the BCR model the paper command trained
   (committed: recipe_bcr/miniature/resources/toy_model_gaps_fill20_bcr, provenance.json beside it) and on this
   demo's model, sampled as the paper command evaluates (its temperature, top-p and seed) on the demo's own
   problem count -> DIR/eval_<label>, side by side (`mode=compare`) -> DIR/compare (table.md,
   plots/accuracy_vs_n.png, plots/tokens_per_problem_vs_n.png);
then a short report that ends with what the table shows, its sampling and problem count, and where the paper
command's own comparison is. Sizes: hydra_configs/demo.yaml.
"""

from __future__ import annotations

import csv
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recipe_bcr.data.pipeline import build_groups
from recipe_bcr.eval.runner import SAMPLES, iter_records
from recipe_bcr.miniature.stages import (
    flatten_metrics,
    merge_command,
    run_stage,
    toy_eval_command,
    train_command,
)
from recipe_bcr.miniature.toy.model import RESOURCES, cache_key, ensure_model, load_specs, provenance
from recipe_bcr.miniature.toy.profile import profile
from recipe_bcr.miniature.toy.task import write_toy_benchmark, write_toy_data


def _cfg() -> dict[str, Any]:
    return OmegaConf.to_container(OmegaConf.load(Path(str(resources.files("hydra_configs") / "demo.yaml"))))


def paper_trained(path: Path, base_key: str) -> dict[str, Any]:
    """The committed BCR model's provenance, if it was trained from the base with settings key `base_key`."""
    made = provenance(path)
    if made.get("base_key") != base_key or "run" not in made or "paper_config" not in made:
        raise ValueError(
            f"{path / 'provenance.json'}: not a model trained from this base (settings key {base_key}); "
            "ship one from today's base: `python -m recipe_bcr paper out=DIR registration=paper_v3 --ship bcr_n3_s0`"
        )
    return made


def sampling_words(problems: int, samples: int, ev: dict[str, Any]) -> str:
    """How the demo's evaluations sample, in words: the paper command's evaluation sampling, its own problem count."""
    return (
        f"{problems} toy problems x {samples} samples, temperature {ev['temperature']}, top-p {ev['top_p']} "
        "(the paper command's evaluation sampling)"
    )


def closing_sentence(summary: Path, labels: dict[str, str], sampling: str, paper_eval: str) -> str:
    """What the comparison table shows at N=1, in one sentence from its summary.csv (`labels`: what base, paper_bcr
    and demo_bcr are), with its own sampling and where the paper command's comparison is."""
    with summary.open() as f:
        rows = {r["label"]: r for r in csv.DictReader(f) if r["n"] == "1"}
    tok = {k: float(rows[k]["tokens_per_problem"]) for k in labels}
    acc = {k: float(rows[k]["acc"]) for k in labels}
    return (
        f"At N=1 on {sampling}: the BCR model the paper command trained ({labels['paper_bcr']}) writes "
        f"{tok['paper_bcr']:.0f} tokens a problem at {acc['paper_bcr']:.0%} accuracy, the warm-started base "
        f"{tok['base']:.0f} at {acc['base']:.0%} ({100 * (tok['paper_bcr'] / tok['base'] - 1):+.0f}% tokens), this "
        f"demo's {labels['demo_bcr']} {tok['demo_bcr']:.0f} at {acc['demo_bcr']:.0%}. {paper_eval}"
    )


def train_overrides(made: dict[str, Any], engine: list[str]) -> list[str]:
    """main_ppo overrides of the live steps: the committed model's run, its N, budget, reward and GRPO sizes (only
    the steps and the data differ), on the rollout `engine` names."""
    run, grpo = made["run"], made["paper_config"]["grpo"]
    return [
        f"bcr.n={run['n']}",
        f"bcr.budget={run['budget']}",
        f"bcr_reward@bcr.reward={run['reward']}",
        f"data.train_batch_size={grpo['prompts_per_step']}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={grpo['prompts_per_step']}",
        f"actor_rollout_ref.rollout.n={grpo['rollouts']}",
        f"actor_rollout_ref.actor.optim.lr={grpo['lr']}",
        *engine,
    ]


def evaluate_all(
    models: dict[str, tuple[Path, str]], root: Path, bench: Path, cfg: dict[str, Any], ev: dict[str, Any]
) -> Path:
    """The eval harness on each model (on `eval_threads` torch threads: a tiny model generates fastest on one), at
    the paper command's evaluation sampling; then the runs side by side -> root/compare. One after another: side by
    side on 2 cores beside other jobs, each spent 30% more CPU and the three took longer."""
    for label, (path, _) in models.items():
        run_stage(
            toy_eval_command(
                path,
                label,
                root / f"eval_{label}",
                bench,
                [1, 2, 3],
                3 * int(cfg["eval_tokens_per_problem"]),
                cfg["eval_engine"],
                ev["temperature"],
                ev["top_p"],
                k=cfg["eval_samples"],
                seed=ev["seed"],
                threads=cfg["eval_threads"],
            ),
            root / f"eval_{label}.log",
            f"evaluating {label}",
        )
    compare_dir = root / "compare"
    runs = ",".join(str(root / f"eval_{label}") for label in models)
    run_stage(
        [sys.executable, "-m", "recipe_bcr.eval", "mode=compare", f"compare.runs=[{runs}]", f"out={compare_dir}"],
        root / "compare.log",
        "comparison",
    )
    return compare_dir


def run_demo(out: str, rollout: str | None = None) -> int:
    cfg = _cfg()
    engine = [o for o in cfg["train_overrides"] if not o.startswith("bcr_runtime=")] + (
        [f"bcr_runtime={rollout}"] if rollout else [o for o in cfg["train_overrides"] if o.startswith("bcr_runtime=")]
    )
    root = Path(out).resolve()
    task, mspec, toy = load_specs([f"config={cfg['toy']}"])
    paper_model = RESOURCES / cfg["paper_model"]
    try:  # checked before any stage runs: a demo without its comparison model stops here, having written nothing
        made = paper_trained(paper_model, cache_key(task, mspec))
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    t0 = time.time()
    print(f"[1/5] build_groups on the bundled DeepMath-shaped sample -> {root / 'data'}")
    m = build_groups(
        source="sample", output_dir=root / "data", n=[3], groups=300, val_groups=20, seed=42, progress=False
    )
    q = m["per_n"]["3"]["quality"]
    print(
        f"      {m['input_rows']} rows read, {m['cleaning']['dropped']} dropped; {m['per_n']['3']['train_groups']} train "
        f"/ {m['per_n']['3']['val_groups']} val groups; group-mean spread vs random {q['spread_ratio']:.2f}"
    )

    print(f"[2/5] toy arithmetic-chain task ({cfg['toy']}) + tiny Qwen3 warm-started on it (committed copy, cached)")
    model = ensure_model(
        Path(toy["cache_dir"]), task, mspec, model_dir=toy["model_dir"], shipped=RESOURCES / toy["shipped"]
    )
    data_dir = root / "toy"
    write_toy_data(
        data_dir, toy["data"]["n"], toy["data"]["train_groups"], toy["data"]["val_groups"], toy["data"]["seed"], task
    )
    bench = write_toy_benchmark(data_dir / "toy_benchmark.jsonl", cfg["eval_problems"], toy["data"]["seed"], task)
    print(f"      model {model}; data {data_dir}")

    steps, run = int(cfg["train_steps"]), made["run"]
    train = root / "train"
    print(
        f"[3/5] GRPO, {steps} steps at N={run['n']} under B={run['budget']} (the committed model's run "
        f"{run['name']}: {run['steps']} steps): stock verl entry point, CPU, {' '.join(engine) or 'vLLM rollout'} -> {train}"
    )
    verl_log = train / "verl_metrics.jsonl"
    run_stage(
        train_command(
            data_dir, model, train / "checkpoints", verl_log, steps, extra=tuple(train_overrides(made, engine))
        ),
        train / "train.log",
        "training",
    )
    rows = flatten_metrics(verl_log, train / "metrics.jsonl")

    print(f"[4/5] merge the last checkpoint -> {train / 'hf_model'}")
    run_stage(merge_command(train, steps, train / "hf_model"), train / "merge.log", "model merge")

    models = {
        "base": (model, "the warm-started base"),
        "paper_bcr": (paper_model, f"{run['steps']} GRPO steps, committed"),
        "demo_bcr": (train / "hf_model", f"{steps} live steps"),
    }
    ev = made["paper_config"]["eval"]
    sampling = sampling_words(int(cfg["eval_problems"]), int(cfg["eval_samples"]), ev)
    print(f"[5/5] evaluate {', '.join(models)} at N = 1..3 on {sampling} -> {root / 'compare'}")
    compare_dir = evaluate_all(models, root, bench, cfg, ev)

    print("\nreport")
    keys = ("critic/score/mean", "bcr/acc", "bcr/fmt", "bcr/tokens_per_problem", "actor/grad_norm")
    for r in (rows[0], rows[-1]):
        print(f"  step {r['step']:>3}: " + "  ".join(f"{k} {r[k]:.3f}" for k in keys if k in r))
    print("  " + "; ".join(f"{label}: {what}" for label, (_, what) in models.items()))
    print((compare_dir / "table.md").read_text())
    for label in models:
        recs = list(iter_records(root / f"eval_{label}" / SAMPLES))
        line = "  ".join(
            f"N={n}: {100 * p['redundancy']:.0f}% redundant text, {100 * p['share_with_steps']:.0f}% with steps"
            for n in (1, 2, 3)
            for p in [profile(recs, n)]
        )
        print(f"  {label:>9} per problem  {line}")
    paper_eval = (
        f"The paper command's own comparison, against a GRPO-trained N=1 baseline on {ev['problems']} problems x "
        f"{len(made['paper_config']['seeds'])} seeds, is its report (report.md in benchmarks/paper_v3/, F1)."
    )
    print(
        closing_sentence(
            compare_dir / "summary.csv", {k: what for k, (_, what) in models.items()}, sampling, paper_eval
        )
    )
    print(
        f"done in {time.time() - t0:.0f} s: {train / 'metrics.jsonl'}, {train / 'checkpoints'}, "
        f"{train / 'hf_model'}, {compare_dir / 'table.md'}, {compare_dir / 'plots'}"
    )
    return 0
