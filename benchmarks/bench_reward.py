"""Reward throughput and agreement against math-verify, plus worst-case latency.

Builds realistic N=3 completions from the real MATH-500 solutions, in three shapes:
  * as written: every problem answered with its own solution's answer;
  * distinct: each answer replaced, with probability 1/2, by one of two wrong answers taken
    from other problems (written into both the solution's box and the "Answer i:" line),
    one completion per group, so every (gold, answer) pair is new (the worst case);
  * GRPO: the same mix with 4 rollouts per group, as in training, so rollouts share golds
    and often answers;
then scores every completion twice, each time from freshly started symbolic workers:
  * serial, one completion at a time: our reward (recipe_bcr.grading.reward.score_completion, the
    core of reward_fns.bcr.compute_score) against math-verify applied in-process to each
    "### Problem i" segment with its signal timeouts;
  * concurrent, as verl 0.9.1's reward loop calls a reward function (asyncio.gather over a
    thread pool, --threads at once): our reward against verl's own math_verify reward
    (verl.utils.reward_score.math_verify, a 4-process pool) applied to each segment;
and prints completions per second, the ratio, agreement with the known labels, and the
worst latency of our reward on pathological inputs. Then the mixed-load scenario: honest
answers written so that only the symbolic check can accept them (`\\frac{k\\sqrt{2}}{\\sqrt{2}}` for an
integer k, and the like: an irrational spelling the in-process reading refutes or confirms only
symbolically), with a few percent of answers that run to the time limit (power towers of square
roots), scored with --threads concurrent calls; it prints how many honest answers that score
in isolation lost their credit under load (target 0) and the latency percentiles.

    python benchmarks/bench_reward.py [--groups 166] [--timeout 2.0] [--threads 8] [--only mixed]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from math_verify import parse, verify
from verl.utils.reward_score import math_verify as verl_math_verify

from recipe_bcr.grading.answers.gate import read_answer, tree_verdict
from recipe_bcr.grading.answers.value import exact
from recipe_bcr.grading.reward import score_completion
from recipe_bcr.grading.verify import Verifier, configure_default
from reward_fns.bcr import compute_score

SHARED = Path(os.environ.get("BCR_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
BOX = re.compile(r"\\boxed\s*\{")

PATHOLOGICAL = {
    "1 MB of nested braces": "\\boxed{" + "{" * 500_000 + "}" * 499_999,
    "power towers": "".join(f"Answer{i}: \\boxed{{10^{{10^{{10^{{10}}}}}}}} " for i in (1, 2, 3)),
    "huge factorial and sum": "Answer1: \\boxed{(10^{100})!} Answer2: \\boxed{\\sum_{k=1}^{10^{12}} k^k} Answer3: \\boxed{x^{10^{100}}-1}",
    "division by zero": "Answer1: \\boxed{\\frac{1}{0}} Answer2: \\boxed{0^0} Answer3: \\boxed{\\infty-\\infty}",
    "10,000 boxes": "\\boxed{1}" * 10_000,
    "10,000 unclosed boxes": "\\boxed{" * 10_000,
    "non-ASCII junk": "\x00\udcff日本語🙂" * 20_000,
    "huge e-notation numbers": "".join(f"Answer{i}: \\boxed{{1e100000000}} " for i in (1, 2, 3)),
    "whitespace after header/label": "### Problem" + " " * 100_000 + "Answer 1" + "\t" * 100_000,
    "20,000 nested labelled boxes": "Answer1: \\boxed{" * 20_000 + "4" + "}" * 20_000,
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


Data = list[tuple[str, list[str], list[bool]]]


def _groups_of_three(seed: int, groups: int) -> tuple[random.Random, list[list[dict]], list[dict]]:
    """MATH-500 rows shuffled by `seed`, the first `groups` full groups of three, and all rows; the rng goes on."""
    rows = [json.loads(x) for x in (SHARED / "data/benchmarks/math500.jsonl").read_text().splitlines() if x.strip()]
    rng = random.Random(seed)
    rng.shuffle(rows)
    return rng, [rows[3 * g : 3 * g + 3] for g in range(groups) if len(rows[3 * g : 3 * g + 3]) == 3], rows


def build(groups: int, rollouts: int, seed: int, wrong_rate: float = 0.5) -> Data:
    rng, chunks, rows = _groups_of_three(seed, groups)
    out = []
    for members in chunks:
        wrong = [
            [a for a in (rng.choice(rows)["answer"] for _ in range(2)) if not _same(a, r["answer"])] for r in members
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


def segments(completion: str) -> list[str]:
    return re.split(r"### Problem \d+", completion)[1:]


def math_verify_segments(completion: str, golds: list[str]) -> list[bool]:
    """math-verify in-process on each problem's segment, with its own signal timeouts."""
    results = []
    for seg, gold in zip(segments(completion), golds):
        g = parse(f"\\boxed{{{gold}}}")
        p = parse(seg)
        results.append(bool(g and p and verify(g, p)))
    return results


def verl_math_verify_segments(completion: str, golds: list[str]) -> list[bool]:
    """verl 0.9.1's own math_verify reward (a 4-process pool) on each problem's segment."""
    return [verl_math_verify.compute_score(seg, gold) == 1.0 for seg, gold in zip(segments(completion), golds)]


def fresh_verifier(timeout: float, workers: int) -> Verifier:
    """A new verifier whose workers are started and ready: every measurement starts cold."""
    verifier = Verifier(timeout_s=timeout, workers=workers)
    if verifier.start(wait_s=120) < workers:
        raise SystemExit("symbolic workers did not start within 120 s")
    return verifier


def fresh_verl_pool() -> None:
    """Restart verl's math_verify process pool (its parse caches live there) and start it."""
    if verl_math_verify._pool is not None:
        verl_math_verify._pool.shutdown()
        verl_math_verify._pool = None
    list(verl_math_verify._get_pool().map(verl_math_verify._verify_in_subprocess, ["\\boxed{1}"] * 8, ["1"] * 8))


def timed(
    fn: Callable[[tuple[str, list[str], list[bool]]], list[bool]], data: Data, threads: int
) -> tuple[float, list[bool]]:
    t0 = time.perf_counter()
    if threads == 1:
        results = [fn(item) for item in data]
    else:
        with ThreadPoolExecutor(threads) as ex:
            results = list(ex.map(fn, data))
    return time.perf_counter() - t0, [c for r in results for c in r]


def report(label: str, n: int, seconds: float, pred: list[bool], labels: list[bool]) -> None:
    agree = sum(p == lab for p, lab in zip(pred, labels)) / len(labels)
    false_credit = sum(p and not lab for p, lab in zip(pred, labels))
    print(f"  {label:34} {n / seconds:8.1f} completions/s  agreement {agree:.4f}  false credit {false_credit}")


def run_scenario(name: str, data: Data, args: argparse.Namespace) -> dict[str, float]:
    from math_verify.parser import parse_latex_cached

    labels = [lab for _, _, labs in data for lab in labs]
    n = len(data)
    print(f"[{name}] {n} completions (N=3, {len(labels)} problems, {sum(labels)} answered correctly)")
    ratios = {}
    for threads in (1, args.threads):
        verifier = fresh_verifier(args.timeout, args.workers)
        t_ours, ours = timed(lambda item: score_completion(item[0], item[1], verifier).correct, data, threads)
        verifier.close()
        if threads == 1:
            parse_latex_cached.cache_clear()
            base_label = "math-verify in-process, serial"
            t_base, base = timed(lambda item: math_verify_segments(item[0], item[1]), data, 1)
        else:
            fresh_verl_pool()
            base_label = f"verl math_verify reward, {threads} threads"
            t_base, base = timed(lambda item: verl_math_verify_segments(item[0], item[1]), data, threads)
        report(f"ours, {'serial' if threads == 1 else f'{threads} threads'}", n, t_ours, ours, labels)
        report(base_label, n, t_base, base, labels)
        ratios[threads] = t_base / t_ours
        print(f"  throughput ratio: {ratios[threads]:.1f}x")
    return ratios


def _same(a: str, b: str) -> bool:
    """The same answer as far as the trees tell (a wrong answer drawn from another problem must differ)."""
    return (
        a.split() == b.split()
        or tree_verdict(a, b, 1e-6) == (True, "string")
        or tree_verdict(a, b, 1e-6) == (True, "numeric")
    )


def symbolic_spelling(answer: str) -> str:
    """An equal answer that only the symbolic check can accept (the exact in-process paths cannot:
    it goes through an irrational factor): integers and fractions times sqrt(2) over sqrt(2);
    anything else as written."""
    tree = read_answer(answer)
    kinds = {n.kind for n in tree.walk()} if tree is not None else set()
    if not kinds or not kinds <= {"num", "neg", "div"} or any(n.places is not None for n in tree.walk()):  # type: ignore[union-attr]
        return answer
    q = exact(tree)  # type: ignore[union-attr]
    if q is None:
        return answer
    sign = "-" if q < 0 else ""
    p, d = abs(q.numerator), q.denominator
    return f"{sign}\\frac{{{p}\\sqrt{{2}}}}{{{d if d != 1 else ''}\\sqrt{{2}}}}"


def build_mixed(groups: int, seed: int, slow_rate: float) -> Data:
    """N=3 completions from MATH-500 solutions with symbolically spelled right answers; each
    answer is, with probability `slow_rate`, a distinct power tower of square roots instead (wrong, and slow)."""
    rng, chunks, _ = _groups_of_three(seed, groups)
    out = []
    for members in chunks:
        parts, golds, labels = [], [], []
        for i, row in enumerate(members, start=1):
            slow = rng.random() < slow_rate
            k = rng.randint(7, 99)
            # a tower on an irrational base: the in-process reading cannot refute it, its check runs to the limit
            answer = (
                f"\\sqrt{{2}}^{{\\sqrt{{2}}^{{\\sqrt{{2}}^{{{100 + k}}}}}}}"
                if slow
                else symbolic_spelling(row["answer"])
            )
            body = replace_last_box(row["solution"], answer)
            parts.append(f"### Problem {i}\n{body}\nAnswer{i}: \\boxed{{{answer}}}\n")
            golds.append(row["answer"])
            labels.append(not slow)
        out.append(("\n".join(parts), golds, labels))
    return out


def run_mixed(args: argparse.Namespace) -> None:
    """Honest answers beside a few slow ones, --threads at a time: no honest answer may lose credit."""
    data = build_mixed(args.groups, args.seed, args.slow_rate)
    labels = [lab for _, _, labs in data for lab in labs]
    print(
        f"[mixed load] {len(data)} completions (N=3, {len(labels)} problems, {len(labels) - sum(labels)} slow "
        f"answers, {args.slow_rate:.0%}), honest answers spelled for the symbolic check"
    )
    verifier = fresh_verifier(args.timeout, args.workers)
    isolated = [c for item in data for c in score_completion(item[0], item[1], verifier).correct]
    verifier.close()

    verifier = fresh_verifier(args.timeout, args.workers)
    latencies: list[float] = []
    honest_latencies: list[float] = []

    def one(item: tuple[str, list[str], list[bool]]) -> list[bool]:
        t0 = time.perf_counter()
        correct = score_completion(item[0], item[1], verifier).correct
        latencies.append(time.perf_counter() - t0)
        if all(item[2]):
            honest_latencies.append(latencies[-1])
        return correct

    seconds, loaded = timed(one, data, args.threads)
    verifier.close()
    honest_ok = [i for i, (lab, iso) in enumerate(zip(labels, isolated)) if lab and iso]
    lost = sum(not loaded[i] for i in honest_ok)
    false_credit = sum(p and not lab for p, lab in zip(loaded, labels))

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    print(f"  honest answers right in isolation: {len(honest_ok)} of {sum(labels)}; false credit {false_credit}")
    print(f"  ours, {args.threads} threads: {len(data) / seconds:8.1f} completions/s")
    print(f"  honest answers that lost credit under load: {lost} (target 0)")
    print(
        f"  latency per completion: p50 {pct(latencies, 0.5):.3f} s  p99 {pct(latencies, 0.99):.3f} s  "
        f"max {max(latencies):.3f} s (limit {args.timeout} s, target <= {2 * args.timeout} s); completions "
        f"without a slow answer: p99 {pct(honest_latencies, 0.99):.3f} s  max {max(honest_latencies):.3f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=166, help="groups of 3 MATH-500 problems (166 uses 498)")
    ap.add_argument("--rollouts", type=int, default=4, help="rollouts per group in the GRPO-shaped scenario")
    ap.add_argument("--timeout", type=float, default=2.0, help="our per-completion verification time limit (s)")
    ap.add_argument(
        "--workers", type=int, default=2, help="our symbolic worker processes (the recipe's bcr.verify.workers)"
    )
    ap.add_argument("--threads", type=int, default=8, help="concurrent reward calls, as verl's reward loop makes them")
    ap.add_argument("--seed", type=int, default=0, help="seed for problem order and wrong answers")
    ap.add_argument("--slow-rate", type=float, default=0.03, help="share of slow answers in the mixed-load scenario")
    ap.add_argument(
        "--only", choices=["all", "mixed"], default="all", help="run every scenario, or only the mixed load"
    )
    args = ap.parse_args()

    if args.only == "mixed":
        run_mixed(args)
        return
    verify(parse("$1$"), parse("$1$"))
    run_scenario("as written", build(args.groups, 1, args.seed, wrong_rate=0.0), args)
    run_scenario("distinct, 50% wrong", build(args.groups, 1, args.seed), args)
    run_scenario(f"GRPO x{args.rollouts}, 50% wrong", build(args.groups, args.rollouts, args.seed), args)

    configure_default(args.timeout, args.workers).start(wait_s=120)
    worst = 0.0
    for name, text in PATHOLOGICAL.items():
        t0 = time.perf_counter()
        out = compute_score("bench", text, ["5", "7", "9"], {"n": 3}, timeout_s=args.timeout, workers=args.workers)
        dt = time.perf_counter() - t0
        worst = max(worst, dt)
        print(f"  pathological {name!r:28} {dt:6.3f} s  score {out['score']}")
    verdict = "OK" if worst <= 2 * args.timeout else "TOO SLOW"
    print(f"worst-case latency: {worst:.3f} s (limit {args.timeout} s, target <= {2 * args.timeout} s: {verdict})")
    run_mixed(args)


if __name__ == "__main__":
    main()
