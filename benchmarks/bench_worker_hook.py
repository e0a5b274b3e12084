"""CPU seconds the Ray setup hook costs a verl worker process, side by side in one run.

Every process of a GRPO launch (TaskRunner, TransferQueue controller and storage, reward worker, load
balancer, agent loop, training worker, vLLM server, idle workers) runs the recipe's
`worker_process_setup_hook`. This starts fresh Python processes, interleaved, and reports their CPU
seconds (user + system) for: Ray alone (the floor); the hook as it runs now (registrations deferred to
the import of the verl module each patches, recipe_bcr/verl_ext/after_import.py); and the hook followed by
the imports that trigger every registration, which is what the hook cost every process before the
deferral and still costs one that needs them all.

    python benchmarks/bench_worker_hook.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys

VARIANTS = {
    "ray alone": "import ray",
    "hook (deferred registrations)": "import ray\nfrom recipe_bcr.verl_ext.plugin import worker_setup\nworker_setup()",
    "hook + every registration": (
        "import ray\nfrom recipe_bcr.verl_ext.plugin import worker_setup\nworker_setup()\n"
        "import verl.plugin.platform, verl.workers.rollout.base, verl.workers.rollout.replica, verl.trainer.ppo.v1\n"
        "from verl.trainer.ppo.v1 import get_trainer_cls\nassert get_trainer_cls('sync').__name__ == 'BCRTrainer'"
    ),
}


def cpu_seconds(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:  # e.g. verl missing or a registration that no longer applies: say which and why
        sys.exit(
            f"bench_worker_hook: this variant failed (exit {proc.returncode}):\n{code}\n{proc.stderr[-3000:]}\n"
            "Run it inside the project's environment (`bash .ci/setup`, then `.venv/bin/python benchmarks/bench_worker_hook.py`)."
        )
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.rounds):
        for name, code in VARIANTS.items():
            runs[name].append(cpu_seconds(code))
    for name, secs in runs.items():
        print(f"{name:32s} median {statistics.median(secs):5.2f} s CPU  ({', '.join(f'{s:.2f}' for s in secs)})")


if __name__ == "__main__":
    main()
