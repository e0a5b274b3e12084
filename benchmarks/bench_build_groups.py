"""Time build_groups on a DeepMath-sized input: 103,110 rows, three ~15k-character R1 solutions each.

Generates (once, cached in --workdir) a parquet in DeepMath-103K's exact layout from the real
problems of the bundled stand-in, with R1 solutions stitched from real MATH-500 solutions to
about --chars characters each. Then runs `python data_prep/build_groups.py n=[3,4,5]` in a
fresh process for each difficulty source (column; r1_length in characters, read as a local file and
through the Hub id from an offline Hugging Face cache holding the same file) and prints the
wall time, the peak resident memory of that process, and per N the spread of group-mean difficulty
against a random grouping of the same problems next to the floor that this data allows (the step of
coarse scores, the one-problem-per-stratum design; see recipe_bcr/data/grouping.py).

    python benchmarks/bench_build_groups.py [--rows 103110] [--chars 15000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def generate(path: Path, rows: int, chars: int, seed: int) -> None:
    from recipe_bcr.data.sources import sample_path

    rng = np.random.default_rng(seed)
    base = pq.read_table(sample_path()).to_pandas()
    sols = [json.loads(x)["solution"] for x in (SHARED / "data/benchmarks/math500.jsonl").read_text().splitlines() if x]
    corpus = "\n\n".join(sols)
    tmp = path.with_suffix(".tmp")
    writer = None
    batch = 2000
    for start in range(0, rows, batch):
        m = min(batch, rows - start)
        pick = rng.integers(0, len(base), m)
        cols = {
            # suffix keeps questions distinct, as DeepMath's 103k questions are
            "question": [f"{base['question'].iat[i]} (variant {start + j})" for j, i in enumerate(pick)],
            "final_answer": base["final_answer"].to_numpy()[pick].tolist(),
            "difficulty": rng.choice(np.arange(1.0, 10.0, 0.5), m).tolist(),
            "topic": base["topic"].to_numpy()[pick].tolist(),
        }
        for k in (1, 2, 3):
            lengths = rng.integers(int(chars * 0.5), int(chars * 1.5), m)
            offsets = rng.integers(0, len(corpus) - int(chars * 1.5), m)
            cols[f"r1_solution_{k}"] = [corpus[o : o + n] for o, n in zip(offsets, lengths)]
        table = pa.table(cols)
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    writer.close()
    os.replace(tmp, path)


def hub_cache(work: Path, data: Path) -> Path:
    """An offline Hugging Face cache holding `data` as zwhe99/DeepMath-103K, so the Hub-id path is measured too."""
    repo = work / "hub" / "datasets--zwhe99--DeepMath-103K"
    shard = repo / "snapshots" / "bench" / "data" / "train-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True, exist_ok=True)
    if not shard.exists():
        shard.symlink_to(data)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text("bench")
    return repo.parent


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code:
        print(err[-3000:], file=sys.stderr)
    return wall, usage.ru_maxrss / 1024 / 1024, code  # ru_maxrss is KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=103_110, help="rows to generate (DeepMath-103K has 103,110)")
    ap.add_argument("--chars", type=int, default=15_000, help="mean characters per R1 solution")
    ap.add_argument("--workdir", default="/tmp/bcr_bench_build_groups", help="where the input and outputs go")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    args = ap.parse_args()

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"deepmath_like_{args.rows}_{args.chars}.parquet"
    if not data.exists():
        t0 = time.perf_counter()
        generate(data, args.rows, args.chars, args.seed)
        print(f"generated {data} ({data.stat().st_size / 2**30:.2f} GiB on disk) in {time.perf_counter() - t0:.0f} s")
    print(
        f"input: {args.rows} rows, R1 solutions ~{args.chars} chars x 3 ({data.stat().st_size / 2**30:.2f} GiB parquet)"
    )
    offline_hub = {"HF_HUB_CACHE": str(hub_cache(work, data)), "HF_HUB_OFFLINE": "1"}
    cases = [
        ("column", "local file", str(data), None),
        ("r1_length", "local file", str(data), None),
        ("r1_length", "Hub id, offline cache", "zwhe99/DeepMath-103K", offline_hub),
    ]
    for method, label, source, env in cases:
        out = work / f"out_{method}_{'hub' if env else 'local'}"
        cmd = [
            sys.executable,
            "data_prep/build_groups.py",
            f"source={source}",
            f"out={out}",
            "n=[3,4,5]",
            f"difficulty.method={method}",
            "progress=false",
        ]
        wall, peak_gib, code = run(cmd, env)
        if code:
            print(f"difficulty={method} ({label}): FAILED (exit {code})")
            continue
        manifest = json.loads((out / "manifest.json").read_text())
        verdict = "OK" if wall < 60 and peak_gib < 4 else "MISSED"
        print(
            f"difficulty={method:10s} ({label}) n=[3,4,5]: wall {wall:5.1f} s, peak RSS {peak_gib:.2f} GiB "
            f"(target < 60 s, < 4 GiB: {verdict})"
        )
        for n, v in manifest["per_n"].items():
            q = v["quality"]
            print(
                f"    n={n}: group-mean std / random {q['spread_ratio']:.4f}, floor {q['floor_ratio']:.4f} "
                f"(value step {q['granularity']:g})"
            )


if __name__ == "__main__":
    main()
