"""Offline checks of a registration's design, computable before any base or pilot exists (docs/registration_v3.md):

- the allocator precondition: the share of the useful re-check tokens on long chains that a perfect allocator keeps
  inside the budget B, over every chain-length tuple (F3's "useful re-checks stay" is reachable only if they fit);
- disjoint evaluation: which evaluation problems appear, by question text, in training or warm-start groups;
- the ceiling a toy's knowledge gaps put on any trained arm: the share of evaluation problems no gap touches;
- the budget the registered fit rule would choose, simulated on supervised samples in place of the base's, and the
  allocator share there (the precondition is read at that B, not at a B chosen for it).

    python -m recipe_bcr.miniature.paper.design_checks [--toy toy_gaps] [--budget 309 ...] [--overlap DIR]
        [--gaps [--gap-search 0.11]] [--fit-rule]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.toy.preconditions import REGISTRATIONS
from recipe_bcr.miniature.toy.task import (
    CHECK,
    CLOSING,
    QUESTION,
    RESTATE,
    ToySpec,
    benchmark_problems,
    chain,
    make_groups,
    make_problem,
    target_completion,
    written_steps,
)

Count = Callable[[str], int]  # text -> tokens (the base's tokenizer)


@dataclass(frozen=True)
class ChainCosts:
    """Tokens of one problem's section by its chain length (the toy's own text, the base's tokenizer)."""

    bare: float  # the shortest written section: header, steps with remainder lines, closing, answer line
    recheck: float  # what a re-check ("Check: 4 + 3 is 7. ...") adds to it
    restatement: float  # what a restatement ("The problem asks for 4 + 3 - 2.") adds to it


def _section(body: str, answer: int) -> str:
    return f"### Problem 1\n{body} {CLOSING.format(answer)}\nAnswer1: \\boxed{{{answer}}}"


def chain_costs(spec: ToySpec, count: Count, samples: int = 64, seed: int = 0) -> dict[int, ChainCosts]:
    """Mean token costs per number of operations, measured on sections written from `spec` without slips."""
    rng = random.Random(seed)
    out = {}
    for ops in range(spec.min_ops, spec.max_ops + 1):
        one = replace(spec, min_ops=ops, max_ops=ops)
        bare, check, restate = [], [], []
        for k in range(samples):
            p = make_problem(rng, one, k)
            steps, answer = written_steps(p, rng, one, 0.0)
            rechecked, _ = written_steps(p, rng, one, 0.0, check=True)
            lead = RESTATE.format(p.question.removeprefix("What is ").removesuffix("?"))
            n = count(_section(steps, answer))
            bare.append(n)
            check.append(count(_section(f"{steps} {CHECK} {rechecked}", answer)) - n)
            restate.append(count(_section(f"{lead} {steps}", answer)) - n)
        out[ops] = ChainCosts(*(sum(v) / samples for v in (bare, check, restate)))
    return out


def group_overhead(count: Count) -> tuple[int, int]:
    """(tokens between two sections, tokens after the last): the "\\n\\n" join of `target_completion` and the EOS."""
    return count("a\n\nb") - count("a") - count("b"), 1


def _best_fit(costs: Sequence[float], room: float) -> float:
    """The most re-check tokens a perfect allocator fits in `room`: whole re-checks only (the answer follows the
    re-check's last line, so a cut one repairs nothing)."""
    sums = (sum(c) for r in range(len(costs) + 1) for c in itertools.combinations(costs, r))
    return max((s for s in sums if s <= room), default=0.0)


def allocator_share(
    costs: dict[int, ChainCosts],
    budget: int,
    n: int,
    long_ops: int,
    recheck_rate: float = 1.0,
    keep_restatement: bool = False,
    overhead: tuple[int, int] = (2, 1),
) -> dict[str, float]:
    """Over every tuple of n chain lengths (equally likely, as `make_problem` draws them), everything else written
    bare (plus restatements when `keep_restatement`): the useful re-check tokens a perfect allocator keeps on long
    chains (ops >= long_ops) against those wanted, each long chain wanting its re-check with `recheck_rate` (1: every
    long chain; the base's measured rate: what F3 compares BCR with). `share` is what a registration bounds."""
    sep, eos = overhead
    kept = wanted = longs = 0.0
    for ops in itertools.product(sorted(costs), repeat=n):
        room = budget - sum(costs[o].bare + keep_restatement * costs[o].restatement for o in ops) - sep * (n - 1) - eos
        checks = [costs[o].recheck for o in ops if o >= long_ops]
        longs += len(checks)
        for mask in itertools.product((False, True), repeat=len(checks)):
            weight = 1.0
            for m in mask:
                weight *= recheck_rate if m else 1 - recheck_rate
            want = [c for c, m in zip(checks, mask) if m]
            wanted += weight * sum(want)
            kept += weight * _best_fit(want, room)
    return {
        "budget": budget,
        "share": kept / wanted if wanted else float("nan"),
        "kept_per_long_problem": kept / longs if longs else float("nan"),
        "wanted_per_long_problem": wanted / longs if longs else float("nan"),
    }


def smallest_budget(costs: dict[int, ChainCosts], n: int, long_ops: int, target: float, **kw: Any) -> int:
    """The smallest B whose `allocator_share` reaches `target` (shares rise with B; bisection over tokens)."""
    lo = 0
    hi = int(n * max(c.bare + c.recheck + c.restatement for c in costs.values())) + 8
    while lo < hi:
        mid = (lo + hi) // 2
        if allocator_share(costs, mid, n, long_ops, **kw)["share"] >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def supervised_length(spec: ToySpec, count: Count, samples: int = 2000, seed: int = 1) -> float:
    """Mean tokens of a supervised N=1 completion (EOS included): the L_avg a budget's lambda is read against."""
    rng, write = random.Random(seed), random.Random(seed + 1)
    return (
        sum(count(target_completion([make_problem(rng, spec, k)], write, spec)) + 1 for k in range(samples)) / samples
    )


def supervised_fit_rule(
    spec: ToySpec, count: Count, pre: dict[str, Any], long_ops: int, groups: int = 1500, seed: int = 7
) -> dict[str, Any]:
    """The registration's budget rule (`choose_budget`: lambda over `compression_grid`, reachable-fit share nearest
    `fit_target`) run on supervised N=3 completions instead of the base's samples, with the supervised L_avg; and the
    allocator share (restatement kept, as the base writes it) at the B it picks. The base writes a little shorter than
    its supervision (toy_gaps: B 382 measured where this predicts 417), so `share_at_90pct` is the margin to read.
    `l_max` (the longest supervised N=1 completion) is what a never-binding per-problem budget must clear."""
    from recipe_bcr.miniature.toy.preconditions import choose_budget
    from recipe_bcr.miniature.toy.task import categories

    rng, write = random.Random(seed), random.Random(seed + 1)
    samples = []
    for k in range(groups):
        text = target_completion([make_problem(rng, spec, 3 * k + i) for i in range(3)], write, spec)
        sections = [{"steps": categories(s)["steps"]} for s in text.split("\n\n")]
        samples.append({"tokens": count(text) + 1, "finished": True, "fmt": True, "sections": sections})
    single = random.Random(seed + 2)
    lengths = [count(target_completion([make_problem(single, spec, k)], write, spec)) + 1 for k in range(groups)]
    l_avg = sum(lengths) / groups
    bound = pre["thresholds"]["any_fit_n3"][1]
    chosen = choose_budget(l_avg, samples, pre["compression_grid"], float(pre["fit_target"]), bound)
    costs, overhead = chain_costs(spec, count), group_overhead(count)
    share = {
        f: allocator_share(costs, int(f * chosen["budget"]), 3, long_ops, keep_restatement=True, overhead=overhead)
        for f in (1.0, 0.9)
    }
    return {
        "l_avg": l_avg,
        "l_max": max(lengths),
        "compression": chosen["compression"],
        "budget": chosen["budget"],
        "reachable_fit_n3": chosen["reachable_fit_n3"],
        "any_fit_n3": chosen["any_fit_n3"],
        "share": share[1.0]["share"],
        "share_at_90pct": share[0.9]["share"],
    }


def facts(question_chain: tuple[int, list[tuple[str, int]]]) -> set[str]:
    """The table facts ("7 - 3") a chain passes through when computed without a slip."""
    value, ops = question_chain
    out = set()
    for op, d in ops:
        out.add(f"{value} {op} {d}")
        value = value + d if op == "+" else value - d
    return out


def gap_ceiling(spec: ToySpec, problems: int, seed: int, gaps: Sequence[str] | None = None) -> dict[str, Any]:
    """The share of the evaluation's problems (and of training draws) that no knowledge gap touches: what a model
    that never slips but keeps its gaps scores, overall and by chain length."""
    gaps = set(spec.knowledge_gaps if gaps is None else gaps)
    evaluation = [facts(chain(p)) for p in benchmark_problems(problems, seed, spec)]
    rng = random.Random(f"{seed}:ceiling")
    training = [facts(chain(make_problem(rng, spec, k))) for k in range(3 * problems)]
    by_ops: dict[int, list[bool]] = {}
    for p in benchmark_problems(problems, seed, spec):
        by_ops.setdefault(len(chain(p)[1]), []).append(not facts(chain(p)) & gaps)
    return {
        "gaps": sorted(gaps),
        "evaluation": sum(not f & gaps for f in evaluation) / len(evaluation),
        "training": sum(not f & gaps for f in training) / len(training),
        "by_ops": {k: (len(v), sum(v) / len(v)) for k, v in sorted(by_ops.items())},
    }


def gap_pairs(spec: ToySpec, problems: int, seed: int, target: float, top: int = 8) -> list[tuple[float, tuple]]:
    """Pairs of inner table facts (neither start nor result at 0 or max_value) whose share of touched evaluation
    problems is nearest `target`. toy_gaps' pair was picked by hand among those touching 11.0%."""
    evaluation = [facts(chain(p)) for p in benchmark_problems(problems, seed, spec)]
    edges = (0, spec.max_value)
    table = sorted(f for f in set().union(*evaluation) if int(f.split()[0]) not in edges and _result(f) not in edges)
    scored = [
        (sum(bool(f & set(pair)) for f in evaluation) / len(evaluation), pair)
        for pair in itertools.combinations(table, 2)
    ]
    return sorted(scored, key=lambda x: (abs(x[0] - target), x[1]))[:top]


def _result(fact: str) -> int:
    a, op, d = fact.split()
    return int(a) + int(d) if op == "+" else int(a) - int(d)


def _norm(question: str) -> str:
    return " ".join(question.split())


def overlaps(evaluation: Sequence[tuple[str, str]], sources: dict[str, Iterable[str]]) -> dict[str, Any]:
    """Evaluation problems (id, question text) found in each source's question texts (training groups, warm-start
    groups), compared by whitespace-normalised text; `any` is the union, `distinct_questions` counts the
    evaluation's own repeats. A registration requires any.count == 0 and distinct_questions == problems."""
    seen = {name: {_norm(q) for q in qs} for name, qs in sources.items()}
    by = {name: [pid for pid, q in evaluation if _norm(q) in s] for name, s in seen.items()}
    hit = sorted({pid for ids in by.values() for pid in ids})
    return {
        "problems": len(evaluation),
        "distinct_questions": len({_norm(q) for _, q in evaluation}),
        "by_source": {name: {"count": len(ids), "ids": sorted(ids)} for name, ids in by.items()},
        "any": {"count": len(hit), "ids": hit},
    }


def evaluated_questions(samples: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(id, question) of every N=1 record of an evaluation's samples (its prompt's last toy question)."""
    out = {}
    for rec in samples:
        if int(rec["n"]) == 1:
            text = "\n".join(m["content"] for m in rec["prompt"])
            out[rec["problems"][0]["id"]] = list(QUESTION.finditer(text))[-1].group(0)
    return sorted(out.items())


def run_sources(spec: ToySpec, data: dict[str, Any], train_groups: int, warm: dict[str, Any]) -> dict[str, set[str]]:
    """The question texts a paper part trained on, regenerated as its command writes them: the N=3, N=2 and
    single-prompt training (and validation) files (`write_toy_data`'s groups), and the warm start's supervised groups
    (model._corpus)."""

    def questions(n: int, count: int, seed: int, split: str, style: str) -> set[str]:
        return {p.question for g in make_groups(n, count, seed, spec, split, style) for p in g.problems}

    arms = ((3, "group"), (2, "group"), (1, "single"))
    out = {f"train_{s}_n{n}": questions(n, train_groups, int(data["seed"]), "train", s) for n, s in arms}
    if data.get("val_groups"):
        out |= {f"val_{s}_n{n}": questions(n, int(data["val_groups"]), int(data["seed"]), "val", s) for n, s in arms}
    styles = [(n, "group") for n in warm["n_values"]] + [(1, "single")]
    out["warm_start"] = set().union(
        *(questions(n, int(warm["groups_per_n"]), int(warm["seed"]), f"sft-{s}", s) for n, s in styles)
    )
    return out


def offline_preconditions(
    spec: ToySpec, count: Count, budget: int, long_ops: int, evaluation: Sequence[tuple[str, str]], sources: dict
) -> dict[str, Any]:
    """The third registration's preconditions computed without sampling (paper_v3.yaml): the share of useful
    re-check tokens on long chains a perfect allocator keeps at the measured B, every long chain wanting its re-check
    and the restatement kept, and how many evaluation questions a training, validation or warm-start group holds."""
    costs = chain_costs(spec, count)
    share = allocator_share(costs, budget, 3, long_ops, keep_restatement=True, overhead=group_overhead(count))
    found = overlaps(evaluation, sources)
    return {
        "values": {"allocator_share": share["share"], "heldout_overlap": float(found["any"]["count"])},
        "details": {"allocator": share, "overlap": {k: v for k, v in found.items() if k != "by_source"}},
    }


STAND_INS = ("toy_model_gaps_fill", "toy_model_compete")  # committed bases whose tokenizers count a toy without one


def toy_counter(shipped: str) -> Count:
    """Tokens by the toy's own committed tokenizer, or the nearest committed toy's (STAND_INS, in order) while it
    has no committed base yet (their words are nearly the same; the costs then carry that approximation, and the
    command says so)."""
    from tokenizers import Tokenizer

    from recipe_bcr.miniature.toy.model import RESOURCES

    folder = next(RESOURCES / n for n in (shipped, *STAND_INS) if (RESOURCES / n / "tokenizer.json").exists())
    if folder.name != shipped:
        print(f"(no committed base {shipped} yet: tokens counted by {folder.name}'s tokenizer)")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _base_samples(root: Path) -> bool:
    from recipe_bcr.eval.runner import samples_path

    return samples_path(root / "eval" / "base").exists()


def _committed_overlap(root: Path) -> dict[str, Any]:
    """The committed paper part's evaluation (its base's N=1 samples) against its data, regenerated (toy_compete)."""
    from recipe_bcr.eval.runner import iter_records, samples_path
    from recipe_bcr.miniature.toy.model import load_specs

    findings = json.loads((root / "findings.json").read_text())
    spec, mspec, toy = load_specs(["config=toy_compete"])
    steps, prompts = int(findings["train_steps"]), 16  # paper.yaml grpo.prompts_per_step at that registration
    groups = max(int(toy["data"]["train_groups"]), steps * prompts)  # stages.train_group_count
    evaluation = evaluated_questions(iter_records(samples_path(root / "eval" / "base")))
    return overlaps(evaluation, run_sources(spec, toy["data"], groups, mspec.__dict__))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, nargs="*", default=[309], help="budgets B at N=3")
    ap.add_argument("--long-ops", type=int, default=5)
    ap.add_argument("--recheck-rate", type=float, default=1.0)
    ap.add_argument("--target", type=float, default=0.80)
    ap.add_argument("--overlap", type=Path, help="a second-registration paper folder with eval/base")
    ap.add_argument("--toy", default="toy_compete", help="a toy config of hydra_configs/ (its `task` is costed)")
    ap.add_argument("--gaps", action="store_true", help="the ceiling the toy's knowledge gaps put on trained arms")
    ap.add_argument("--gap-search", type=float, metavar="SHARE", help="fact pairs touching SHARE of the evaluation")
    ap.add_argument("--problems", type=int, default=1000, help="evaluation problems (the registration's)")
    ap.add_argument(
        "--fit-rule",
        nargs="?",
        const="paper_v3",
        choices=sorted(REGISTRATIONS),
        help="the B the registration's budget rule picks, simulated on supervised samples (default paper_v3)",
    )
    ap.add_argument("--fit-groups", type=int, default=1500, help="supervised N=3 groups (and N=1 problems) for it")
    ap.add_argument("--fit-seed", type=int, default=7, help="their sampling seed")
    ap.add_argument("overrides", nargs="*", help="dotlist overrides of the toy, e.g. task.max_ops=8")
    args = ap.parse_args(argv)
    from recipe_bcr.miniature.toy.model import load_specs

    if args.fit_groups < 1:
        ap.error(f"--fit-groups {args.fit_groups}: want at least 1")
    if args.overlap and not ((args.overlap / "findings.json").exists() and _base_samples(args.overlap)):
        from recipe_bcr.miniature.paper.history import V2_MAIN

        ap.error(
            f"--overlap {args.overlap}: no findings.json and eval/base samples there; the second registration's "
            f"main part is in git: `git archive {V2_MAIN[:7]} benchmarks/paper | tar -x -C DIR`, then "
            "--overlap DIR/benchmarks/paper"
        )
    try:
        spec, _, toy = load_specs([f"config={args.toy}", *args.overrides])
    except ValueError as e:
        ap.error(str(e))
    count = toy_counter(toy["shipped"])
    seed = int(toy["data"]["seed"])
    if args.gaps:
        ceiling = gap_ceiling(spec, args.problems, seed)
        print(
            f"knowledge gaps {ceiling['gaps']}: untouched {ceiling['evaluation']:.3f} of {args.problems} evaluation "
            f"problems, {ceiling['training']:.3f} of training draws\n| ops | evaluation problems | untouched |\n|---|---|---|"
        )
        for ops, (n, share) in ceiling["by_ops"].items():
            print(f"| {ops} | {n} | {share:.3f} |")
    if args.gap_search is not None:
        for share, pair in gap_pairs(spec, args.problems, seed, args.gap_search):
            print(f"touched {share:.3f}: {list(pair)}")
    l_avg = supervised_length(spec, count)
    print(f"supervised L_avg (N=1, tokens): {l_avg:.1f}")
    costs = chain_costs(spec, count)
    kw = {"recheck_rate": args.recheck_rate, "overhead": group_overhead(count)}
    print("| ops | bare section | re-check | restatement |\n|---|---|---|---|")
    for ops, c in costs.items():
        print(f"| {ops} | {c.bare:.1f} | {c.recheck:.1f} | {c.restatement:.1f} |")
    print("\n| B | restatement | kept / long problem | wanted / long problem | share |\n|---|---|---|---|---|")
    for b in args.budget:
        for keep in (False, True):
            r = allocator_share(costs, b, 3, args.long_ops, keep_restatement=keep, **kw)  # N=3, as BCR trains
            print(
                f"| {b} | {'kept' if keep else 'dropped'} | {r['kept_per_long_problem']:.1f} | "
                f"{r['wanted_per_long_problem']:.1f} | {r['share']:.3f} |"
            )
    for keep in (False, True):
        b = smallest_budget(costs, 3, args.long_ops, args.target, keep_restatement=keep, **kw)
        print(
            f"smallest B with share >= {args.target} (restatement {'kept' if keep else 'dropped'}): {b} "
            f"(lambda {b / (3 * l_avg):.2f} of the supervised L_avg)"
        )
    if args.fit_rule:
        from recipe_bcr.miniature.toy.preconditions import load_preregistration

        pre = load_preregistration(name=args.fit_rule)["preconditions"]
        fit = supervised_fit_rule(spec, count, pre, int(pre["long_chain_ops"]), args.fit_groups, args.fit_seed)
        print(
            f"{args.fit_rule}'s budget rule on supervised samples: L_avg {fit['l_avg']:.1f} (longest N=1 "
            f"{fit['l_max']}), lambda "
            f"{fit['compression']:.2f}, B {fit['budget']} (reachable fit {fit['reachable_fit_n3']:.3f}, any route "
            f"{fit['any_fit_n3']:.3f}); allocator share there {fit['share']:.3f}, at 90% of it "
            f"{fit['share_at_90pct']:.3f} (restatement kept)"
        )
    if args.overlap:
        found = _committed_overlap(args.overlap)
        print(
            json.dumps(
                {
                    k: v if k != "by_source" else {s: x["count"] for s, x in v.items()}
                    for k, v in found.items()
                    if k != "any"
                }
                | {"any": found["any"]["count"]},
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
