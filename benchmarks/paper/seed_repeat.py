"""Whether a run of the paper command repeats itself: one run of a paper folder trained twice at once from scratch
(the same command, seed, data and base model), every per-step metric of the two compared.

Two runs at once is the hard case for timing: verl sends each rollout to the rollout server as its own request, so
which rows share a server batch, and in what order rows reach the trainer, differ between the two. The run repeats
when every step's metrics are equal (all but the rollout's own float noise, ROLLOUT_NOISE); the output says, per
metric, at which step the two first differ and by how much at most (relative), and at which step the sampled
completions first differ (`response_length/mean`, `bcr/acc`).

    python benchmarks/paper/seed_repeat.py --paper DIR [--run bcr_n3_s0] [--steps 100] --out OUT [--extra KEY=VALUE ...]

DIR is a folder `python -m recipe_bcr paper out=DIR` made (its base_preconditions.json gives the budget, its data/
the training data); OUT gets a/ and b/ (each a paper folder's runs/<run>/) and repeat.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import subprocess
import time
from functools import partial
from pathlib import Path

from recipe_bcr.miniature.paper.command import load_config, plan_arms
from recipe_bcr.miniature.stages import at_once, train_run
from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs

UNTIMED = ("timing_s/", "timing_per_token_ms/", "perf/", "actor/perf/")
# the rollout's last bits against the update's own log-probs: they vary with how the rollout's requests were
# batched (timing), and no longer reach the update (bcr.anchor_on_actor); compared, but not held to equality
ROLLOUT_NOISE = ("actor/rollout_logprob_gap_max",)
SAMPLES = ("response_length/mean", "bcr/acc")  # differ as soon as one sampled token does


def rel_diff(a: float, b: float) -> float:
    return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))


def compare(a: list[dict], b: list[dict]) -> dict:
    """Per metric (timings left out): the first step at which the runs differ and the largest relative difference."""
    keys = sorted(k for k in a[0] if k != "step" and not k.startswith(UNTIMED) and isinstance(a[0][k], (int, float)))
    first: dict[str, int | None] = {}
    largest: dict[str, float] = {}
    for k in keys:
        diffs = [(ra["step"], rel_diff(ra[k], rb[k])) for ra, rb in zip(a, b, strict=True)]
        first[k] = next((s for s, d in diffs if d > 0), None)
        largest[k] = max(d for _, d in diffs)
    held = [k for k in keys if k not in ROLLOUT_NOISE]
    equal = [s for s in range(len(a)) if all(a[s][k] == b[s][k] for k in held)]
    return {
        "steps": len(a),
        "steps_all_equal": len(equal),
        "first_step_samples_differ": min((first[k] for k in SAMPLES if first[k] is not None), default=None),
        "first_step_any_differs": min((first[k] for k in held if first[k] is not None), default=None),
        "first_difference": first,
        "max_rel_difference": largest,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", type=Path, required=True, help="a folder `python -m recipe_bcr paper` made")
    ap.add_argument("--run", default="bcr_n3_s0")
    ap.add_argument("--steps", type=int, default=None, help="default: the registered train_steps")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--extra", nargs="*", default=[], help="main_ppo overrides added to the run's, e.g. to test a setting"
    )
    args = ap.parse_args()
    paper = args.paper.resolve()
    pre_file = paper / "base_preconditions.json"
    if not pre_file.exists():
        raise SystemExit(f"error: {pre_file} is missing: run `python -m recipe_bcr paper out={args.paper}` first")
    cfg = load_config([])
    budget = int(json.loads(pre_file.read_text())["details"]["budget_n3"])
    runs = {r.name: r for r in plan_arms(cfg, budget)}
    if args.run not in runs:
        raise SystemExit(f"error: --run {args.run}: the plan's runs are {', '.join(runs)}")
    run = dataclasses.replace(runs[args.run], extra=(*runs[args.run].extra, *args.extra))
    data = paper / "data" / (f"single_n{run.n}" if run.single else f"group_n{run.n}")
    if not data.exists():
        raise SystemExit(f"error: {data} is missing: {paper} was not made by a paper run that trained {run.name}")
    steps = args.steps or int(cfg["train_steps"])
    task, mspec, toy = load_specs([f"config={cfg['toy']}"])
    model = ensure_model(
        Path(toy["cache_dir"]), task, mspec, model_dir=toy["model_dir"], shipped=RESOURCES / toy["shipped"]
    )
    out = args.out.resolve()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    launched = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.time()
    at_once(2, [(side, partial(train_run, run, out / side, model, data, cfg, steps)) for side in ("a", "b")], t0)
    rows = {
        side: [json.loads(x) for x in (out / side / "runs" / run.name / "metrics.jsonl").read_text().splitlines() if x]
        for side in ("a", "b")
    }
    result = {
        "run": run.name,
        "extra": args.extra,
        "commit": commit,
        "launched_at": launched,
        "wall_seconds": round(time.time() - t0),
        **compare(rows["a"], rows["b"]),
    }
    (out / "repeat.json").write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{run.name}, {steps} steps twice at once: all metrics equal at {result['steps_all_equal']} of "
        f"{result['steps']} steps; samples first differ at step {result['first_step_samples_differ']}, any metric at "
        f"step {result['first_step_any_differs']} -> {out / 'repeat.json'}"
    )
    worst = sorted(result["max_rel_difference"].items(), key=lambda kv: -kv[1])[:8]
    for k, d in worst:
        print(f"  {k}: first differs at step {result['first_difference'][k]}, max relative difference {d:.2e}")


if __name__ == "__main__":
    main()
