"""The two stages every paper run goes through, for both miniatures: one GRPO run (the stock
`python -m verl.trainer.main_ppo +recipe=bcr_toy`, merged with `python -m verl.model_merger merge`) and one
evaluation (`python -m recipe_bcr.eval`). Each is skipped when its output exists, so a command resumes run by run;
a finished run made with other settings is refused rather than mixed in."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# run.json fields that say what a run is: a finished run whose fields differ from the plan's is not reused
IDENTITY = ("name", "group", "n", "budget", "seed", "reward", "single", "steps")


@dataclass(frozen=True)
class Run:
    """One GRPO run: its name (folder), what it is, and its main_ppo overrides."""

    name: str
    group: str  # main | budget | reward; the second miniature also: control
    n: int
    budget: int
    seed: int
    reward: str = "paper"
    single: bool = False  # single-problem prompt (the N=1 baseline and the truncation control)
    extra: tuple[str, ...] = field(default_factory=tuple)


def finished(run: Run, root: Path, steps: int) -> bool:
    """Whether `run` is trained and merged in `root` with these settings; a different one there is refused."""
    out = root / "runs" / run.name
    if not ((out / "hf_model" / "config.json").exists() and (out / "run.json").exists()):
        return False
    made = json.loads((out / "run.json").read_text())
    want = {**run.__dict__, "steps": steps}
    changed = ", ".join(f"{k} {made.get(k)} -> {want[k]}" for k in IDENTITY if made.get(k) != want[k])
    if changed:
        raise ValueError(
            f"{out} holds run {run.name} made with other settings ({changed}); delete {out} to retrain it, "
            "or use another out=DIR"
        )
    return True


def train_group_count(data_cfg: dict[str, Any], cfg: dict[str, Any]) -> int:
    """Training groups to write: one epoch holds every step's prompts (+recipe=bcr_toy trains one epoch: a shorter
    one would end the run before train_steps, and its last checkpoint would never be written)."""
    return max(int(data_cfg["train_groups"]), int(cfg["train_steps"]) * int(cfg["grpo"]["prompts_per_step"]))


def train_run(run: Run, root: Path, model: Path, data: Path, cfg: dict[str, Any], steps: int, threads: int = 1) -> Path:
    """Train and merge one run on the toy data in `data` (skipped when done); returns the merged model folder.
    Kept per run: run.json, metrics.jsonl (one flat object per step), verl's rollout dump (rollouts/), the logs.
    `threads`: torch threads of the run's training worker (runs trained at once share the cores)."""
    from recipe_bcr.commands.demo import flatten_metrics, merge_command, run_stage, train_command

    out = root / "runs" / run.name
    hf = out / "hf_model"
    if finished(run, root, steps):
        print(f"      {run.name}: done earlier ({hf})")
        return hf
    if out.exists():
        shutil.rmtree(out)
    g = cfg["grpo"]
    extra = [
        f"bcr.n={run.n}",
        f"bcr.budget={run.budget}",
        f"bcr_reward@bcr.reward={run.reward}",
        f"data.train_batch_size={g['prompts_per_step']}",  # one optimizer step per GRPO step
        f"actor_rollout_ref.actor.ppo_mini_batch_size={g['prompts_per_step']}",
        f"actor_rollout_ref.rollout.n={g['rollouts']}",
        f"actor_rollout_ref.actor.optim.lr={g['lr']}",
        f"trainer.experiment_name={run.name}",
        "trainer.val_before_train=false",
        f"data.seed={run.seed}",
        f"actor_rollout_ref.rollout.seed={run.seed}",
        f"actor_rollout_ref.actor.data_loader_seed={run.seed}",
        f"trainer.rollout_data_dir={out / 'rollouts'}",  # every rollout per step: re-derivable claims
        f'ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS="{threads}"',
        *run.extra,
        *cfg["train_overrides"],
    ]
    verl_log = out / "verl_metrics.jsonl"
    t = time.time()
    cmd = train_command(data, model, out / "checkpoints", verl_log, steps, extra=tuple(extra))
    cmd[cmd.index(f"trainer.test_freq={steps}")] = "trainer.test_freq=-1"
    run_stage(cmd, out / "train.log", f"training {run.name}")
    flatten_metrics(verl_log, out / "metrics.jsonl")
    run_stage(merge_command(out, steps, hf), out / "merge.log", f"merging {run.name}")
    shutil.rmtree(out / "checkpoints")  # optimizer states; the merged model is what is evaluated
    record = {**run.__dict__, "extra": list(run.extra), "steps": steps, "seconds": round(time.time() - t, 1)}
    tmp = out / "run.json.tmp"
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(out / "run.json")  # written last: a run without it is redone
    print(f"      {run.name}: {time.time() - t:.0f} s")
    return hf


def evaluate(
    label: str, model: Path, ns: list[int], root: Path, bench: Path, ev: dict[str, Any], threads: int | None = None
) -> Path:
    """The eval harness on the toy benchmark -> root/eval/<label> (skipped when its summary exists; the harness
    itself resumes a half-done run sample by sample). `threads`: torch's CPU threads in the harness
    (`toy_eval_command`)."""
    from recipe_bcr.commands.demo import run_stage, toy_eval_command

    run_dir = root / "eval" / label
    if (run_dir / "summary.json").exists():
        return run_dir
    cmd = toy_eval_command(
        model,
        label,
        run_dir,
        bench,
        ns,
        int(ev["tokens_per_problem"]) * max(ns),
        ev.get("engine", "transformers"),
        ev["temperature"],
        ev["top_p"],
        k=ev["samples"],
        seed=ev["seed"],
        threads=threads,
    )
    if ev.get("batch_size"):  # the transformers engine's batch (its default, 8, is small for a tiny model)
        cmd.append(f"engine_options.batch_size={int(ev['batch_size'])}")
    run_stage(cmd, root / "eval" / f"{label}.log", f"evaluating {label}")
    return run_dir
