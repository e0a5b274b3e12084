"""What the second miniature's base preconditions would read if the base imitated its supervised data exactly
(issue 35): the registered values (recipe_bcr/miniature/toy/preconditions.py `regime_values`, hydra_configs/paper.yaml) computed
on supervised completions of hydra_configs/toy_compete.yaml instead of base samples, tokenized with a toy tokenizer.

A design estimate, not a measurement: a base samples its own slips and copies imperfectly, so its accuracy is lower
and its lengths vary more. The re-check and filler effects are read off the data (sections with against without),
not by the paired continuation the base is measured with.

    PYTHONPATH=. python benchmarks/paper/design_estimate.py [--tokenizer DIR] [--samples 3000]
"""

from __future__ import annotations

import argparse
import random
import statistics
from pathlib import Path

from recipe_bcr.grading.reward import score_completion
from recipe_bcr.grading.verify import default_verifier
from recipe_bcr.miniature.toy.model import RESOURCES, load_specs
from recipe_bcr.miniature.toy.preconditions import (
    load_preregistration,
    regime_rows,
    regime_table,
    regime_values,
    section_record,
)
from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import make_problem, target_completion


def main() -> None:
    ap = argparse.ArgumentParser()
    default = RESOURCES / "toy_model_compete"
    ap.add_argument("--tokenizer", type=Path, default=default if default.exists() else RESOURCES / "toy_model_verbose")
    ap.add_argument("--samples", type=int, default=3000)
    args = ap.parse_args()
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args.tokenizer)
    spec, mspec, _ = load_specs(["config=toy_compete"])
    pre = load_preregistration()["preconditions"]
    rng, verifier = random.Random("35:design"), default_verifier()
    eos = 1

    def group(n: int) -> dict:
        probs = [make_problem(rng, spec, k) for k in range(n)]
        text = target_completion(probs, rng, spec)
        correct = score_completion(text, [p.answers[0] for p in probs], verifier).correct
        secs = [section_record(t, p, c, tok) for t, p, c in zip(sections(text, n), probs, correct)]
        return {
            "tokens": len(tok(text, add_special_tokens=False)["input_ids"]) + eos,
            "finished": True,
            "fmt": True,
            "sections": secs,
        }

    n1 = [{**g["sections"][0], "length": g["tokens"]} for g in (group(1) for _ in range(args.samples))]
    n3 = [group(3) for _ in range(args.samples // 3)]
    n5 = [group(5) for _ in range(args.samples // 10)]
    seps = 2 * len(tok("\n\n", add_special_tokens=False)["input_ids"]) + eos
    got = regime_values(n1, n3, n5, [], mspec.n_values, seps, pre)
    long_ops = int(pre["long_chain_ops"])
    kinds = {
        "recheck": lambda s: s["recheck"] and s["ops"] >= long_ops,
        "plain": lambda s: not s["recheck"] and s["ops"] >= long_ops,
        "filler": lambda s: s["filler"] and not s["recheck"],
        "no_filler": lambda s: not s["filler"] and not s["recheck"],
    }
    acc = {k: statistics.fmean(float(s["correct"]) for s in n1 if s["steps"] and f(s)) for k, f in kinds.items()}
    got["values"]["recheck_gain_long"] = acc["recheck"] - acc["plain"]
    got["values"]["filler_effect"] = acc["filler"] - acc["no_filler"]
    print(f"design estimate on supervised data ({args.samples} N=1 sections; tokenizer {args.tokenizer.name})")
    print(regime_table(regime_rows(got["values"], pre["thresholds"])))
    d = got["details"]
    print(
        f"B = {d['budget_n3']} (lambda {d['compression']}, L_avg {d['l_avg_n1']:.1f}, "
        f"L_short {d['l_short_n1']:.1f}); N=1 accuracy by operations "
        + ", ".join(f"{k}: {v:.2f}" for k, v in d["acc_n1_by_ops"].items())
    )


if __name__ == "__main__":
    main()
