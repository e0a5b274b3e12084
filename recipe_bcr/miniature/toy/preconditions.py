"""Does a toy base model sit in the paper's regime? The pre-registration (hydra_configs/paper.yaml) loaded and
checked, and the base measured against its `preconditions`: the base sampled at N=1..5 with the paper's evaluation
sampling under a limit that never binds, the budget B from Algorithm 3, and each regime check of `REGIME_CHECKS`
(what a budget at B leaves room for, the base's accuracy, the paired effect of re-checks and filler, the spread of
lengths, how far the warm start covers N)."""

from __future__ import annotations

import datetime
import hashlib
import json
import random
import subprocess
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from recipe_bcr.data.budget import calibrate
from recipe_bcr.data.prompt import build_messages
from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import ToySpec, make_problem


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


# --- The miniature's pre-registrations (hydra_configs/paper.yaml, the second; paper_v3.yaml, the third): load one,
# check it names every precondition measured here, judge a value against a [low, high] range, say which commit
# registered it (a file with uncommitted changes has none, so no output can claim thresholds it was not judged by)

# name -> what it measures (the thresholds live in paper.yaml `preconditions.thresholds`)
REGIME_CHECKS = {
    "reachable_fit_n3": "N=3 samples inside B with steps on every problem",
    "any_fit_n3": "N=3 samples inside B by any route",
    "slack_shortest_written": "1 - (3 x shortest written-steps mode + separators) / B",
    "acc_n1": "base N=1 accuracy",
    "recheck_gain_long": "long chains: acc with re-check - without (paired)",
    "filler_effect": "acc with filler - without (paired, no re-check)",
    "skip_share_n1": "N=1 problems without written steps",
    "length_cv_n1": "CV over problems of N=1 completion length",
    "warm_start_covers_n": "largest N with 1..N all in the warm start",
    "n5_acc_drop": "accuracy N=1 minus N=5, budget never binding",
    "concise_share_n1": "sections with steps, no narration, no restatement",
}
# The third registration's (hydra_configs/paper_v3.yaml, issue 52): the unpaired interventions give way to the
# shared-seed ones (toy/interventions.py), and two checks computed offline join them
V3_CHECKS = {
    **{k: v for k, v in REGIME_CHECKS.items() if k not in ("recheck_gain_long", "filler_effect")},
    "useful_gain": "long chains: acc with the useful re-check - closed at once (paired, shared seed)",
    "effect_filler": "acc with a filler sentence - closed at once (paired, shared seed)",
    "effect_inert_recheck": "acc with the inert re-check - closed at once (paired, shared seed)",
    "effect_narration": "acc with narration at the section's start - without (paired, shared seed)",
    "allocator_share": "useful re-check tokens on long chains a perfect allocator keeps at B",
    "heldout_overlap": "evaluation questions in a training, validation or warm-start group",
}
REGISTRATIONS = {"paper": REGIME_CHECKS, "paper_v3": V3_CHECKS}  # hydra_configs/<name>.yaml -> its checks
DESCRIBE = {**REGIME_CHECKS, **V3_CHECKS}


def config_path(name: str = "paper") -> Path:
    if name not in REGISTRATIONS:
        raise ValueError(f"registration={name}: no such registration (one of {', '.join(REGISTRATIONS)})")
    return Path(str(resources.files("hydra_configs") / f"{name}.yaml"))


def load_preregistration(overrides: list[str] | None = None, name: str = "paper") -> dict[str, Any]:
    """hydra_configs/<name>.yaml (+ dotlist overrides, for smoke sizes) as a dict; refuses one that lacks a check's
    threshold or names one its registration does not measure."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(
        OmegaConf.merge(OmegaConf.load(config_path(name)), OmegaConf.from_dotlist(list(overrides or []))), resolve=True
    )
    checks = REGISTRATIONS[name]
    th = cfg.get("preconditions", {}).get("thresholds", {})
    missing, unknown = sorted(set(checks) - set(th)), sorted(set(th) - set(checks))
    if missing or unknown:
        raise ValueError(f"hydra_configs/{name}.yaml preconditions.thresholds: missing {missing}, unknown {unknown}")
    for check, bounds in th.items():
        if not (isinstance(bounds, list) and len(bounds) == 2 and any(b is not None for b in bounds)):
            raise ValueError(
                f"hydra_configs/{name}.yaml preconditions.thresholds.{check}: want [low, high] "
                f"(one may be null), got {bounds!r}"
            )
    return cfg


def within(value: float, bounds: list[float | None]) -> bool:
    """low <= value <= high (a null side is open); NaN is never within."""
    low, high = bounds
    if value != value:
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def describe(bounds: list[float | None]) -> str:
    low, high = bounds
    if low is None:
        return f"<= {high:g}"
    if high is None:
        return f">= {low:g}"
    return f"in [{low:g}, {high:g}]"


def registration(repo: Path | None = None, name: str = "paper") -> dict[str, str | None]:
    """The registration's identity: `id`, a hash of hydra_configs/<name>.yaml's content as loaded (every key and
    value: thresholds, gates, rules, sizes; comments do not count), and `commit`, the last commit that changed the file
    when the checkout has one and the file holds no uncommitted change (None in a wheel, or while it is edited)."""
    cfg = load_preregistration(name=name)
    ident = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]
    path = config_path(name)
    repo = repo or path.parents[1]
    try:
        rel = str(path.relative_to(repo))

        def git(*args: str) -> str:
            done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
            return done.stdout.strip()

        commit = None if git("status", "--porcelain", "--", rel) else git("log", "-1", "--format=%H", "--", rel) or None
    except (OSError, ValueError, subprocess.CalledProcessError):
        commit = None
    return {"id": ident, "commit": commit}


def launched_at() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# The base's preconditions pre-registered there, measured
# at the training rollout's sampling. `measure_regime` samples; `regime_values` turns the samples into the values
# (pure, unit-tested on planted samples); `choose_budget` applies the registered rule for lambda.


def _tokens(tok, text: str) -> int:
    return len(tok(text, add_special_tokens=False)["input_ids"])


def section_record(text: str, problem, correct: bool, tok) -> dict[str, Any]:
    """One problem's section of a base sample: its tokens, categories (task.categories), ops and correctness."""
    from recipe_bcr.miniature.toy.task import categories, chain

    return {
        "tokens": _tokens(tok, text.strip()),
        "ops": len(chain(problem)[1]),
        "correct": bool(correct),
        **categories(text),
    }


def fits(sample: dict[str, Any], budget: int, with_steps: bool) -> bool:
    """A group sample finished inside `budget` (EOS included, every answer in format), with steps on every
    problem when `with_steps`."""
    done = sample["finished"] and sample["tokens"] <= budget and sample["fmt"]
    return bool(done and (not with_steps or all(s["steps"] for s in sample["sections"])))


def fit_shares(samples: Sequence[dict[str, Any]], budget: int) -> tuple[float, float]:
    """(share finishing inside `budget` with steps on every problem, share finishing inside it by any route)."""
    if not samples:
        return float("nan"), float("nan")
    return (
        sum(fits(s, budget, True) for s in samples) / len(samples),
        sum(fits(s, budget, False) for s in samples) / len(samples),
    )


def choose_budget(
    l_avg: float, samples_n3: Sequence[dict[str, Any]], grid: Sequence[float], target: float, any_fit_max: float | None
) -> dict[str, Any]:
    """The registered rule (paper.yaml `preconditions.compression_grid`, `fit_target`): of Algorithm 3's budgets
    B = 3 x L_avg x lambda over the grid, the one whose reachable-fit share is nearest `target` among those whose
    any-route share is within its bound (all of them when none is); ties go to the larger lambda."""
    rows = []
    for lam in grid:
        budget = calibrate([l_avg], 3, float(lam), round_to=1)[2]
        reach, anyr = fit_shares(samples_n3, budget)
        rows.append({"compression": float(lam), "budget": budget, "reachable_fit_n3": reach, "any_fit_n3": anyr})
    allowed = [r for r in rows if any_fit_max is None or r["any_fit_n3"] <= any_fit_max] or rows
    best = min(allowed, key=lambda r: (abs(r["reachable_fit_n3"] - target), -r["compression"]))
    return {**best, "grid": rows}


def regime_values(
    n1: Sequence[dict[str, Any]],
    n3: Sequence[dict[str, Any]],
    n5: Sequence[dict[str, Any]],
    paired: Sequence[dict[str, bool]],
    n_values: Sequence[int],
    separator_tokens: int,
    pre: dict[str, Any],
) -> dict[str, Any]:
    """The registered values from the samples. n1: section records (section_record) of N=1 samples plus "length"
    (the completion's tokens); n3/n5: group samples {"tokens", "finished", "fmt", "sections": [records]};
    paired: per long-chain problem {"recheck", "closed", "filler"}: correct after continuing the base's own steps
    with a re-check, with the closing line at once, with a filler sentence then the closing line."""
    lengths = [s["length"] for s in n1]
    l_avg = _mean(lengths)
    chosen = choose_budget(
        l_avg, n3, pre["compression_grid"], float(pre["fit_target"]), pre["thresholds"]["any_fit_n3"][1]
    )
    budget = chosen["budget"]
    short = [s["tokens"] for s in n1 if s["steps"] and not s["recheck"] and not s["filler"]]
    l_short = _mean(short)
    sd = (sum((x - l_avg) ** 2 for x in lengths) / len(lengths)) ** 0.5 if lengths else float("nan")
    acc1 = _mean([float(s["correct"]) for s in n1])
    acc5 = _mean([float(r["correct"]) for g in n5 for r in g["sections"]])
    covers = 0
    while covers + 1 in set(n_values):
        covers += 1
    values = {
        "reachable_fit_n3": chosen["reachable_fit_n3"],
        "any_fit_n3": chosen["any_fit_n3"],
        "slack_shortest_written": 1 - (3 * l_short + separator_tokens) / budget,
        "acc_n1": acc1,
        "recheck_gain_long": _mean([float(p["recheck"]) for p in paired]) - _mean([float(p["closed"]) for p in paired]),
        "filler_effect": _mean([float(p["filler"]) for p in paired]) - _mean([float(p["closed"]) for p in paired]),
        "skip_share_n1": _mean([float(not s["steps"]) for s in n1]),
        "length_cv_n1": sd / l_avg if l_avg else float("nan"),
        "warm_start_covers_n": float(covers),
        "n5_acc_drop": acc1 - acc5,
        "concise_share_n1": _mean([float(s["steps"] and not s["narration"] and not s["restatement"]) for s in n1]),
    }
    long_ops = int(pre["long_chain_ops"])
    details = {
        "l_avg_n1": l_avg,
        "budget_n3": budget,
        "compression": chosen["compression"],
        "budget_grid": chosen["grid"],
        "l_short_n1": l_short,
        "short_sections_n1": len(short),
        "separator_tokens": separator_tokens,
        "acc_n5": acc5,
        "acc_n5_by_position": [_mean([float(g["sections"][i]["correct"]) for g in n5]) for i in range(5)],
        "acc_n3": _mean([float(r["correct"]) for g in n3 for r in g["sections"]]),
        "acc_n1_by_ops": {
            str(k): _mean([float(s["correct"]) for s in n1 if s["ops"] == k]) for k in sorted({s["ops"] for s in n1})
        },
        "skip_share_by_ops": {
            str(k): _mean([float(not s["steps"]) for s in n1 if s["ops"] == k]) for k in sorted({s["ops"] for s in n1})
        },
        "acc_n1_long_recheck_observed": _mean(
            [float(s["correct"]) for s in n1 if s["ops"] >= long_ops and s["steps"] and s["recheck"]]
        ),
        "acc_n1_long_plain_observed": _mean(
            [float(s["correct"]) for s in n1 if s["ops"] >= long_ops and s["steps"] and not s["recheck"]]
        ),
        "share_n1": {
            c: _mean([float(s[c]) for s in n1]) for c in ("narration", "restatement", "steps", "filler", "recheck")
        },
        "paired_problems": len(paired),
        "problems_n1": len(n1),
        "groups_n3": len(n3),
        "groups_n5": len(n5),
        "mean_tokens_n3": _mean([g["tokens"] for g in n3]),
        "finished_n3": _mean([float(g["finished"]) for g in n3]),
    }
    return {"values": values, "details": details}


def regime_rows(values: dict[str, float], thresholds: dict[str, list]) -> list[dict[str, Any]]:
    """[{"name", "value", "range", "met"}] in the registration's order."""
    return [
        {"name": k, "value": float(values[k]), "range": thresholds[k], "met": within(float(values[k]), thresholds[k])}
        for k in thresholds
    ]


def regime_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| precondition | measured | pre-registered | met |", "|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {DESCRIBE[r['name']]} (`{r['name']}`) | {r['value']:.3f} | {describe(r['range'])} | "
            f"{'yes' if r['met'] else '**no**'} |"
        )
    return "\n".join(lines)


def measure_regime(
    model: Path, spec: ToySpec, n_values: Sequence[int], pre: dict[str, Any], batch_size: int = 32
) -> dict[str, Any]:
    """Sample the base at the registered sampling: N=1, N=3 and N=5 groups (limits that never bind) and the
    paired continuations of its own steps on long chains; return regime_values' values and details (and, when `pre`
    has `paired`, the shared-seed interventions of toy/interventions.py under "interventions"). Runs on one torch
    thread whatever the environment says (the committed measurements did; two threads spinning on two shared cores
    ran ~40x slower), then puts the caller's thread count back."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _sample_regime(model, spec, n_values, pre, batch_size)
    finally:
        torch.set_num_threads(threads)


def _sample_regime(
    model: Path, spec: ToySpec, n_values: Sequence[int], pre: dict[str, Any], batch_size: int
) -> dict[str, Any]:
    from recipe_bcr.engines.base import Request, Sampling, drain, generate_all
    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.grading.reward import score_completion
    from recipe_bcr.grading.verify import default_verifier
    from recipe_bcr.miniature.toy.task import _STEP, CHECK, CLOSING, FILLERS, chain

    seed, per = int(pre["seed"]), int(pre["max_tokens_per_problem"])
    rng = random.Random(f"{seed}:regime")
    sizes = {1: int(pre["problems"]), 3: int(pre["groups_n3"]), 5: int(pre["groups_n5"])}
    engine = TransformersEngine(str(model), dtype="float32", batch_size=batch_size)
    tok, verifier = engine.tokenizer, default_verifier()
    k = 0

    def fresh(count: int) -> list:
        nonlocal k
        out = [make_problem(rng, spec, k + j) for j in range(count)]
        k += count
        return out

    def sampling(n: int, offset: int, max_tokens: int | None = None) -> Sampling:
        return Sampling(
            temperature=float(pre["sampling"]["temperature"]),
            top_p=float(pre["sampling"]["top_p"]),
            seed=seed + offset,
            max_tokens=max_tokens or per * n,
        )

    samples: dict[int, list[dict[str, Any]]] = {}
    for n, count in sizes.items():
        sets = [fresh(n) for _ in range(count)]
        gens = generate_all(engine, [build_messages([p.question for p in s]) for s in sets], sampling(n, 1000 * n))
        rows = []
        for s, (gen, *_) in zip(sets, gens):
            scored = score_completion(gen.text, [p.answers[0] for p in s], verifier)
            secs = [section_record(t, p, c, tok) for t, p, c in zip(sections(gen.text, n), s, scored.correct)]
            rows.append(
                {
                    "tokens": gen.num_tokens,
                    "finished": gen.finish_reason == "stop",
                    "fmt": scored.breakdown["fmt"] == 1.0,
                    "sections": secs,
                }
            )
        samples[n] = rows
    n1 = [{**g["sections"][0], "length": g["tokens"]} for g in samples[1]]

    # paired continuations on long chains: the base's own written steps, then a re-check / the closing line /
    # a filler sentence and the closing line
    target = int(pre.get("interventions", 0))  # the second registration's unpaired arms; the third has none
    paired: list[dict[str, bool]] = []
    if target:
        long_problems = []
        while len(long_problems) < 3 * target:
            p = fresh(1)[0]
            if len(chain(p)[1]) >= int(pre["long_chain_ops"]):
                long_problems.append(p)
        messages = [build_messages([p.question]) for p in long_problems]
        firsts = generate_all(engine, messages, sampling(1, 7))
        prefixes = []
        for p, msgs, (gen, *_) in zip(long_problems, messages, firsts):
            steps = list(_STEP.finditer(gen.text))
            if len(steps) == len(chain(p)[1]) and len(prefixes) < target:  # every step written, in the first pass
                prefixes.append((p, msgs, gen.text[: steps[-1].end()]))
        close = " " + CLOSING.split("{")[0].rstrip()
        arms = {"recheck": f" {CHECK}", "closed": close, "filler": f" {FILLERS[0]}{close}"}
        paired = [{} for _ in prefixes]
        for a, (arm, suffix) in enumerate(arms.items()):
            requests = [
                Request(
                    i,
                    msgs,
                    tuple(engine.render_ids(msgs)) + tuple(tok(text + suffix, add_special_tokens=False)["input_ids"]),
                    0,
                )
                for i, (_, msgs, text) in enumerate(prefixes)
            ]
            engine.submit(requests, sampling(1, 100 + a))
            for rid, gen in drain(engine):
                p, _, text = prefixes[rid]
                paired[rid][arm] = bool(score_completion(text + suffix + gen.text, [p.answers[0]], verifier).correct[0])
    seps = 2 * _tokens(tok, "\n\n") + 1  # two separators and EOS in an N=3 completion
    result = regime_values(n1, samples[3], samples[5], paired, n_values, seps, pre)
    if pre.get("paired") is not None:  # the third registration's shared-seed interventions (issue 52); absent
        # from paper.yaml, so the second's measurement above is unchanged (tests/test_toy_interventions.py)
        from recipe_bcr.miniature.toy.interventions import measure_interventions

        result["interventions"] = measure_interventions(engine, spec, pre)
    return result
