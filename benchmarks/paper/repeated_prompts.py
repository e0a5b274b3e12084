"""How often the main part's training data repeats a prompt inside one GRPO step, per arm's prompt style.

A prompt drawn twice in a step makes two GRPO groups whose equal completions carry different advantages; the
trainer orders such rows by their groups' completions (`canonical_order`), and before it did they reached the
update in arrival order, the suspect of the N=1 baseline's last-bit branch (docs/miniature.md). Writes nothing:
it rebuilds the rows `python -m recipe_bcr paper` would write (paper.yaml's toy, seeds and sizes) and samples
batches of a step's size.

    python benchmarks/paper/repeated_prompts.py [--batches 20000]
"""

from __future__ import annotations

import argparse
import collections
import random

from recipe_bcr.data.schema import to_record
from recipe_bcr.miniature.paper.command import load_config
from recipe_bcr.miniature.stages import train_group_count
from recipe_bcr.miniature.toy.model import load_specs
from recipe_bcr.miniature.toy.task import make_groups


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=20000, help="random batches of a step's prompts per style")
    args = ap.parse_args()
    cfg = load_config([])
    task, _, toy = load_specs([f"config={cfg['toy']}"])
    d, size = toy["data"], int(cfg["grpo"]["prompts_per_step"])
    count = train_group_count(d, cfg)
    print(f"{cfg['toy']}: {count} training rows, batches of {size} prompts, {args.batches} sampled (seed 0)")
    print(
        "\n| N | prompt style | distinct prompts | most copies | P(a batch repeats a prompt) |\n|---|---|---|---|---|"
    )
    for n, style in ((1, "single"), (int(cfg["bcr"]["n"]), "group")):
        prompts = [str(to_record(r)["prompt"]) for r in make_groups(n, count, d["seed"], task, "train", style)]
        copies = collections.Counter(prompts)
        rng = random.Random(0)
        hits = sum(len(set(rng.sample(prompts, size))) < size for _ in range(args.batches))
        print(f"| {n} | {style} | {len(copies)} | {max(copies.values())} | {hits / args.batches:.4f} |")


if __name__ == "__main__":
    main()
