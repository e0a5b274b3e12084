"""The third registration's pilots (hydra_configs/paper_v3.yaml `toy_pilot` and `steps`, issue 52), at seeds outside
every main seed, judged by rules fixed before them:

- the toy pilot: the never-binding baseline alone, trained to the steps rule's maximum and evaluated at N=1 on the
  held-out questions; the toy is accepted when every seed lies in `toy_pilot.accept`, else the registered next
  candidate is named (`above`: one gap more, `below`: one fewer) -> DIR/toy_pilot.json;
- the steps pilot: BCR and the baseline (the toy pilot's runs, reused) to `steps.max`; the main part's steps are the
  first multiple of `steps.every` at which every pilot run's `window_slope` of `steps.key` is below
  `steps.max_slope_pts` (`plateaued`), else `steps.max` -> DIR/steps_pilot.json.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper.rules import plateaued, window_slope
from recipe_bcr.miniature.stages import Run

GROUP = "pilot"  # run.json's group: the findings read none of these runs


def baseline_runs(cfg: dict[str, Any]) -> list[Run]:
    """The toy pilot's runs: the registered arm (the never-binding N=1 baseline) at each pilot seed."""
    tp = cfg["toy_pilot"]
    arm = cfg["controls"][tp["arm"]]
    return [
        Run(f"{tp['arm']}_s{s}", GROUP, int(arm["n"]), int(arm["budget"]), int(s), single=arm["prompt"] == "single")
        for s in tp["seeds"]
    ]


def steps_runs(cfg: dict[str, Any], budget: int) -> list[Run]:
    """The steps pilot's runs: BCR at B and the toy pilot's baseline runs, at the pilot seeds."""
    n = int(cfg["bcr"]["n"])
    bcr = [Run(f"bcr_n{n}_s{s}", GROUP, n, budget, int(s)) for s in cfg["steps"]["pilot_seeds"]]
    return bcr + [r for r in baseline_runs(cfg) if r.seed in cfg["steps"]["pilot_seeds"]]


def accuracy_n1(eval_dir: Path) -> float:
    """An evaluation's N=1 accuracy on the toy benchmark (its summary.json)."""
    rows = json.loads((eval_dir / "summary.json").read_text())
    found = [float(r["acc"]) for r in rows if int(r["n"]) == 1 and r["benchmark"] == "Toy"]
    if not found:
        raise ValueError(
            f"{eval_dir / 'summary.json'}: no N=1 row of the Toy benchmark; delete {eval_dir} to evaluate again"
        )
    return found[0]


def judge_toy(accs: dict[str, float], tp: dict[str, Any]) -> dict[str, Any]:
    """The toy pilot's rule: accepted when every seed's N=1 accuracy lies in `accept`; else the registered next
    candidate (`above` when any seed lies above the range, `below` otherwise)."""
    lo, hi = (float(x) for x in tp["accept"])
    inside = all(lo <= a <= hi for a in accs.values())
    decision = "accepted" if inside else tp["above"] if any(a > hi for a in accs.values()) else tp["below"]
    return {"accuracy_n1": accs, "mean": statistics.fmean(accs.values()), "accept": [lo, hi], "decision": decision}


def plateau_step(metrics: dict[str, list[dict[str, Any]]], st: dict[str, Any]) -> dict[str, Any]:
    """The steps rule over the pilot runs' per-step metrics: each checkpoint's slopes, and the chosen steps."""
    key, window, limit = st["key"], int(st["window"]), float(st["max_slope_pts"])
    checks = []
    for step in range(int(st["every"]), int(st["max"]) + 1, int(st["every"])):
        runs = {name: [m for m in rows if int(m["step"]) <= step] for name, rows in metrics.items()}
        slopes = {name: window_slope(rows, key, window) for name, rows in runs.items()}
        slopes = {name: None if v != v else v for name, v in slopes.items()}  # NaN: shorter than the window
        checks.append(
            {"step": step, "slopes_pts": slopes, "plateaued": plateaued(list(runs.values()), key, window, limit)}
        )
    chosen = next((c["step"] for c in checks if c["plateaued"]), int(st["max"]))
    return {"steps": chosen, "rule": dict(st), "checks": checks}


def write_json(path: Path, record: dict[str, Any]) -> None:
    """Strict JSON, written then renamed."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n")
    tmp.replace(path)


def read_steps(root: Path) -> int:
    """The main part's steps, as the steps pilot chose them (DIR/steps_pilot.json)."""
    path = Path(root) / "steps_pilot.json"
    if not path.exists():
        raise ValueError(
            f"{path}: no steps pilot in this folder; run `python -m recipe_bcr paper out={root} "
            "registration=paper_v3 part=steps_pilot` first (the main part's steps come from it)"
        )
    return int(json.loads(path.read_text())["steps"])


def accepted_toy(root: Path) -> dict[str, Any]:
    """DIR/toy_pilot.json when it accepted the toy; else the error that names what to run."""
    path = Path(root) / "toy_pilot.json"
    if not path.exists():
        raise ValueError(f"{path}: no toy pilot in this folder; run part=toy_pilot first (registration=paper_v3)")
    record = json.loads(path.read_text())
    if record["decision"] != "accepted":
        raise ValueError(
            f"{path}: the toy pilot did not accept {record['toy']} ({record['decision']}, N=1 accuracy "
            f"{record['accuracy_n1']} against {record['accept']}): the registered next candidate comes first"
        )
    return record
