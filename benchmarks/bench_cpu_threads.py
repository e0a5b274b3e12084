"""Torch threads on this CPU for the two compute phases of a toy GRPO step at a fixed reference size (the verbose toy, 8 x 8 rollouts; not the miniature's current sizes), each alone in
a fresh process: the HF rollout's decoding loop (`generate_batch`: 8 prompts x 8 rows, up to 170 tokens) and one
update pass of the CPU engine (`shared_prompt_response_logits`, log-probs over the response windows, backward).

Why the CPU preset gives the training worker every core (`BCR_TRAIN_THREADS=auto`) and leaves the rollout server on
one: with passive OpenMP threads (the preset's `OMP_WAIT_POLICY=PASSIVE`), every parallel op wakes a sleeping
thread, which a few large ops (the update) absorb and ~2,500 small ones (the decoding loop) do not; spinning
threads (`GOMP_SPINCOUNT`) recover the loop alone, not beside Ray's other processes (benchmarks/step_profile.md).

    python benchmarks/bench_cpu_threads.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SETTINGS = (  # (label, torch threads, extra environment)
    ("1 thread", 1, {}),
    ("2 threads, passive", 2, {}),
    ("2 threads, spinning", 2, {"GOMP_SPINCOUNT": "10000"}),
)
PROMPTS, ROWS_PER_PROMPT, TOKENS = 8, 8, 170


def toy_model() -> Path:
    from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs

    task, mspec, cfg = load_specs(["config=toy_verbose"])
    return ensure_model(
        Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"], shipped=RESOURCES / cfg["shipped"]
    )


def child(workload: str, model_dir: str, repeats: int) -> None:
    """Time `workload` in this process (its OpenMP settings came with its environment); print seconds as JSON."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="sdpa")
    g = torch.Generator().manual_seed(0)
    plens = [int(x) for x in torch.randint(215, 240, (PROMPTS,), generator=g)]
    prompts = [torch.randint(3, model.config.vocab_size, (p,), generator=g) for p in plens]
    if workload == "decode":
        from recipe_bcr.verl_ext.hf_rollout import generate_batch, sampling_key

        model.eval()
        rows = [p.tolist() for p in prompts for _ in range(ROWS_PER_PROMPT)]
        key = sampling_key({"temperature": 1.0, "logprobs": True, "max_tokens": TOKENS}, TOKENS)

        def run() -> None:
            with torch.inference_mode():
                generate_batch(model, rows, key, {-1}, 0, list(range(len(rows))))  # no EOS: every row runs to TOKENS

    else:
        from recipe_bcr.verl_ext.engine_cpu import batched_logprobs, shared_prompt_response_logits

        rows = PROMPTS * ROWS_PER_PROMPT
        clens = torch.randint(TOKENS - 50, TOKENS + 1, (rows,), generator=g)
        width = max(plens) + TOKENS
        ids, mask = torch.zeros(rows, width, dtype=torch.long), torch.zeros(rows, width, dtype=torch.long)
        for r in range(rows):
            p, c = plens[r // ROWS_PER_PROMPT], int(clens[r])
            ids[r, :p] = prompts[r // ROWS_PER_PROMPT]
            ids[r, p : p + c] = torch.randint(3, model.config.vocab_size, (c,), generator=g)
            mask[r, : p + c] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        plen_rows = torch.tensor([plens[r // ROWS_PER_PROMPT] for r in range(rows)])

        def run() -> None:
            out = shared_prompt_response_logits(model, ids, mask, pos, plen_rows)
            real = torch.arange(out.tokens.shape[1])[None, :] < out.lengths[:, None]
            model.zero_grad()
            (-batched_logprobs(out.logits[real], out.tokens[real]).mean()).backward()

    run()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    print(json.dumps({"seconds": statistics.median(times), "threads": torch.get_num_threads()}))


def measure(workload: str, model: Path, threads: int, extra: dict, repeats: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    env.update({"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(threads), **extra})
    cmd = [sys.executable, __file__, "--child", workload, "--model", str(model), "--repeats", str(repeats)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    result = json.loads(out)
    assert result["threads"] == threads, result
    return result["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per cell (median), after one warm-up")
    ap.add_argument("--child", choices=["decode", "update"], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.model, args.repeats)
        return
    model = toy_model()
    print(
        f"verbose toy, {PROMPTS} prompts x {ROWS_PER_PROMPT} rows, {TOKENS}-token completions, median of {args.repeats}"
    )
    print("\n| phase | " + " | ".join(label for label, _, _ in SETTINGS) + " |")
    print("|---|" + "---|" * len(SETTINGS))
    for workload, name in (
        ("decode", "HF decoding loop (generate_batch)"),
        ("update", "update pass (forward + backward)"),
    ):
        cells = [f"{measure(workload, model, t, extra, args.repeats):.3f} s" for _, t, extra in SETTINGS]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
