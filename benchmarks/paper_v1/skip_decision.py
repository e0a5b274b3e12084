"""Can the preconditions' sampling (temperature 0.6, top-p 0.9) ever draw a skip from a toy_verbose base?

A verbose section opens "Let me work ..." (steps follow) or "Let me think ..." (a skip): one token
decides. This prints the base's probability of " think" there, on the preconditions' own N=1 problem
stream, raw and at temperature 0.6, and on how many problems it stays inside the top-p 0.9 set
(outside it, the sampler never draws a skip and `acc_skipped_n1` cannot be measured).

    PYTHONPATH=. .venv/bin/python benchmarks/paper_v1/skip_decision.py [MODEL_DIR] [--problems 100]
"""

from __future__ import annotations

import argparse
import random
import statistics

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.miniature.toy.model import RESOURCES, _render, load_specs
from recipe_bcr.miniature.toy.task import make_problem


def main() -> None:
    task, _, raw = load_specs(["config=toy_verbose"])
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=str(RESOURCES / raw["shipped"]))
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--temperature", type=float, default=0.6)
    ap.add_argument("--top-p", type=float, default=0.9)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    work, think = (tok(w, add_special_tokens=False)["input_ids"] for w in (" work", " think"))
    assert len(work) == len(think) == 1, "the decision is not one token for this tokenizer"
    rng = random.Random("24:preconditions")  # the preconditions command's stream (paper.yaml seed 24)
    raw_p, hot_p, inside = [], [], 0
    for k in range(args.problems):
        p = make_problem(rng, task, k)
        opening = tok("### Problem 1\nLet me", add_special_tokens=False)["input_ids"]
        ids = _render(tok, build_messages([p.question])) + opening
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1]
        hot = (logits / args.temperature).softmax(-1)
        ranked = hot.sort(descending=True).values
        cutoff = ranked[int((ranked.cumsum(0) < args.top_p).sum())]  # the smallest prob inside the top-p set
        raw_p.append(logits.softmax(-1)[think[0]].item())
        hot_p.append(hot[think[0]].item())
        inside += hot[think[0]].item() >= cutoff.item()
    print(
        f"{args.model}: p(skip) raw mean {statistics.fmean(raw_p):.4f} (max {max(raw_p):.4f}); "
        f"at T={args.temperature} mean {statistics.fmean(hot_p):.4f} (max {max(hot_p):.4f}); "
        f"inside top-p {args.top_p} on {inside} of {args.problems} problems"
    )


if __name__ == "__main__":
    main()
