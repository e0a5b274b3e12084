"""Seconds for the HF rollout to sample one toy step's completions: the recipe's decoding loop
(`recipe_bcr.verl_ext.hf_rollout.generate_batch`: each distinct prompt prefilled once, its keys shared by its
rows) against transformers' stock `generate()` on the same rows, interleaved, in one process.

The miniature's step: the verbose toy (N=3), 8 training prompts x 8 rows each, up to 170 new tokens at
temperature 1 (verl's rollout settings), float32, 1 torch thread (the rollout server's effective count on 2 cores);
best and median of `--reps` per side. `--profile` adds torch.profiler's top operators for each side.

    python benchmarks/bench_hf_generate.py [--reps 3] [--prompts 8] [--rollouts 8] [--tokens 170] [--profile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs  # noqa: E402
from recipe_bcr.miniature.toy.task import write_toy_data  # noqa: E402
from recipe_bcr.verl_ext.hf_rollout import SamplingKey, generate_batch, trim_completion  # noqa: E402


def stock_generate(model, prompts: list[list[int]], key: SamplingKey, eos_ids: set[int], pad_id: int) -> list:
    """transformers' generate() with its own cache, as the HF rollout called it before its decoding loop."""
    from transformers import GenerationConfig

    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts])
    mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts])[:, None]).long()
    with torch.inference_mode():
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            generation_config=GenerationConfig(
                max_new_tokens=key.max_tokens,
                do_sample=True,
                temperature=key.temperature,
                top_p=key.top_p,
                top_k=None,
                eos_token_id=sorted(eos_ids),
                pad_token_id=pad_id,
                output_logits=True,
                return_dict_in_generate=True,
            ),
        )
    return [trim_completion(row, eos_ids) for row in out.sequences[:, width:].tolist()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--rollouts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=170)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/hf_generate"))
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)

    import pandas as pd
    from transformers import AutoModelForCausalLM, AutoTokenizer

    task, mspec, cfg = load_specs(["config=toy_verbose"])
    model_dir = ensure_model(
        Path(cfg["cache_dir"]), task, mspec, model_dir=cfg["model_dir"], shipped=RESOURCES / cfg["shipped"]
    )
    d = cfg["data"]
    write_toy_data(args.out / "data", d["n"], d["train_groups"], d["val_groups"], d["seed"], task)
    frame = pd.read_parquet(args.out / "data" / f"train_n{d['n']}.parquet")
    tok = AutoTokenizer.from_pretrained(model_dir)
    prompts = []
    for i in range(args.prompts):
        ids = tok.apply_chat_template(list(frame.iloc[i]["prompt"]), add_generation_prompt=True, tokenize=True)
        prompts += [list(ids["input_ids"] if hasattr(ids, "keys") else ids)] * args.rollouts
    key = SamplingKey(1.0, 1.0, 0, 1.0, args.tokens, True)
    eos, pad = {tok.eos_token_id}, tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    def load():  # one copy per side: the decoding loop switches its copy's attention to the shared-prefix one
        return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()

    sides = {"stock generate()": (load(), stock_generate), "decoding loop": (load(), generate_batch)}
    times: dict[str, list[float]] = {name: [] for name in sides}
    lengths: dict[str, list[float]] = {name: [] for name in sides}
    load = [os.getloadavg()[0]]
    for _ in range(args.reps):
        for name, (model, fn) in sides.items():
            t0 = time.perf_counter()
            rows = fn(model, prompts, key, eos, pad)
            times[name].append(time.perf_counter() - t0)
            lengths[name].append(statistics.mean(len(r[0] if isinstance(r, tuple) else r) for r in rows))
    load.append(os.getloadavg()[0])
    print(
        f"{args.prompts} prompts x {args.rollouts} rows, <= {args.tokens} new tokens, prompt {len(prompts[0])} tokens; "
        f"{args.reps} reps, load average {load[0]:.1f} -> {load[1]:.1f}\n"
    )
    print("| side | best s | median s | mean completion tokens |\n|---|---|---|---|")
    for name in sides:
        print(
            f"| {name} | {min(times[name]):.2f} | {statistics.median(times[name]):.2f} | "
            f"{statistics.mean(lengths[name]):.0f} |"
        )
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        for name, (model, fn) in sides.items():
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                fn(model, prompts, key, eos, pad)
            print(f"\n{name}\n" + prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=8))


if __name__ == "__main__":
    main()
