"""`python -m recipe_bcr {doctor,demo}`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m recipe_bcr", description="bcr-recipe utilities")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check that verl + Hydra will run +recipe=bcr, and say how to fix what is not")
    demo = sub.add_parser("demo", help="offline end-to-end demo on the bundled data (no GPU)")
    demo.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    args = ap.parse_args(argv)
    if args.command == "doctor":
        from recipe_bcr.doctor import run

        return run()
    from recipe_bcr.demo import run_demo

    return run_demo(args.out)


if __name__ == "__main__":
    sys.exit(main())
