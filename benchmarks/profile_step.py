"""Where a toy GRPO step's time goes inside each process: py-spy samples of a training run at the miniature's
sizes, sorted into model arithmetic, verl's data movement, the rollout's Python per token, waiting, other.

Runs `python -m verl.trainer.main_ppo +recipe=bcr_toy` on the verbose toy (N=3, 8 prompts x 8 rollouts,
budget 170) with this checkout, waits for the first step to finish (it warms up), then records every
process of the run (found by a marker in its environment) with py-spy for `--seconds`. py-spy is not a
dependency: install it anywhere (e.g. `python -m venv /tmp/spy && /tmp/spy/bin/pip install py-spy`) and
pass its path. verl's own per-phase seconds are in the run's metrics.jsonl (`timing_s/*`).

    python benchmarks/profile_step.py --py-spy /tmp/spy/bin/py-spy [--runtime hf] [--seconds 25]
                                      [--out benchmarks/out/profile] [overrides ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from recipe_bcr.miniature.stages import train_command
from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs
from recipe_bcr.miniature.toy.task import write_toy_data

SIZES = ("actor_rollout_ref.rollout.n=8", "bcr.budget=170")
ROLES = ("WorkerDict", "HFRolloutServer", "TaskRunner", "AgentLoopWorker", "EngineCore", "vLLM", "RewardLoopWorker")
# (category, any of these in a sample's stack), first match wins; a sample's leaf decides "waiting"
CATEGORIES = (
    ("verl per-token log-prob loop", ("logprobs_from_logits_v2.<locals>.<listcomp>",)),
    ("KV cache concatenation", ("DynamicLayer.update",)),
    (
        "model arithmetic",
        (
            "modeling_qwen3.py",
            "_engine_run_backward",
            "batched_logprobs",
            "logprobs_from_logits",
            "entropy_from_logits",
            "optimizer.py",
            "clip_grad",
        ),
    ),
    ("rollout Python per token", ("GenerationMixin", "generate_batch", "trim_completion")),
    (
        "verl data movement",
        (
            "transfer_queue",
            "tensordict",
            "nested_tensor",
            "nested/_internal",
            "protocol.py",
            "transferqueue_utils",
            "padding",
            "serial_utils",
            "zmq",
        ),
    ),
)
WAITING = ("Worker.main_loop", "Condition.wait", "select", "_wait_for_next_poll", "sleep", "_start_loop", "poll")


def classify(stack: list[str]) -> str:
    for name, marks in CATEGORIES:
        if any(m in frame for frame in stack for m in marks):
            return name
    if any(w in stack[-1] for w in WAITING):
        return "waiting"
    return "other"


def summarise(raw: Path) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            counts[classify(stack.split(";"))] += int(n)
    return dict(counts)


def marked_processes(mark: str) -> dict[int, str]:
    """pid -> Ray role of the run's processes (those whose environment holds the marker)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"BCR_PROFILE_MARK={mark}".encode() in env:
            role = next((r for r in ROLES if r in cmd), None)
            if role:
                found[int(pid)] = role
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--py-spy", required=True, type=Path)
    ap.add_argument("--runtime", default="hf", choices=["hf", "vllm"])
    ap.add_argument("--seconds", type=int, default=25)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/profile"))
    ap.add_argument("overrides", nargs="*", help="extra main_ppo overrides")
    args = ap.parse_args()
    task, mspec, cfg = load_specs(["config=toy_verbose"])
    model = ensure_model(
        Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"], shipped=RESOURCES / cfg["shipped"]
    )
    out = args.out.resolve() / f"{args.runtime}_{time.strftime('%Y%m%d_%H%M%S')}"
    data = out / "data"
    d = cfg["data"]
    write_toy_data(data, d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    log = out / "verl_metrics.jsonl"
    cmd = train_command(
        data,
        model,
        out / "ckpt",
        log,
        args.steps,
        save_freq=10 * args.steps,
        extra=(
            f"bcr_runtime={args.runtime}",
            "trainer.val_before_train=false",
            "trainer.test_freq=-1",
            *SIZES,
            *args.overrides,
        ),
    )
    mark = uuid.uuid4().hex
    with (out / "train.log").open("w") as f:
        run = subprocess.Popen(
            cmd, stdout=f, stderr=subprocess.STDOUT, cwd=out, env={**os.environ, "BCR_PROFILE_MARK": mark}
        )
        while run.poll() is None and not any(
            json.loads(x).get("step") == 1 for x in (log.read_text().splitlines() if log.exists() else [])
        ):
            time.sleep(0.5)
        spies = []
        for pid, role in marked_processes(mark).items():
            raw = out / f"{role}_{pid}.txt"
            spies.append(
                (
                    role,
                    pid,
                    raw,
                    subprocess.Popen(
                        [
                            str(args.py_spy),
                            "record",
                            "--pid",
                            str(pid),
                            "--format",
                            "raw",
                            "--rate",
                            "200",
                            "--duration",
                            str(args.seconds),
                            "--nonblocking",
                            "-o",
                            str(raw),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    ),
                )
            )
        for *_, spy in spies:
            spy.wait()
        run.wait()
    names = [n for n, _ in CATEGORIES] + ["waiting", "other"]
    print(f"{' '.join(cmd[1:])}\npy-spy {args.seconds} s after step 1; share of each process's samples\n")
    print("| process | samples | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names))
    for role, pid, raw, _ in sorted(spies):
        if raw.exists():
            c = summarise(raw)
            total = sum(c.values()) or 1
            print(f"| {role} | {total} | " + " | ".join(f"{c.get(n, 0) / total:.0%}" for n in names) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
