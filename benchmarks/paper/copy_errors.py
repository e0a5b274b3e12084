"""How often a toy base copies the wrong operation into a step, against how often it adds wrongly (issue 35): the
diagnosis behind the second miniature's bases (docs/miniature.md "Two bases"). A step "a op d = r." is miscopied
when (op, d) is not the question's operation at that position, and wrong when r is not a op d.

    PYTHONPATH=. python benchmarks/paper/copy_errors.py [--model DIR] [--n 1] [--problems 96] [--greedy] [task.KEY=V ...]

(the first base: `--model DIR task.max_ops=8`, its own chains; problems from hydra_configs/toy_compete.yaml otherwise)
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.miniature.toy.model import RESOURCES, load_specs
from recipe_bcr.miniature.toy.task import CHECK, chain, make_problem

STEP = re.compile(r"(-?\d+) ([+-]) (\d+) = (-?\d+)\.")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, default=RESOURCES / "toy_model_compete")
    ap.add_argument("--n", type=int, default=1)
    ap.add_argument("--problems", type=int, default=96)
    ap.add_argument("--greedy", action="store_true")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("overrides", nargs="*", help="toy_compete.yaml overrides for the problems, e.g. task.max_ops=8")
    args = ap.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    spec = load_specs(["config=toy_compete", *args.overrides])[0]
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    rng = random.Random(f"{args.seed}:copy")
    steps = miscopied = wrong = 0
    for _ in range(args.problems // args.n):
        problems = [make_problem(rng, spec, j) for j in range(args.n)]
        ids = tok.apply_chat_template(
            build_messages([p.question for p in problems]), add_generation_prompt=True, tokenize=True, return_dict=False
        )
        sampling = {"do_sample": False} if args.greedy else {"do_sample": True, "temperature": 1.0, "top_p": 1.0}
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), max_new_tokens=384 * args.n, **sampling)
        text = tok.decode(out[0, len(ids) :], skip_special_tokens=True)
        for p, section in zip(problems, re.split(r"### Problem \d+", text)[1:]):
            ops = chain(p)[1]
            for k, (a, op, d, r) in enumerate(STEP.findall(section.split(CHECK)[0])):
                steps += 1
                miscopied += k >= len(ops) or (op, int(d)) != ops[k]
                wrong += (int(a) + int(d) if op == "+" else int(a) - int(d)) != int(r)
    mode = "greedy" if args.greedy else "temperature 1.0"
    print(
        f"{args.model.name}, N={args.n}, {mode}: {steps} steps, miscopied {miscopied / max(steps, 1):.3f}, "
        f"added wrongly {wrong / max(steps, 1):.3f}"
    )


if __name__ == "__main__":
    main()
