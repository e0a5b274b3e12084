"""Replay-scoring throughput and memory of the evaluation harness.

Builds a synthetic saved run of about --completions N=3 completions from the real MATH-500
solutions (the 167 MATH-500 groups at N=3, k samples each; every problem answered with its
real solution's answer, or, with probability --wrong-rate, another problem's answer), with
token ids from the real Qwen3 tokenizer, then re-scores it through the real path, `python -m recipe_bcr.eval
engine=replay`, in a fresh process: extraction, verification, exact token attribution,
records appended to samples.jsonl, streamed summary, table and plots. Prints completions
per second (scoring only, from the run's own timing) and the process's peak memory, for
two run sizes, so flat memory shows as equal peaks.

    python benchmarks/bench_eval_scoring.py [--completions 10000] [--small 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from transformers import AutoTokenizer

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BCR_SHARED", REPO.parent / "shared"))


def build_saved_run(out: Path, k: int, seed: int, wrong_rate: float) -> int:
    from omegaconf import OmegaConf

    from recipe_bcr.data.eval_tasks import build_tasks

    sols = {}
    for line in (SHARED / "data/benchmarks/math500.jsonl").read_text().splitlines():
        row = json.loads(line)
        sols[row["problem"].strip()] = row["solution"]
    paper = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))
    tasks = build_tasks({"MATH-500": paper["MATH-500"]}, [3], seed=0)
    answers = [p.answers[0] for t in tasks for p in t.problems]
    tok = AutoTokenizer.from_pretrained(str(SHARED / "tokenizers/qwen3"))
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (out / "samples.jsonl").open("w") as f:
        for task in tasks:
            for j in range(k):
                parts = []
                for i, p in enumerate(task.problems, start=1):
                    answer = rng.choice(answers) if rng.random() < wrong_rate else p.answers[0]
                    body = re.sub(r"\\boxed\s*\{", "\\\\textbf{", sols[p.question])
                    parts.append(f"### Problem {i}\n{body}\nAnswer{i}: \\boxed{{{answer}}}\n")
                text = "\n".join(parts)
                ids = tok(text, add_special_tokens=False)["input_ids"]
                f.write(
                    json.dumps(
                        {
                            "prompt": task.messages,
                            "sample": j,
                            "completion": text,
                            "generated_tokens": len(ids),
                            "finish_reason": "stop",
                            "token_ids": ids,
                        }
                    )
                    + "\n"
                )
                count += 1
    return count


def replay(saved: Path, run_dir: Path, k: int) -> tuple[float, float, int]:
    cmd = [
        sys.executable,
        "-m",
        "recipe_bcr.eval",
        "bcr_model@model=tiny_qwen3",
        "engine=replay",
        f"engine_options.samples={saved}",
        "only=[MATH-500]",
        "n=[3]",
        f"sampling.k={k}",
        f"out={run_dir}",
        "progress=false",
    ]
    env = {**os.environ, "BCR_SHARED": str(SHARED)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    err = proc.stdout.read().decode() if proc.stdout else ""  # Hydra logs to stdout
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"replay failed:\n{err[-3000:]}")
    m = re.search(r"scoring: (\d+) samples in ([\d.]+) s", err)
    scored, seconds = (int(m.group(1)), float(m.group(2))) if m else (0, wall)
    return scored / seconds, usage.ru_maxrss / 1024, scored


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--completions", type=int, default=10_000, help="size of the large synthetic run")
    ap.add_argument("--small", type=int, default=2_000, help="size of the small run (memory comparison)")
    ap.add_argument("--workdir", default="/tmp/bcr_bench_eval", help="where runs are written")
    ap.add_argument("--seed", type=int, default=0, help="seed of the wrong answers")
    ap.add_argument("--wrong-rate", type=float, default=0.0, help="share of answers replaced by another problem's")
    ap.add_argument("--stress-wrong-rate", type=float, default=0.2, help="wrong-answer share of the extra stress run")
    args = ap.parse_args()
    work = Path(args.workdir)
    results = {}
    runs = [
        (args.small, args.wrong_rate),
        (args.completions, args.wrong_rate),
        (args.completions, args.stress_wrong_rate),
    ]
    for size, wrong in runs:
        k = max(1, round(size / 167))
        saved = work / f"saved_k{k}_w{wrong}"
        if not (saved / "samples.jsonl").exists():
            build_saved_run(saved, k, args.seed, wrong)
        run_dir = work / f"replay_k{k}_w{wrong}"
        if run_dir.exists():
            subprocess.run(["rm", "-rf", str(run_dir)], check=True)
        rate, peak_mib, scored = replay(saved, run_dir, k)
        results[(size, wrong)] = (rate, peak_mib)
        print(
            f"{scored:6d} completions (N=3, wrong-answer rate {wrong:.0%}): {rate:7.1f} completions/s scored, "
            f"peak RSS {peak_mib:6.0f} MiB"
        )
    (_, m1), (r2, m2) = results[runs[0]], results[runs[1]]
    print(
        f"target >= 1000 completions/s: {'OK' if r2 >= 1000 else 'MISSED'} ({r2:.0f}); "
        f"peak memory {m1:.0f} -> {m2:.0f} MiB for {args.completions / args.small:.0f}x the completions"
    )


if __name__ == "__main__":
    main()
