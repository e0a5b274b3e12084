"""Reward throughput and agreement against math-verify, plus worst-case latency.

Builds realistic N=3 completions from the real MATH-500 solutions, in three shapes:
  * as written: every problem answered with its own solution's answer;
  * distinct: each answer replaced, with probability 1/2, by one of two wrong answers taken
    from other problems (written into both the solution's box and the "Answer i:" line),
    one completion per group, so every (gold, answer) pair is new (the worst case);
  * GRPO: the same mix with 4 rollouts per group, as in training, so rollouts share golds
    and often answers;
then scores every completion
  (a) with our reward (reward_fns.bcr.compute_score), and
  (b) with math-verify applied to each "### Problem i" segment (what verl's own
      math_verify reward does per response), in-process, using its signal timeouts,
and prints completions per second, the ratio, agreement with the known labels, and the
worst latency of our reward on pathological inputs.

    python benchmarks/bench_reward.py [--groups 166] [--timeout 2.0]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from math_verify import parse, verify

from recipe_bcr.normalize import canonical
from recipe_bcr.verify import configure_default, default_verifier
from reward_fns.bcr import compute_score

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
BOX = re.compile(r"\\boxed\s*\{")

PATHOLOGICAL = {
    "1 MB of nested braces": "\\boxed{" + "{" * 500_000 + "}" * 499_999,
    "power towers": "".join(f"Answer{i}: \\boxed{{10^{{10^{{10^{{10}}}}}}}} " for i in (1, 2, 3)),
    "huge factorial and sum": "Answer1: \\boxed{(10^{100})!} Answer2: \\boxed{\\sum_{k=1}^{10^{12}} k^k} Answer3: \\boxed{x^{10^{100}}-1}",
    "division by zero": "Answer1: \\boxed{\\frac{1}{0}} Answer2: \\boxed{0^0} Answer3: \\boxed{\\infty-\\infty}",
    "10,000 boxes": "\\boxed{1}" * 10_000,
    "10,000 unclosed boxes": "\\boxed{" * 10_000,
    "non-ASCII junk": "\x00\udcff日本語🙂" * 20_000,
    "empty": "",
}


def replace_last_box(solution: str, answer: str) -> str:
    starts = [m.end() for m in BOX.finditer(solution)]
    if not starts:
        return solution + f" \\boxed{{{answer}}}"
    start, depth, i = starts[-1], 1, starts[-1]
    while i < len(solution) and depth:
        depth += {"{": 1, "}": -1}.get(solution[i], 0)
        i += 1
    return solution[:start] + answer + "}" + solution[i:]


def build(groups: int, rollouts: int, seed: int, wrong_rate: float = 0.5) -> list[tuple[str, list[str], list[bool]]]:
    rows = [json.loads(x) for x in (SHARED / "data/benchmarks/math500.jsonl").read_text().splitlines() if x.strip()]
    rng = random.Random(seed)
    rng.shuffle(rows)
    out = []
    for g in range(groups):
        members = rows[3 * g : 3 * g + 3]
        if len(members) < 3:
            break
        wrong = [
            [a for a in (rng.choice(rows)["answer"] for _ in range(2)) if canonical(a) != canonical(r["answer"])]
            for r in members
        ]
        for _ in range(rollouts):
            parts, golds, labels = [], [], []
            for i, (row, wrongs) in enumerate(zip(members, wrong), start=1):
                correct = rng.random() >= wrong_rate or not wrongs
                answer = row["answer"] if correct else rng.choice(wrongs)
                body = replace_last_box(row["solution"], answer)
                parts.append(f"### Problem {i}\n{body}\nAnswer{i}: \\boxed{{{answer}}}\n")
                golds.append(row["answer"])
                labels.append(correct)
            out.append(("\n".join(parts), golds, labels))
    return out


def math_verify_segments(completion: str, golds: list[str]) -> list[bool]:
    segments = re.split(r"### Problem \d+", completion)[1:]
    results = []
    for seg, gold in zip(segments, golds):
        g = parse(f"\\boxed{{{gold}}}")
        p = parse(seg)
        results.append(bool(g and p and verify(g, p)))
    return results


def run_scenario(name: str, data: list[tuple[str, list[str], list[bool]]], timeout: float) -> None:
    from math_verify.parser import parse_latex_cached

    from recipe_bcr.reward import score_completion

    verifier = default_verifier()
    verifier.clear_cache()
    parse_latex_cached.cache_clear()
    labels = [lab for _, _, labs in data for lab in labs]

    t0 = time.perf_counter()
    ours = [score_completion(text, golds, verifier) for text, golds, _ in data]
    t_ours = time.perf_counter() - t0
    ours_pp = [c for scored in ours for c in scored.correct]

    t0 = time.perf_counter()
    mv_pp = [c for text, golds, _ in data for c in math_verify_segments(text, golds)]
    t_mv = time.perf_counter() - t0

    n = len(data)
    agree = lambda pred: sum(p == lab for p, lab in zip(pred, labels)) / len(labels)  # noqa: E731
    false_credit = lambda pred: sum(p and not lab for p, lab in zip(pred, labels))  # noqa: E731
    print(f"[{name}] {n} completions (N=3, {len(labels)} problems, {sum(labels)} answered correctly)")
    print(f"  ours:        {n / t_ours:8.1f} completions/s  agreement {agree(ours_pp):.4f}  false credit {false_credit(ours_pp)}")
    print(f"  math-verify: {n / t_mv:8.1f} completions/s  agreement {agree(mv_pp):.4f}  false credit {false_credit(mv_pp)}")
    print(f"  throughput ratio (ours / math-verify): {t_mv / t_ours:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=166, help="groups of 3 MATH-500 problems (166 uses 498)")
    ap.add_argument("--rollouts", type=int, default=4, help="rollouts per group in the GRPO-shaped scenario")
    ap.add_argument("--timeout", type=float, default=2.0, help="our per-completion verification time limit (s)")
    ap.add_argument("--seed", type=int, default=0, help="seed for problem order and wrong answers")
    args = ap.parse_args()

    configure_default(args.timeout, 2).check("x+1", "1+x")  # start the worker pool outside the timing
    verify(parse("$1$"), parse("$1$"))
    run_scenario("as written", build(args.groups, 1, args.seed, wrong_rate=0.0), args.timeout)
    run_scenario("distinct, 50% wrong", build(args.groups, 1, args.seed), args.timeout)
    run_scenario(f"GRPO x{args.rollouts}, 50% wrong", build(args.groups, args.rollouts, args.seed), args.timeout)

    worst = 0.0
    for name, text in PATHOLOGICAL.items():
        t0 = time.perf_counter()
        out = compute_score("bench", text, ["5", "7", "9"], {"n": 3}, timeout_s=args.timeout)
        dt = time.perf_counter() - t0
        worst = max(worst, dt)
        print(f"  pathological {name!r:28} {dt:6.3f} s  score {out['score']}")
    verdict = "OK" if worst <= 2 * args.timeout else "TOO SLOW"
    print(f"worst-case latency: {worst:.3f} s (limit {args.timeout} s, target <= {2 * args.timeout} s: {verdict})")


if __name__ == "__main__":
    main()
