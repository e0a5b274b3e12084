"""Whether the main part run again from a fresh clone reproduces the committed one (benchmarks/paper/): the base
measurement, every run's per-step metrics (timings left out, as in seed_repeat.py), every evaluation's samples and
summary, and findings.json (all but when, where and how long: EPHEMERAL), with both launch times and wall times, and
the dynamics gates of both side by side (the format gate as the step format reached 0.90).

    python benchmarks/paper/fresh_clone_check.py --fresh DIR --committed COMMITTED --out OUT.json

DIR is the folder `python -m recipe_bcr paper out=DIR` made in the fresh clone; it is read, never written.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path

from seed_repeat import compare

from recipe_bcr.eval.runner import samples_path

# when and where the command ran and how long it took: what two runs of it cannot share
EPHEMERAL = ("launched_at", "made_by", "seconds")


def samples_sha256(eval_dir: Path) -> str:
    """The sha256 of an evaluation's samples as written (a compressed kept copy is hashed uncompressed)."""
    path = samples_path(eval_dir)
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def read_json(path: Path) -> dict:
    if not path.exists():
        raise SystemExit(f"error: {path} is missing: is {path.parent} a folder `python -m recipe_bcr paper` made?")
    return json.loads(path.read_text())


def without_ephemeral(d: object) -> object:
    if isinstance(d, dict):
        return {k: without_ephemeral(v) for k, v in d.items() if k not in EPHEMERAL}
    return [without_ephemeral(v) for v in d] if isinstance(d, list) else d


def gate_summary(run: dict) -> dict:
    """A BCR run's gates in one line: the step its format reached 0.90, and each gate met or not."""
    gates = run["gates"]
    return {"format_step": gates["format"]["step_reached"]} | {
        k: v["met"] if isinstance(v, dict) else v for k, v in gates.items()
    }


def metric_rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def main_part(committed: Path) -> tuple[list[str], list[str]]:
    """The committed main part's runs (BCR and the controls; an ablation run committed beside them is not the main
    command's) and its evaluations (the base's and those runs')."""
    runs = [
        d.name
        for d in sorted((committed / "runs").iterdir())
        if read_json(d / "run.json")["group"] in ("main", "control")
    ]
    evals = [d.name for d in sorted((committed / "eval").iterdir()) if d.is_dir() and d.name in {"base", *runs}]
    return runs, evals


def needed(committed: Path) -> list[str]:
    """Every file the comparison reads, relative to a paper folder: the committed main part's runs and evaluations."""
    runs, evals = main_part(committed)
    files = ["findings.json", "base_preconditions.json", "wall_seconds.json"]
    files += [f"runs/{r}/{f}" for r in runs for f in ("run.json", "metrics.jsonl")]
    files += [f"eval/{e}/summary.json" for e in evals]
    return files


def check(committed: Path, fresh: Path) -> dict:
    """Per part of the output: equal or not, and for run metrics where they first differ."""
    if not (committed / "runs").is_dir() or not (committed / "eval").is_dir():
        raise SystemExit(f"error: {committed} has no runs/ or eval/: --committed must be a main part's folder")
    missing = [f"{root / f}" for root in (committed, fresh) for f in needed(committed) if not (root / f).exists()]
    missing += [
        f"{p}"
        for root in (committed, fresh)
        for e in main_part(committed)[1]
        if not (p := samples_path(root / "eval" / e)).exists()
    ]
    if missing:
        raise SystemExit(
            f"error: {len(missing)} file(s) missing, e.g. {missing[0]}: both folders must be complete main parts "
            "(`python -m recipe_bcr paper out=DIR` resumes an unfinished one)"
        )
    found_c, found_f = read_json(committed / "findings.json"), read_json(fresh / "findings.json")
    if [g["run"] for g in found_c["gates"]] != [g["run"] for g in found_f["gates"]]:
        raise SystemExit(f"error: {committed} and {fresh} gate different BCR runs: not the same registration")
    run_names, eval_names = main_part(committed)
    runs = {}
    for name in run_names:
        run_dir, other = committed / "runs" / name, fresh / "runs" / name
        same = compare(metric_rows(run_dir / "metrics.jsonl"), metric_rows(other / "metrics.jsonl"))
        runs[name] = {
            "run_json_equal": without_ephemeral(read_json(run_dir / "run.json"))
            == without_ephemeral(read_json(other / "run.json")),
            **{k: same[k] for k in ("steps", "steps_all_equal", "first_step_any_differs", "first_step_samples_differ")},
        }
    evals = {}
    for name in eval_names:
        a, b = committed / "eval" / name, fresh / "eval" / name
        evals[name] = {
            "samples_sha256": samples_sha256(a),
            "samples_equal": samples_sha256(a) == samples_sha256(b),
            "summary_equal": read_json(a / "summary.json") == read_json(b / "summary.json"),
        }
    pre_equal = without_ephemeral(read_json(committed / "base_preconditions.json")) == without_ephemeral(
        read_json(fresh / "base_preconditions.json")
    )
    findings_equal = without_ephemeral(found_c) == without_ephemeral(found_f)
    reproduced = (
        pre_equal
        and findings_equal
        and all(r["run_json_equal"] and r["steps_all_equal"] == r["steps"] for r in runs.values())
        and all(e["samples_equal"] and e["summary_equal"] for e in evals.values())
    )
    return {
        "registration": [found_c["registration"], found_f["registration"]],
        "launched_at": [found_c["launched_at"], found_f["launched_at"]],
        "wall_seconds": [
            read_json(committed / "wall_seconds.json")["main"][0],
            read_json(fresh / "wall_seconds.json")["main"][0],
        ],
        "reproduced": reproduced,
        "gates": {a["run"]: [gate_summary(a), gate_summary(b)] for a, b in zip(found_c["gates"], found_f["gates"])},
        "verdicts": {
            k: [found_c["findings"][k]["verdict"], found_f["findings"][k]["verdict"]] for k in found_c["findings"]
        },
        "base_preconditions_equal": pre_equal,
        "findings_equal_but_ephemeral": findings_equal,
        "runs": runs,
        "evaluations": evals,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fresh", type=Path, required=True, help="the paper folder the fresh clone's command made")
    ap.add_argument("--committed", type=Path, required=True, help="the committed main part's folder, with runs/, eval/")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    result = check(args.committed.resolve(), args.fresh.resolve())
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.rename(args.out)
    differ = [n for n, r in result["runs"].items() if r["steps_all_equal"] != r["steps"]]
    print(
        f"reproduced: {result['reproduced']} (runs differing: {differ or 'none'}; evaluations differing: "
        f"{[n for n, e in result['evaluations'].items() if not e['samples_equal']] or 'none'}); wall "
        f"{result['wall_seconds'][0]:.0f} s then {result['wall_seconds'][1]:.0f} s -> {args.out}"
    )


if __name__ == "__main__":
    main()
