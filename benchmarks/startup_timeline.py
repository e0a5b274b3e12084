"""Where a toy run's start-up goes: when each process of `main_ppo +recipe=bcr_toy` starts and when it is
ready, from launch to the end of step 1.

Runs a 1-step toy GRPO run at a fixed reference size (verbose toy, N=3, 8 prompts x 8 rollouts, budget 170)
with the recipe of `--tree` (default this checkout) and Ray's session files in a folder of its own, then
reads: for each Ray worker process, its actor (or task) name, when Ray constructed it and when its actor
was created (`python-core-worker-*.log`: "Constructing CoreWorkerProcess", "Actor creation task finished");
and verl's milestones in the run's log ("Started a local Ray instance", "all initialize finished, ready to
fit", step 1). Times are seconds after launch; a process's "ready" minus "started" is its imports and its
`__init__`.

    python benchmarks/startup_timeline.py [--runtime hf|vllm] [--tree PATH] [--out benchmarks/out/startup]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from recipe_bcr.miniature.stages import train_command
from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs
from recipe_bcr.miniature.toy.task import write_toy_data

SIZES = ("actor_rollout_ref.rollout.n=8", "bcr.budget=170")
STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3})")
MILESTONES = {
    "Ray started": "Started a local Ray instance",
    "ready to fit": "all initialize finished, ready to fit",
}


def stamp(text: str) -> float | None:
    m = STAMP.search(text)
    return datetime.datetime.strptime(m.group(1).replace(".", ","), "%Y-%m-%d %H:%M:%S,%f").timestamp() if m else None


def processes(logs: Path, t0: float) -> list[tuple[str, int, float, float | None]]:
    """(name, pid, started, ready) of every Ray worker process of the session, by start."""
    rows = []
    for core in logs.glob("python-core-worker-*.log"):
        pid = int(core.stem.rsplit("_", 1)[1])
        outs = list(logs.glob(f"worker-*-{pid}.out"))
        head = outs[0].read_text(errors="replace")[:2000] if outs else ""
        name = re.search(r":(?:actor|task)_name:(\w+)", head)
        started = ready = None
        for line in core.read_text(errors="replace").splitlines():
            if started is None and "Constructing CoreWorkerProcess" in line:
                started = stamp(line)
            if ready is None and "Actor creation task finished" in line:
                ready = stamp(line)
        if started is not None:
            rows.append((name.group(1) if name else "(idle)", pid, started - t0, ready - t0 if ready else None))
    return sorted(rows, key=lambda r: r[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime", default="hf", choices=["hf", "vllm"])
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1], help="checkout whose recipe runs")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/startup"))
    args = ap.parse_args()
    task, mspec, cfg = load_specs(["config=toy_verbose"])
    model = ensure_model(
        Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"], shipped=RESOURCES / cfg["shipped"]
    )
    run = args.out.resolve() / f"{args.runtime}_{time.strftime('%Y%m%d_%H%M%S')}"
    d = cfg["data"]
    write_toy_data(run / "data", d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    ray_dir = Path(f"/tmp/bcr-startup-{os.getpid()}")  # short: Ray's socket paths must fit in 107 characters
    cmd = train_command(
        run / "data",
        model,
        run / "ckpt",
        run / "verl_metrics.jsonl",
        1,
        save_freq=10,
        extra=(
            f"bcr_runtime={args.runtime}",
            "trainer.val_before_train=false",
            "trainer.test_freq=-1",
            f"+ray_kwargs.ray_init._temp_dir={ray_dir}",
            *SIZES,
        ),
    )
    env = {**os.environ, "PYTHONPATH": str(args.tree.resolve())}
    t0 = time.time()
    with (run / "train.log").open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=run, env=env)
    end = time.time() - t0
    if proc.returncode != 0:
        sys.exit(f"the run failed; log: {run / 'train.log'}")
    text = (run / "train.log").read_text(errors="replace")
    lines = [f"{args.runtime}, recipe of {args.tree}, 1 step; seconds after launch (load {os.getloadavg()[0]:.1f})", ""]
    lines += ["| process | started | ready (actor created) |", "|---|---|---|"]
    for name, pid, started, ready in processes(ray_dir / "session_latest" / "logs", t0):
        lines.append(f"| {name} ({pid}) | {started:.1f} | {'-' if ready is None else f'{ready:.1f}'} |")
    for label, marker in MILESTONES.items():
        at = next((stamp(line) for line in text.splitlines() if marker in line), None)
        lines.append(f"| verl: {label} | {'-' if at is None else f'{at - t0:.1f}'} | |")
    lines.append(f"| run ends (step 1 done, shut down) | {end:.1f} | |")
    print("\n".join(lines))
    subprocess.run(["rm", "-rf", str(ray_dir)], check=False)


if __name__ == "__main__":
    main()
