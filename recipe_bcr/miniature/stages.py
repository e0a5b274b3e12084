"""The stages every miniature run goes through, for the demo, the paper command and the GPU check: one
GRPO run (the stock `python -m verl.trainer.main_ppo +recipe=bcr_toy`, merged with `python -m verl.model_merger
merge`) and one evaluation (`python -m recipe_bcr.eval`). In the paper command each is skipped when its output
exists, so it resumes run by run (a run stopped half way, from its last checkpoint); a finished run made with other
settings is refused rather than mixed in."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def merge_command(run: Path, steps: int, target: Path) -> list[str]:
    """verl's merger on a run's last actor checkpoint (`run/checkpoints/global_step_<steps>/actor`) -> `target`."""
    actor = run / "checkpoints" / f"global_step_{steps}" / "actor"
    return [sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir", str(actor),
            "--target_dir", str(target)]  # fmt: skip


def run_stage(cmd: list[str], log: Path, what: str) -> None:
    """Run one stage's command; its full output goes to `log`, a failure names the log."""
    print(f"      $ {' '.join(cmd)}", flush=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"{what} failed (exit {proc.returncode}); full log: {log}\n{tail}")


def train_command(
    data_dir: Path,
    model: Path,
    ckpt: Path,
    metrics_log: Path,
    steps: int,
    save_freq: int | None = None,
    extra: tuple[str, ...] = (),
    loggers: tuple[str, ...] = ("console", "file"),
) -> list[str]:
    """The stock verl entry point with the toy recipe: validation at start and end, a checkpoint
    every `save_freq` steps (default: at the end), verl's `loggers`, its file logger at `metrics_log`."""
    return [
        sys.executable,
        "-m",
        "verl.trainer.main_ppo",
        "+recipe=bcr_toy",
        f"bcr.data_dir={data_dir}",
        f"bcr.model.path={model}",
        f"trainer.default_local_dir={ckpt}",
        f"trainer.total_training_steps={steps}",
        f"trainer.save_freq={save_freq or steps}",
        f"trainer.test_freq={steps}",
        f"trainer.logger=[{','.join(loggers)}]",
        f"+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FILE_LOGGER_PATH={metrics_log}",
        *extra,
    ]


def toy_eval_command(
    model: Path,
    label: str,
    run_dir: Path,
    bench: Path,
    ns: list[int],
    max_tokens: int,
    engine: str = "transformers",
    temperature: float = 0.6,
    top_p: float = 0.9,
    k: int | None = None,
    seed: int | None = None,
    threads: int | None = None,
) -> list[str]:
    """`python -m recipe_bcr.eval` of a tiny toy model (float32) on the toy benchmark at the group sizes `ns`:
    the one spelling of the evaluation stage for the demo, the paper command and the GPU check. `threads`: torch's
    CPU threads (OpenMP, sleeping when idle); on a few cores a tiny model generates faster on one thread."""
    prefix = ["env", f"OMP_NUM_THREADS={threads}", "OMP_WAIT_POLICY=PASSIVE"] if threads else []
    return [
        *prefix,
        sys.executable,
        "-m",
        "recipe_bcr.eval",
        f"engine={engine}",
        "bcr_model@model=tiny_qwen3",
        f"model.path={model}",
        f"label={label}",
        f"out={run_dir}",
        f"n=[{','.join(map(str, ns))}]",
        f"+benchmarks.Toy={{path:{bench},question:problem,answer:answer}}",
        "only=[Toy]",
        f"sampling.max_tokens={max_tokens}",
        f"sampling.temperature={temperature}",
        f"sampling.top_p={top_p}",
        *([f"sampling.k={k}"] if k is not None else []),
        *([f"sampling.seed={seed}"] if seed is not None else []),
        "engine_options.dtype=float32",
        "progress=false",
    ]


def flatten_metrics(verl_log: Path | list[Path], out: Path) -> list[dict[str, Any]]:
    """verl's file logger writes {"step", "data"} per log call (validation and training);
    metrics.jsonl holds one flat object per training step: {"step": N, "<verl metric>": value}. Several logs (the
    processes of a resumed run, in order): a step a later process trained again is that process's."""
    steps: dict[int, dict[str, Any]] = {}
    for log in [verl_log] if isinstance(verl_log, Path) else verl_log:
        redone: set[int] = set()
        for line in log.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                step = int(rec["step"])
                if step not in redone:
                    steps[step], redone = {}, redone | {step}
                steps[step].update(rec["data"])
    rows = [{"step": s, **m} for s, m in sorted(steps.items()) if "training/global_step" in m]
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(out)
    return rows


CHECKPOINT_EVERY = 10  # steps between a run's checkpoints: what a stopped run loses at most
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
    token_caps: tuple[tuple[int, int], ...] = ()  # (chain length, cap) of each row's own budget: the oracle cap

    @property
    def data_key(self) -> tuple[int, bool, tuple[tuple[int, int], ...]]:
        """What the run's training data depends on: runs sharing it share one folder."""
        return (self.n, self.single, self.token_caps)


def identity(run: Run, steps: int) -> dict[str, Any]:
    """What run.json (and a half-done run's run.started.json) says a run is, as JSON reads it back."""
    return {**run.__dict__, "extra": list(run.extra), "steps": steps, "token_caps": [list(c) for c in run.token_caps]}


def recorded(run: Run, root: Path, steps: int) -> bool:
    """Whether `root` records `run` as trained with these settings (its run.json); a different one there is refused."""
    out = root / "runs" / run.name
    if not (out / "run.json").exists():
        return False
    made = json.loads((out / "run.json").read_text())
    want = identity(run, steps)
    made.setdefault("token_caps", [])  # run.json written before the oracle cap existed: no caps
    keys = (*IDENTITY, "token_caps")
    changed = ", ".join(f"{k} {made.get(k)} -> {want[k]}" for k in keys if made.get(k) != want[k])
    if changed:
        raise ValueError(
            f"{out} holds run {run.name} made with other settings ({changed}); delete {out} to retrain it, "
            "or use another out=DIR"
        )
    return True


def finished(run: Run, root: Path, steps: int) -> bool:
    """Whether `run` is trained and merged in `root` with these settings; a different one there is refused."""
    return (root / "runs" / run.name / "hf_model" / "config.json").exists() and recorded(run, root, steps)


def train_group_count(data_cfg: dict[str, Any], cfg: dict[str, Any]) -> int:
    """Training groups to write: one epoch holds every step's prompts (+recipe=bcr_toy trains one epoch: a shorter
    one would end the run before train_steps, and its last checkpoint would never be written)."""
    return max(int(data_cfg["train_groups"]), int(cfg["train_steps"]) * int(cfg["grpo"]["prompts_per_step"]))


def resumable(out: Path, want: dict[str, Any]) -> int | None:
    """The checkpointed step a half-done run in `out` resumes from (verl's resume_mode=auto), if it was started with
    the settings `want`; None: nothing to resume."""
    from recipe_bcr.verl_ext.resume import latest_step

    started = out / "run.started.json"
    try:
        made = json.loads(started.read_text())
    except (OSError, ValueError):  # absent, or not this code's (written then renamed): nothing to resume
        return None
    return latest_step(out / "checkpoints") if made == want else None


def train_run(run: Run, root: Path, model: Path, data: Path, cfg: dict[str, Any], steps: int, threads: int = 1) -> Path:
    """Train and merge one run on the toy data in `data` (skipped when done); returns the merged model folder.
    Kept per run: run.json, metrics.jsonl (one flat object per step), verl's rollout dump (rollouts/), the logs.
    A run stopped half way (a session's end) resumes from its last checkpoint, every CHECKPOINT_EVERY steps, when
    run again with the same settings; with others it starts afresh. `threads`: torch threads of the run's training
    worker (runs trained at once share the cores)."""

    out = root / "runs" / run.name
    hf = out / "hf_model"
    if finished(run, root, steps):
        print(f"      {run.name}: done earlier ({hf})")
        return hf
    want = identity(run, steps)
    resume_from = resumable(out, want)
    if resume_from is None:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        tmp = out / "run.started.json.tmp"
        tmp.write_text(json.dumps(want, indent=1))
        tmp.replace(out / "run.started.json")
    else:
        print(f"      {run.name}: resuming at step {resume_from + 1} of {steps}")
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
    logs = len(list(out.glob("verl_metrics.*.jsonl")))  # one log per process: verl's logger truncates its file
    t = time.time()
    if resume_from != steps:  # at `steps` only the merge is left (verl would train a step past the last)
        verl_log = out / f"verl_metrics.{logs}.jsonl"
        extra.append("trainer.max_actor_ckpt_to_keep=1")  # the resume point; the merged model is what is evaluated
        cmd = train_command(data, model, out / "checkpoints", verl_log, steps, CHECKPOINT_EVERY, tuple(extra))
        cmd[cmd.index(f"trainer.test_freq={steps}")] = "trainer.test_freq=-1"
        run_stage(cmd, out / f"train.{logs}.log", f"training {run.name}")
        logs += 1
    flatten_metrics([out / f"verl_metrics.{k}.jsonl" for k in range(logs)], out / "metrics.jsonl")
    run_stage(merge_command(out, steps, hf), out / "merge.log", f"merging {run.name}")
    shutil.rmtree(out / "checkpoints")  # optimizer states; the merged model is what is evaluated
    record = {**want, "seconds": round(time.time() - t, 1), "resumed_from": resume_from}
    tmp = out / "run.json.tmp"
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(out / "run.json")  # written last: a run without it is redone or resumed
    (out / "run.started.json").unlink()
    print(f"      {run.name}: {time.time() - t:.0f} s")
    return hf


def evaluate(
    label: str, model: Path, ns: list[int], root: Path, bench: Path, ev: dict[str, Any], threads: int | None = None
) -> Path:
    """The eval harness on the toy benchmark -> root/eval/<label> (skipped when its summary exists; the harness
    itself resumes a half-done run sample by sample). `threads`: torch's CPU threads in the harness
    (`toy_eval_command`)."""

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


def write_data(root: Path, runs: list[Run], d: dict[str, Any], cfg: dict[str, Any], task: Any) -> dict[tuple, Path]:
    """Each (N, prompt style, caps) the runs train on, written once under DIR/data: `Run.data_key` -> its folder."""
    from recipe_bcr.miniature.toy.task import chain, write_toy_data

    train_groups = train_group_count(d, cfg)
    data: dict[tuple, Path] = {}
    for r in runs:
        if r.data_key not in data:
            name = f"single_n{r.n}" if r.single else f"group_n{r.n}"
            data[r.data_key] = root / "data" / (f"{name}_oracle_caps" if r.token_caps else name)
            style = "single" if r.single else "group"
            caps = dict(r.token_caps)
            cap = (lambda p, caps=caps: caps[len(chain(p)[1])]) if caps else None  # a row's cap: its chain length's
            write_toy_data(
                data[r.data_key], r.n, train_groups, d["val_groups"], d["seed"], task, prompt_style=style, token_cap=cap
            )
    return data


def at_once(jobs: int, work: list[tuple[str, Callable[[], Path]]], t0: float) -> list[tuple[str, Path]]:
    """Run the named stages, `jobs` at a time (each stage runs its own processes, so threads only wait), and return
    their results in the given order. After a failure no stage starts; the running ones end (their outputs are
    complete or absent, so a rerun resumes there), then the first failure is raised."""
    done: dict[str, Path] = {}
    pending, running, failure = list(work), {}, None
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            while pending and len(running) < jobs and failure is None:
                name, fn = pending.pop(0)
                running[pool.submit(fn)] = name
            if not running:
                break
            ended, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in ended:
                name = running.pop(fut)
                if fut.exception() is not None:
                    failure = failure or fut.exception()
                    continue
                done[name] = fut.result()
                print(
                    f"      [{len(done)}/{len(work)}] {name} done, {(time.time() - t0) / 60:.1f} min so far", flush=True
                )
    if failure is not None:
        raise failure
    return [(name, done[name]) for name, _ in work]
