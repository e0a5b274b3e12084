"""`python -m recipe_bcr {doctor,demo,paper,toy,gpu-check}`."""

from __future__ import annotations

import argparse
import sys

from recipe_bcr.verl_ext.quiet import hide_missing_engine_warnings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m recipe_bcr", description="bcr-recipe utilities")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check that verl + Hydra will run +recipe=bcr, and say how to fix what is not")
    demo = sub.add_parser("demo", help="the whole pipeline in miniature on CPU: data, GRPO training, merge, evaluation")
    demo.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    demo.add_argument("--rollout", choices=["hf", "vllm"], default=None,
                      help="verl rollout engine of the training stage (default: hydra_configs/demo.yaml, hf)")
    paper = sub.add_parser("paper", help="the paper's tables, ablations and findings in miniature on CPU (toy task): "
                                          "GRPO runs, evaluation at N=1..5, report.md")
    paper.add_argument("--out", default="paper_out", help="output folder (default: paper_out); a rerun resumes")
    paper.add_argument("overrides", nargs="*", help="paper.yaml overrides, e.g. train_steps=4 seeds=[0]")
    paper.add_argument("--ship", metavar="RUN", default=None,
                       help="then commit that run's model (e.g. bcr_n3_s0) as the demo's trained model, with provenance")
    toy = sub.add_parser("toy", help="build (or reuse) the tiny warm-started Qwen3 and write toy training data")
    toy.add_argument("--out", default="data/bcr_toy", help="data folder (default: data/bcr_toy)")
    toy.add_argument("--rebuild", action="store_true", help="build the model even when the cache or the committed copy has it")
    toy.add_argument("--ship", action="store_true", help="replace the committed warm start (recipe_bcr/resources/toy_model) with it")
    toy.add_argument("overrides", nargs="*", help="toy.yaml overrides, e.g. data.n=2 model.sft_steps=300")
    gpu = sub.add_parser("gpu-check", help="on a GPU machine: train and evaluate the toy model through the rollout "
                                           "engines with the paper's GPU settings, one verdict per stage (~10 min)")
    gpu.add_argument("--out", default="gpu_check_out", help="output folder (default: gpu_check_out)")
    gpu.add_argument("--device", choices=["gpu", "cpu"], default="gpu", help="bcr_device (cpu: the same stages here)")
    gpu.add_argument("--steps", type=int, default=3, help="GRPO steps per rollout engine")
    gpu.add_argument("--runtimes", nargs="+", choices=["vllm", "hf"], default=["vllm", "hf"],
                     help="rollout engines to check (default both; `--runtimes hf` on a machine without vLLM)")
    args = ap.parse_args(argv)
    hide_missing_engine_warnings()
    if args.command == "doctor":
        from recipe_bcr.commands.doctor import run

        return run()
    if args.command == "toy":
        from recipe_bcr.commands.toy import run_toy

        return run_toy(args.out, args.overrides, args.rebuild, args.ship)
    if args.command == "paper":
        from recipe_bcr.commands.paper import run_paper

        return run_paper(args.out, args.overrides, args.ship)
    if args.command == "gpu-check":
        from recipe_bcr.commands.gpu_check import run_gpu_check

        return run_gpu_check(args.out, args.device, args.steps, tuple(args.runtimes))
    from recipe_bcr.commands.demo import run_demo

    return run_demo(args.out, args.rollout)


if __name__ == "__main__":
    sys.exit(main())
