"""`python -m recipe_bcr {doctor,demo,paper,toy,gpu-check}`; `--help` also lists the other entry points."""

from __future__ import annotations

import argparse
import re
import sys
from importlib import resources
from pathlib import Path

from recipe_bcr.data.cli import ConfigError, refuse_renamed

OTHER_COMMANDS = """\
other entry points (Hydra key=value options; --help on each):
  python -m verl.trainer.main_ppo +recipe=bcr     train with BCR on GPUs (+recipe=bcr_toy: the CPU toy)
  python -m recipe_bcr.eval                       evaluate a model at N = 1..5; mode=compare puts runs side by side
  python -m data_prep.build_groups                DeepMath-103K -> N-problem training groups (verl parquet)
  python -m data_prep.build_eval_sets             the evaluation benchmarks as N-problem groups
  python -m data_prep.estimate_difficulty         difficulty from base-model rollout lengths (the paper's proxy)
  python -m data_prep.calibrate_budget            the token budget from a base model's lengths (Algorithm 3)
  (in a checkout, `python data_prep/build_groups.py ...` runs the same commands)
  python -m recipe_bcr toy --preconditions out=DIR
                                                  is a toy base in the paper's regime (hydra_configs/paper.yaml)

the output folder is out=DIR in every command that writes one"""


def yaml_keys_help(name: str) -> str:
    """The keys of hydra_configs/<name>.yaml as `dotted.key=default  comment` lines, read at run time so that
    the help follows the file (its comments are the documentation)."""
    try:
        text = Path(str(resources.files("hydra_configs") / f"{name}.yaml")).read_text(encoding="utf-8")
    except ModuleNotFoundError:  # a broken install: the doctor must still run and say why
        return "  (hydra_configs is not importable here: `python -m recipe_bcr doctor` says how to fix the install)"
    lines: list[list[str]] = []
    path: list[tuple[int, str]] = []
    for raw in text.splitlines():
        m = re.match(r"^(\s*)([\w.@-]+):\s*(.*?)\s*(?:#\s?(.*))?$", raw)
        if not m:
            c = re.match(r"^\s+#\s?(.*)$", raw)  # an indented comment continues the entry above
            if c and lines:
                lines[-1][1] += " " + c.group(1).strip()
            continue
        indent, key, value, comment = len(m.group(1)), m.group(2), m.group(3), (m.group(4) or "").strip()
        path = [(i, k) for i, k in path if i < indent] + [(indent, key)]
        if value and key != "defaults":
            lines.append([".".join(k for _, k in path) + "=" + value, comment])
    width = min(44, max(len(k) for k, _ in lines) + 2)
    return "\n".join(f"  {k:<{width - 1}} {c}".rstrip() for k, c in lines)


def _command_keys_help() -> str:
    from recipe_bcr.miniature.paper.command import COMMAND_KEYS

    return "\n".join(f"  {k:<43} {v}" for k, v in COMMAND_KEYS.items())


def _out_and_rest(args: list[str]) -> tuple[str | None, list[str]]:
    """Take `out=DIR` from a command's arguments (main has refused the old `--out DIR` already)."""
    out = [a for a in args if a.startswith("out=")]
    return (out[-1][4:] if out else None), [a for a in args if not a.startswith("out=")]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m recipe_bcr",
        description="bcr-recipe utilities",
        epilog=OTHER_COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="{doctor,demo,paper,toy,gpu-check}")
    doctor = sub.add_parser(
        "doctor",
        help="check that verl + Hydra will run +recipe=bcr, and say how to fix what is not",
        usage="python -m recipe_bcr doctor [bcr_device=gpu|cpu [bcr_runtime=vllm|hf]]",
    )
    doctor.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="bcr_device=gpu|cpu [bcr_runtime=vllm|hf]: the run to check for (fails where it cannot run)",
    )
    demo = sub.add_parser(
        "demo",
        help="the whole pipeline in miniature on CPU: data, GRPO training, merge, evaluation",
        usage="python -m recipe_bcr demo [out=DIR] [--rollout {hf,vllm}]",
    )
    demo.add_argument("args", nargs="*", metavar="out=DIR", help="output folder (default: demo_out)")
    demo.add_argument(
        "--rollout",
        choices=["hf", "vllm"],
        default=None,
        help="verl rollout engine of the training stage (default: hydra_configs/demo.yaml, hf)",
    )
    paper = sub.add_parser(
        "paper",
        help="the paper's tables, ablations and findings in miniature on CPU (toy task): GRPO runs, "
        "evaluation at N=1..5, report.md",
        usage="python -m recipe_bcr paper [out=DIR] [registration=paper_v3|paper] [part=...] [key=value ...] [--ship RUN]",
        epilog="out=DIR: output folder (default: paper_out); a rerun resumes run by run (a run stopped half way, from its last "
        "checkpoint).\n"
        "the command's keys:\n" + _command_keys_help() + "\n"
        "keys of the third miniature (hydra_configs/paper_v3.yaml, pre-registered: sizes may be lowered for a smoke "
        "run, thresholds and rules never; registration=paper reads hydra_configs/paper.yaml's):\n"
        + yaml_keys_help("paper_v3"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    paper.add_argument(
        "args", nargs="*", metavar="key=value", help="out=DIR, the command's keys and the registration's YAML overrides"
    )
    paper.add_argument(
        "--ship",
        metavar="RUN",
        default=None,
        help="then commit that run's model (e.g. bcr_n3_s0) as the demo's trained model, with provenance",
    )
    toy = sub.add_parser(
        "toy",
        help="build (or reuse) the tiny warm-started Qwen3 and write toy training data; "
        "--preconditions: measure a toy base against paper.yaml's preconditions",
        usage="python -m recipe_bcr toy [out=DIR] [key=value ...] [--rebuild] [--ship] [--preconditions]",
    )
    toy.add_argument(
        "args",
        nargs="*",
        metavar="key=value",
        help="out=DIR (default: data/bcr_toy; toy_preconditions with --preconditions) and toy.yaml "
        "overrides, e.g. config=toy_verbose data.n=2 model.sft_steps=300",
    )
    toy.add_argument(
        "--rebuild", action="store_true", help="build the model even when the cache or the committed copy has it"
    )
    toy.add_argument(
        "--ship",
        action="store_true",
        help="replace the committed warm start (recipe_bcr/miniature/resources/toy_model) with it",
    )
    toy.add_argument(
        "--preconditions",
        action="store_true",
        help="measure the toy base against hydra_configs/paper.yaml's pre-registered preconditions "
        "-> DIR/preconditions.json",
    )
    gpu = sub.add_parser(
        "gpu-check",
        help="on a GPU machine: train and evaluate the toy model through the rollout "
        "engines with the paper's GPU settings, one verdict per stage (~10 min)",
        usage="python -m recipe_bcr gpu-check [out=DIR] [--device {gpu,cpu}] [--steps N] [--runtimes {vllm,hf} ...]",
    )
    gpu.add_argument("args", nargs="*", metavar="out=DIR", help="output folder (default: gpu_check_out)")
    gpu.add_argument("--device", choices=["gpu", "cpu"], default="gpu", help="bcr_device (cpu: the same stages here)")
    gpu.add_argument("--steps", type=int, default=3, help="GRPO steps per rollout engine")
    gpu.add_argument(
        "--runtimes",
        nargs="+",
        choices=["vllm", "hf"],
        default=["vllm", "hf"],
        help="rollout engines to check (default both; `--runtimes hf` on a machine without vLLM)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = _parser()
    command = next((a for a in argv if not a.startswith("-")), None)
    try:
        refuse_renamed(argv, f"python -m recipe_bcr {command or ''}".strip())
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args = ap.parse_args(argv)
    from recipe_bcr.verl_ext.quiet import hide_missing_engine_warnings

    hide_missing_engine_warnings()
    if args.command == "doctor":
        from recipe_bcr.commands.doctor import run

        return run(args.overrides)
    out, rest = _out_and_rest(list(args.args))
    if args.command in ("demo", "gpu-check") and rest:
        ap.error(f"{args.command} takes out=DIR only, not {rest}")
    if args.command == "toy":
        from recipe_bcr.miniature import toy_command as toy

        if args.preconditions:
            return toy.run_preconditions(out or "toy_preconditions", rest)
        return toy.run_toy(out or "data/bcr_toy", rest, args.rebuild, args.ship)
    if args.command == "paper":
        from recipe_bcr.miniature.paper.command import run_paper

        return run_paper(out or "paper_out", rest, args.ship)
    if args.command == "gpu-check":
        from recipe_bcr.miniature.gpu_check import run_gpu_check

        return run_gpu_check(out or "gpu_check_out", args.device, args.steps, tuple(args.runtimes))
    from recipe_bcr.miniature.demo import run_demo

    return run_demo(out or "demo_out", args.rollout)


if __name__ == "__main__":
    sys.exit(main())
