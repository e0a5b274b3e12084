"""Does a toy base model sit in the paper's regime? (issue 24; README "The toy task")

BCR's mechanism needs a base that is accurate when it reasons, that writes much text carrying no
information, that can do N problems at once when length does not bind, and a budget (the project's
own Algorithm 3 calibration) that binds on that redundancy while leaving room for the reasoning.
This module samples the base at N=1 and N=3 (the paper's evaluation sampling, group prompt, a
limit that never binds), measures each of those quantities and compares them with the
pre-registered thresholds of hydra_configs/paper.yaml `preconditions`:

- `reasoning_written_n1`: share of N=1 problems whose section has written steps (>=);
- `acc_written_n1`, `acc_skipped_n1`: accuracy of those and of the others (>= / <=);
- `redundancy_n1`: per problem, the share of its section's tokens outside `task.essential`
  (header, steps, answer line), averaged over problems (>=);
- `n3_acc_drop`: accuracy at N=1 minus accuracy at N=3, no budget pressure (<=);
- `truncated_n3_at_budget`: share of N=3 completions longer than B = calibrate(N=1 lengths, 3,
  lambda) (>=);
- `essential_slack_at_budget`: 1 - (3 x mean essential tokens of a problem with steps) / B (>=).
Details (not pre-registered, for diagnosis): how often the N=1 restatement copies the question
(`restatement_matches_n1`, issue 24's diagnosis of an undertrained warm start).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.data.budget import calibrate
from recipe_bcr.data.prompt import build_messages
from recipe_bcr.toy.profile import sections
from recipe_bcr.toy.task import ToySpec, essential, make_problem, read_section, restated

# name -> (direction, what it is); the thresholds themselves live in hydra_configs/paper.yaml
CHECKS = {
    "reasoning_written_n1": (">=", "N=1: share of problems with written steps"),
    "acc_written_n1": (">=", "N=1: accuracy when steps are written"),
    "acc_skipped_n1": ("<=", "N=1: accuracy when steps are skipped"),
    "redundancy_n1": (">=", "N=1: share of a problem's tokens that carry no information"),
    "n3_acc_drop": ("<=", "accuracy N=1 minus N=3, budget never binding"),
    "truncated_n3_at_budget": (">=", "N=3 completions longer than the calibrated budget"),
    "essential_slack_at_budget": (">=", "slack of the budget over N problems' essential reasoning"),
}


def measure(model: Path, spec: ToySpec, problems: int, groups: int, seed: int, compression: float,
            temperature: float = 0.6, top_p: float = 0.9, max_tokens_per_problem: int = 256,
            batch_size: int = 32) -> dict[str, Any]:
    """Sample the base and return the measured quantities, with the counts behind them."""
    from recipe_bcr.engines.base import Sampling, generate_all
    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.grading.reward import score_completion
    from recipe_bcr.grading.verify import default_verifier

    rng = random.Random(f"{seed}:preconditions")
    pool = [make_problem(rng, spec, k) for k in range(problems + 3 * groups)]
    sets = [[p] for p in pool[:problems]] + [pool[problems + 3 * i: problems + 3 * i + 3] for i in range(groups)]
    engine = TransformersEngine(str(model), dtype="float32", batch_size=batch_size)
    tok = engine.tokenizer
    gens = generate_all(engine, [build_messages([p.question for p in s]) for s in sets],
                        Sampling(temperature=temperature, top_p=top_p, seed=seed,
                                 max_tokens=max_tokens_per_problem * 3))
    verifier = default_verifier()

    def count(text: str) -> int:
        return len(tok(text, add_special_tokens=False)["input_ids"])

    n1 = {"written": 0, "written_ok": 0, "skipped": 0, "skipped_ok": 0, "lengths": [], "redundancy": [],
          "essential": [], "restated": 0, "restated_ok": 0}
    n3 = {"correct": 0, "problems": 0, "lengths": []}
    for s, (gen, *_) in zip(sets, gens):
        correct = score_completion(gen.text, [p.answers[0] for p in s], verifier).correct
        if len(s) == 3:
            n3["correct"] += sum(correct)
            n3["problems"] += 3
            n3["lengths"].append(gen.num_tokens)
            continue
        n1["lengths"].append(gen.num_tokens)
        section = sections(gen.text, 1)[0].strip()
        wrote = read_section(section)[0] > 0
        key = "written" if wrote else "skipped"
        n1[key] += 1
        n1[f"{key}_ok"] += bool(correct[0])
        chain = restated(section)
        if chain is not None:
            n1["restated"] += 1
            n1["restated_ok"] += chain == s[0].question.removeprefix("What is ").removesuffix("?")
        if section:
            total, kept = count(section), count(essential(section))
            n1["redundancy"].append(max(0.0, 1 - kept / total))
            if wrote:
                n1["essential"].append(kept)
    l_avg, _, budget = calibrate(n1["lengths"], 3, compression, round_to=1)
    essential_3 = 3 * _mean(n1["essential"])
    acc1 = (n1["written_ok"] + n1["skipped_ok"]) / problems
    acc3 = n3["correct"] / max(1, n3["problems"])
    values = {
        "reasoning_written_n1": n1["written"] / problems,
        "acc_written_n1": n1["written_ok"] / n1["written"] if n1["written"] else float("nan"),
        "acc_skipped_n1": n1["skipped_ok"] / n1["skipped"] if n1["skipped"] else float("nan"),
        "redundancy_n1": _mean(n1["redundancy"]),
        "n3_acc_drop": acc1 - acc3,
        "truncated_n3_at_budget": sum(n > budget for n in n3["lengths"]) / max(1, len(n3["lengths"])),
        "essential_slack_at_budget": 1 - essential_3 / budget,
    }
    details = {"problems_n1": problems, "groups_n3": groups, "written_n1": n1["written"],
               "skipped_n1": n1["skipped"], "acc_n1": acc1, "acc_n3": acc3, "l_avg_n1": l_avg,
               "budget_n3": budget, "compression": compression, "essential_tokens_3": essential_3,
               "mean_tokens_n3": _mean(n3["lengths"]), "restatements_n1": n1["restated"],
               "restatement_matches_n1": n1["restated_ok"] / n1["restated"] if n1["restated"] else float("nan")}
    return {"values": values, "details": details}


def verdicts(values: dict[str, float], thresholds: dict[str, float]) -> list[dict[str, Any]]:
    """[{"name", "value", "threshold", "met"}] in CHECKS order (a NaN value is not met)."""
    missing = sorted(set(CHECKS) - set(thresholds))
    if missing:
        raise ValueError(f"hydra_configs/paper.yaml preconditions.thresholds lacks {missing}")
    out = []
    for name, (op, _) in CHECKS.items():
        v, t = float(values[name]), float(thresholds[name])
        met = v >= t if op == ">=" else v <= t  # NaN compares False: not met
        out.append({"name": name, "value": v, "threshold": t, "met": bool(met)})
    return out


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The preconditions as a Markdown table (the report's first table)."""
    lines = ["| precondition | measured | pre-registered | met |", "|---|---|---|---|"]
    for r in rows:
        op, what = CHECKS[r["name"]]
        lines.append(f"| {what} (`{r['name']}`) | {r['value']:.3f} | {op} {r['threshold']:.2f} | "
                     f"{'yes' if r['met'] else '**no**'} |")
    return "\n".join(lines)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")
