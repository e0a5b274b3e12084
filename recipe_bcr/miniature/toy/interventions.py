"""Paired interventions that share their sampling randomness (the third registration's F3 preconditions, issue 52;
docs/registration_v3.md sections 1 and 4): how much a useful re-check repairs, and how little each inert kind of text
(filler, the inert re-check, narration, the restatement) changes, each as an accuracy difference between arms that
continue the SAME forced text of the SAME problem with the SAME random stream, so the arms' sampling noise cancels in
the difference and its standard error is the paired one (sd of the per-problem differences / sqrt(n)).

Two sites, each a set of arms:
- the end of the steps (long chains, `long_chain_ops`+ operations, where the base's first pass writes every step; the
  base's own text up to its last step, then): `recheck` " Check:" and sampled on; `closed` the closing line at once;
  `filler` a filler sentence, then the closing line; `inert_recheck` the inert re-check ("Reading it again: {chain}
  gives {the steps' last value}.", task.INERT_CHECK), then the closing line. useful_gain = recheck - closed;
  effect_filler = filler - closed; effect_inert_recheck = inert_recheck - closed.
- the start of the section (any N=1 problem): "### Problem 1\n", then `both` narration and restatement, `no_restatement`
  narration only, `no_narration` restatement only, each followed by the first step's left side ("7 - 3 =") so every arm
  samples from the same token on (the first step's result) and the streams stay aligned. effect_restatement = both -
  no_restatement; effect_narration = both - no_narration (the base's usual opening, each kind removed).

Shared randomness, by construction of the batches: the transformers engine seeds each unit of requests once
(`torch.manual_seed(seed + sample)`, recipe_bcr/engines/hf_engine.py) and samples every row from its own slice of the
draws (torch.multinomial's exponential race), so request i of an arm sees the random stream of its row of its unit.
Every arm here is submitted alone, with the same request ids in the same order, sample index 0 and ONE seed: unit k
holds the same problems at the same rows in every arm, and a row's output depends on its own prompt only
(tests/test_toy_interventions.py checks both). Enabled by `preconditions.paired` in the registration's YAML (absent from
hydra_configs/paper.yaml: the second registration's measurement is unchanged).

    python -m recipe_bcr.miniature.toy.interventions --config toy_compete --long-problems 200 --start-problems 200
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from recipe_bcr.miniature.toy.task import (
    _STEP,
    CHECK,
    CLOSING,
    FILLERS,
    INERT_CHECK,
    NARRATION,
    RESTATE,
    ToySpec,
    _question_chain,
    chain,
    make_problem,
)

HEADER = "### Problem 1\n"  # how an N=1 completion opens (task.target_completion)
END_ARMS = ("recheck", "closed", "filler", "inert_recheck")
START_ARMS = ("both", "no_restatement", "no_narration")
# value name -> (arm with the text, arm without): the keys rules.f3_categories reads (`useful_gain`, `effect_{kind}`)
EFFECTS = {
    "useful_gain": ("recheck", "closed"),
    "effect_filler": ("filler", "closed"),
    "effect_inert_recheck": ("inert_recheck", "closed"),
    "effect_restatement": ("both", "no_restatement"),
    "effect_narration": ("both", "no_narration"),
}
# sampling seed offsets from preconditions.seed (the second registration's paired arms use 7 and 100-102)
FIRST_PASS_SEED, END_SEED, START_SEED = 200, 201, 202


def paired_effect(with_text: Sequence[bool], without: Sequence[bool]) -> dict[str, float]:
    """The paired accuracy difference of two arms over the same problems: effect (mean of the per-problem
    differences), se (their sample sd / sqrt(n)), sd and n."""
    if len(with_text) != len(without):
        raise ValueError(f"paired arms of different lengths: {len(with_text)} and {len(without)}")
    d = [float(a) - float(b) for a, b in zip(with_text, without)]
    n = len(d)
    if n < 2:
        return {"effect": sum(d) / n if n else float("nan"), "se": float("nan"), "sd": float("nan"), "n": n}
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    return {"effect": mean, "se": sd / math.sqrt(n), "sd": sd, "n": n}


def problems_needed(sd: float, target_se: float) -> int:
    """The smallest n with sd / sqrt(n) <= target_se (sd: of the per-problem paired differences)."""
    if not target_se > 0:
        raise ValueError(f"target se {target_se}: want > 0")
    return max(2, math.ceil((sd / target_se) ** 2 - 1e-9))


def end_suffixes(problem, steps_text: str) -> dict[str, str]:
    """What each end-of-steps arm appends to the base's text up to its last written step."""
    last = list(_STEP.finditer(steps_text))[-1].group(0)
    value = last.rsplit("=", 1)[1].strip().rstrip(".")
    close = " " + CLOSING.split("{")[0].rstrip()  # "So the final answer is": the answer is sampled
    return {
        "recheck": f" {CHECK}",
        "closed": close,
        "filler": f" {FILLERS[0]}{close}",
        "inert_recheck": " " + INERT_CHECK.format(_question_chain(problem), value) + close,
    }


def start_prefixes(problem) -> dict[str, str]:
    """What each section-start arm forces: the header, the inert text of the arm, the first step's left side."""
    start, ops = chain(problem)
    first = f"{start} {ops[0][0]} {ops[0][1]} ="
    restate = RESTATE.format(_question_chain(problem))
    return {
        "both": f"{HEADER}{NARRATION} {restate} {first}",
        "no_restatement": f"{HEADER}{NARRATION} {first}",
        "no_narration": f"{HEADER}{restate} {first}",
    }


def paired_config(pre: dict[str, Any]) -> dict[str, int]:
    """`preconditions.paired` checked: long_problems (long chains drawn for the end-of-steps arms; those whose first
    pass writes every step are kept) and start_problems (N=1 problems for the section-start arms)."""
    cfg = pre.get("paired")
    if not isinstance(cfg, dict) or set(cfg) != {"long_problems", "start_problems"}:
        raise ValueError(f"preconditions.paired: want {{long_problems, start_problems}}, got {cfg!r}")
    return {k: int(v) for k, v in cfg.items()}


def arm_requests(engine, messages: Sequence[Any], forced: Sequence[str]) -> list:
    """One arm's requests: id i = problem i, sample index 0, the chat prompt then the forced text's tokens. Built the
    same way for every arm, so each arm's units (base.units) hold the same problems at the same rows."""
    from recipe_bcr.engines.base import Request

    tok = engine.tokenizer
    return [
        Request(i, msgs, tuple(engine.render_ids(msgs)) + tuple(tok(text, add_special_tokens=False)["input_ids"]), 0)
        for i, (msgs, text) in enumerate(zip(messages, forced))
    ]


def run_arms(
    engine, problems: Sequence[Any], messages: Sequence[Any], forced: dict[str, list[str]], sampling, verifier
) -> dict[str, list[bool]]:
    """Every arm's continuations, each arm submitted alone with the one `sampling` (one seed): arm -> per-problem
    correctness of forced text + continuation."""
    from recipe_bcr.engines.base import drain
    from recipe_bcr.grading.reward import score_completion

    out: dict[str, list[bool]] = {}
    for arm, texts in forced.items():
        engine.submit(arm_requests(engine, messages, texts), sampling)
        got: list[bool | None] = [None] * len(problems)
        for rid, gen in drain(engine):
            if gen.failed:
                raise RuntimeError(f"arm {arm}, problem {rid}: {gen.finish_reason} ({gen.error})")
            full = texts[rid] + gen.text
            got[rid] = bool(score_completion(full, [problems[rid].answers[0]], verifier).correct[0])
        out[arm] = [bool(g) for g in got]
    return out


def measure_interventions(engine, spec: ToySpec, pre: dict[str, Any]) -> dict[str, Any]:
    """The shared-seed paired interventions at `pre["paired"]`'s sizes on the base in `engine`: {"values": each
    EFFECTS value and its `_se`, "details": arm accuracies, sds, sizes, yield, seconds, "pairs": arm -> per-problem
    correctness}. Problems come from their own stream (`{seed}:interventions`), so the values do not depend on the
    rest of the preconditions' sizes."""
    from recipe_bcr.data.prompt import build_messages
    from recipe_bcr.engines.base import Sampling, generate_all
    from recipe_bcr.grading.verify import default_verifier

    sizes = paired_config(pre)
    seed, per, long_ops = int(pre["seed"]), int(pre["max_tokens_per_problem"]), int(pre["long_chain_ops"])
    rng = random.Random(f"{seed}:interventions")
    verifier = default_verifier()

    def sampling(offset: int) -> Sampling:
        s = pre["sampling"]
        return Sampling(
            temperature=float(s["temperature"]), top_p=float(s["top_p"]), seed=seed + offset, max_tokens=per
        )

    t0 = time.perf_counter()
    drawn, k = [], 0
    while len(drawn) < sizes["long_problems"]:
        p = make_problem(rng, spec, k)
        k += 1
        if len(chain(p)[1]) >= long_ops:
            drawn.append(p)
    starts = [make_problem(rng, spec, k + j) for j in range(sizes["start_problems"])]

    firsts = generate_all(engine, [build_messages([p.question]) for p in drawn], sampling(FIRST_PASS_SEED))
    kept, texts = [], []
    for p, (gen, *_) in zip(drawn, firsts):
        steps = list(_STEP.finditer(gen.text))
        if len(steps) == len(chain(p)[1]):  # every step written, in the first pass
            kept.append(p)
            texts.append(gen.text[: steps[-1].end()])
    suffixes = [end_suffixes(p, t) for p, t in zip(kept, texts)]
    end_forced = {a: [t + s[a] for t, s in zip(texts, suffixes)] for a in END_ARMS}
    pairs = run_arms(
        engine, kept, [build_messages([p.question]) for p in kept], end_forced, sampling(END_SEED), verifier
    )
    t_end = time.perf_counter()
    prefixes = [start_prefixes(p) for p in starts]
    start_forced = {a: [x[a] for x in prefixes] for a in START_ARMS}
    pairs |= run_arms(
        engine, starts, [build_messages([p.question]) for p in starts], start_forced, sampling(START_SEED), verifier
    )
    t_start = time.perf_counter()

    values, stats = {}, {}
    for name, (a, b) in EFFECTS.items():
        stats[name] = paired_effect(pairs[a], pairs[b])
        values[name], values[f"{name}_se"] = stats[name]["effect"], stats[name]["se"]
    details = {
        "long_problems_drawn": len(drawn),
        "long_problems_kept": len(kept),
        "kept_share": len(kept) / len(drawn) if drawn else float("nan"),
        "start_problems": len(starts),
        "accuracy": {a: sum(v) / len(v) if v else float("nan") for a, v in pairs.items()},
        "sd": {name: s["sd"] for name, s in stats.items()},
        "unpaired_se": {name: _unpaired_se(pairs[a], pairs[b]) for name, (a, b) in EFFECTS.items()},
        "seeds": {"first_pass": seed + FIRST_PASS_SEED, "end": seed + END_SEED, "start": seed + START_SEED},
        "seconds": {"end": t_end - t0, "start": t_start - t_end},
    }
    return {"values": values, "details": details, "pairs": pairs}


def _unpaired_se(a: Sequence[bool], b: Sequence[bool]) -> float:
    """What the se would be with independent arms (each arm's binomial variance): the pairing's gain is the ratio."""
    n = len(a)
    if n < 2:
        return float("nan")
    pa, pb = sum(a) / n, sum(b) / n
    return math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / n)


def planned_sizes(result: dict[str, Any], pre: dict[str, Any], target_se: float) -> dict[str, Any]:
    """From a pilot (`measure_interventions`' result): per value, the paired problems needed for `target_se`
    (`problems_needed` at the pilot's sd, or at least sqrt(3 / n) where the pilot saw few discordant pairs), the
    long-chain problems to draw for them (end-of-steps values: kept / the pilot's kept share), the se at the sizes
    `pre["paired"]` asks for, and the seconds the largest sizes would take at the pilot's rate."""
    d, sizes = result["details"], paired_config(pre)
    rows, end_rate, start_rate = {}, 0.0, 0.0
    if d["long_problems_drawn"]:
        end_rate = d["seconds"]["end"] / d["long_problems_drawn"]
    if d["start_problems"]:
        start_rate = d["seconds"]["start"] / d["start_problems"]
    need_long = need_start = 0
    for name, (arm, _) in EFFECTS.items():
        at_end = arm in END_ARMS
        sd, n = d["sd"][name], d["long_problems_kept"] if at_end else d["start_problems"]
        # a pilot with few or no discordant pairs says little about the sd: planned at least at the rule-of-three
        # bound (a discordance rate of 3/n, the 95% upper bound when none is seen: sd ~ sqrt(3/n))
        plan_sd = max(sd, math.sqrt(3 / n)) if n and sd == sd else float("nan")
        need = problems_needed(plan_sd, target_se) if plan_sd == plan_sd else None
        configured = sizes["long_problems"] * d["kept_share"] if at_end else sizes["start_problems"]
        row = {
            "sd": sd,
            "planned_sd": plan_sd,
            "paired_problems": need,
            "se_at_config": sd / math.sqrt(configured) if configured else None,
        }
        if at_end and need is not None:
            row["long_problems_to_draw"] = math.ceil(need / d["kept_share"]) if d["kept_share"] else None
            need_long = max(need_long, row["long_problems_to_draw"] or 0)
        elif need is not None:
            need_start = max(need_start, need)
        rows[name] = row
    return {
        "target_se": target_se,
        "values": rows,
        "long_problems_to_draw": need_long,
        "start_problems": need_start,
        "seconds_at_that_size": need_long * end_rate + need_start * start_rate,
    }


def main(argv: list[str] | None = None) -> int:
    """A pilot on a committed toy base: the paired values with their se, and the sizes a target se needs."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="toy_compete", help="the toy (hydra_configs/<config>.yaml) whose base to use")
    ap.add_argument("--long-problems", type=int, default=200)
    ap.add_argument("--start-problems", type=int, default=200)
    ap.add_argument("--target-se", type=float, default=0.01)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--out", help="write the result (pairs included) here as JSON")
    ap.add_argument("overrides", nargs="*", help="paper.yaml dotlist overrides (preconditions.seed=..., ...)")
    args = ap.parse_args(argv)

    from importlib import resources

    import torch
    from omegaconf import OmegaConf

    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.miniature.toy.model import RESOURCES, load_specs

    sized = [f"preconditions.paired.long_problems={args.long_problems}"]
    sized += [f"preconditions.paired.start_problems={args.start_problems}"]
    # paper.yaml's preconditions block (sampling, seed, long chains) read here, not through preconditions.py, which
    # imports this module to measure the third registration's base
    registered = OmegaConf.load(str(resources.files("hydra_configs") / "paper.yaml"))
    merged = OmegaConf.merge(registered, OmegaConf.from_dotlist([*args.overrides, *sized]))
    pre = OmegaConf.to_container(merged, resolve=True)["preconditions"]
    task, _, toy = load_specs([f"config={args.config}"])
    torch.set_num_threads(1)  # as measure_regime: one thread on the shared cores
    t0 = time.perf_counter()
    engine = TransformersEngine(str(RESOURCES / toy["shipped"]), dtype="float32", batch_size=args.batch_size)
    result = measure_interventions(engine, task, pre)
    wall = time.perf_counter() - t0
    plan = planned_sizes(result, pre, args.target_se)
    d = result["details"]
    print(f"base {toy['shipped']}: {d['long_problems_kept']} of {d['long_problems_drawn']} long chains kept; ", end="")
    print(f"{d['start_problems']} section starts; {wall:.0f} s (one thread)")
    print("| value | effect | paired se | unpaired se | problems for se <= %g |" % args.target_se)
    print("|---|---|---|---|---|")
    for name in EFFECTS:
        row = plan["values"][name]
        draw = f" ({row['long_problems_to_draw']} long chains drawn)" if "long_problems_to_draw" in row else ""
        print(
            f"| {name} | {result['values'][name]:+.4f} | {result['values'][name + '_se']:.4f} | "
            f"{d['unpaired_se'][name]:.4f} | {row['paired_problems']}{draw} |"
        )
    print(f"arm accuracy: {json.dumps({a: round(v, 4) for a, v in d['accuracy'].items()})}")
    print(
        f"for se <= {args.target_se:g}: {plan['long_problems_to_draw']} long chains drawn, "
        f"{plan['start_problems']} section starts, ~{plan['seconds_at_that_size'] / 60:.0f} min at this rate"
    )
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"result": result, "plan": plan, "wall_seconds": wall, "config": args.config}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
