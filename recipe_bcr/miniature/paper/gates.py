"""`python -m recipe_bcr.miniature.paper.gates DIR [--steps S]`: the dynamics gates (hydra_configs/paper.yaml `gates`)
of a paper output folder's BCR runs, read from each run's per-step metrics.jsonl, and their trajectories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper.rules import _mean, gates


def _metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_gates(root: Path, steps: int | None = None) -> list[dict[str, Any]]:
    """The second miniature's dynamics gates (hydra_configs/paper.yaml `gates`, `gates` above) of every
    BCR run in a paper output folder (runs/<name>/run.json with group "main" and a group prompt), from its per-step
    metrics.jsonl: [{"run", "n", "steps", "gates"}]. `steps`: judge each run on its first `steps` steps only, as a
    pilot's steps rule reads it (a run shorter than that is an error, not a shorter judgement)."""
    from recipe_bcr.miniature.toy.preconditions import load_preregistration

    g = load_preregistration()["gates"]
    out = []
    for run, rows in _bcr_runs(root):
        if steps is not None:
            if len(rows) < steps:
                raise ValueError(f"{root}: {run['name']} has {len(rows)} steps, fewer than --steps {steps}")
            rows = rows[:steps]
        out.append({"run": run["name"], "n": run["n"], "steps": len(rows), "gates": gates(rows, int(run["n"]), g)})
    return out


def _bcr_runs(root: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(run.json, per-step metrics) of every BCR run in a paper output folder (group "main", a group prompt)."""
    out = []
    for meta in sorted(Path(root).glob("runs/*/run.json")):
        run = json.loads(meta.read_text())
        if run.get("group") == "main" and not run.get("single"):
            out.append((run, _metrics(meta.parent)))
    if not out:
        raise ValueError(f"{root}: no BCR run (runs/*/run.json with group main) to read gates from")
    return out


TRAJECTORY_KEYS = (
    "bcr/fmt",
    "bcr/truncation_rate",
    "bcr/response_tokens",
    "bcr/tokens_per_problem",
    "critic/score/mean",
)


def trajectory_table(root: Path, window: int) -> str:
    """Each BCR run's per-step metrics averaged over its first, middle and last `window` steps: format, truncation,
    accuracy per position, completion tokens, tokens per problem, reward (what the gates summarise, in full)."""
    lines = [
        "| run | steps | " + " | ".join(["metric", "first", "middle", "last"]) + " |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for run, rows in _bcr_runs(root):
        mid = max(0, len(rows) // 2 - window // 2)
        keys = [*TRAJECTORY_KEYS[:2], *(f"bcr/acc_pos{k}" for k in range(1, int(run["n"]) + 1)), *TRAJECTORY_KEYS[2:]]
        for key in keys:
            vals = [
                _mean([r[key] for r in part if key in r])
                for part in (rows[:window], rows[mid : mid + window], rows[-window:])
            ]
            lines.append(f"| {run['name']} | {len(rows)} | {key} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
    return "\n".join(lines)


def gates_table(results: Sequence[dict[str, Any]], rule: dict[str, Any] | None = None) -> str:
    """The gates per BCR run; `rule`: the registration's `gates`, whose windows the header names (default:
    paper.yaml's, 10 steps)."""
    w = int(rule["window"]) if rule else 10
    first = int(rule.get("truncation_first_steps", w)) if rule else w
    start = "step 1" if first == 1 else f"first {first}"
    lines = [
        f"| run | steps | truncation {start} -> last {w} | max 5-step format (step reached 0.90) | "
        f"acc last position / first (last {w}) | Kendall tau of reward | gates met |",
        "|---|---:|---|---|---|---:|---|",
    ]
    for r in results:
        g, n = r["gates"], r["n"]
        missed = [k for k, v in g.items() if k != "all_met" and not v["met"]]
        lp = g["last_position"]
        lines.append(
            f"| {r['run']} | {r['steps']} | {g['truncation']['first']:.3f} -> {g['truncation']['last']:.3f} | "
            f"{g['format']['max_5_step_mean']:.3f} ({g['format']['step_reached'] or 'never'}) | "
            f"{lp[f'acc_pos{n}']:.3f} / {lp['acc_pos1']:.3f} | {g['reward_trend']['kendall_tau']:.2f} | "
            f"{'all' if g['all_met'] else 'no: ' + ', '.join(missed)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m recipe_bcr.miniature.paper.gates --gates DIR [--steps S]`: the dynamics gates of a paper output
    folder's BCR runs (on their first S steps: a pilot's steps rule)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m recipe_bcr.miniature.paper.gates")
    ap.add_argument("--gates", required=True, metavar="DIR", help="a paper output folder (e.g. benchmarks/paper)")
    ap.add_argument("--steps", type=int, metavar="S", help="judge each run on its first S steps only")
    args = ap.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        ap.error(f"--steps {args.steps}: judge at least one step (e.g. --steps 60)")
    try:
        print(gates_table(run_gates(Path(args.gates), args.steps)))
        if args.steps is None:  # the trajectories read whole runs
            from recipe_bcr.miniature.toy.preconditions import load_preregistration

            window = int(load_preregistration()["gates"]["window"])
            trajectories = trajectory_table(Path(args.gates), window)
            print(f"\nmeans over the first, middle and last {window} steps:\n" + trajectories)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
