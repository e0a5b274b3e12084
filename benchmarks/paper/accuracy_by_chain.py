"""Where each arm's N=1 accuracy is lost: long chains (at least paper.yaml's `preconditions.long_chain_ops`
operations, the problems whose slips a re-check repairs) against short ones, pooled over seeds (F3 holds the re-check
tokens on those chains). Not a registered finding: it reads the evaluation samples a paper folder holds
(`eval/<run>/samples.jsonl`, the same records F1 and F3 read) and writes nothing.

    python benchmarks/paper/accuracy_by_chain.py [--paper benchmarks/paper]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from recipe_bcr.eval.runner import samples_path
from recipe_bcr.miniature.paper.findings import ARMS, arm_of, ops_of, read_runs, records
from recipe_bcr.miniature.toy.preconditions import load_preregistration


def tally(root: Path, labels: list[str], long_ops: int) -> dict[str, list[float]]:
    """Per chain kind ("long", "short"): the 0/1 correctness of every scored N=1 problem of the labels' evaluations."""
    out: dict[str, list[float]] = {"long": [], "short": []}
    for label in labels:
        for rec in records(root, label, 1):
            p = rec["problems"][0]
            if p["scored"]:
                out["long" if ops_of(rec) >= long_ops else "short"].append(float(bool(p["correct"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", type=Path, default=Path(__file__).resolve().parent, help="a main part's folder")
    args = ap.parse_args()
    long_ops = int(load_preregistration()["preconditions"]["long_chain_ops"])
    groups: dict[str, list[str]] = {"base": ["base"]}
    for run in read_runs(args.paper) if (args.paper / "runs").is_dir() else []:
        if arm_of(run) in ARMS:
            groups.setdefault(arm_of(run), []).append(run["name"])
    missing = [samples_path(args.paper / "eval" / x) for g in groups.values() for x in g]
    missing = [m for m in missing if not m.exists()]
    if missing:
        raise SystemExit(
            f"error: {missing[0]} is missing ({len(missing)} evaluation(s) without samples): --paper names a main "
            "part's folder that `python -m recipe_bcr paper out=DIR` finished, with its samples (e.g. benchmarks/paper; "
            "the committed reruns keep summaries only)"
        )
    print(f"{args.paper}: N=1 accuracy on chains of >= {long_ops} operations and shorter, seeds pooled\n")
    print("| arm | runs | acc long (%) | problems | acc short (%) | problems |")
    print("|---|---:|---:|---:|---:|---:|")
    for arm in ("base", *ARMS):
        if arm not in groups:
            continue
        t = tally(args.paper, groups[arm], long_ops)
        pct = {k: 100 * sum(t[k]) / len(t[k]) if t[k] else float("nan") for k in ("long", "short")}
        print(
            f"| {arm} | {len(groups[arm])} | {pct['long']:.1f} | {len(t['long'])} | {pct['short']:.1f} | {len(t['short'])} |"
        )


if __name__ == "__main__":
    main()
