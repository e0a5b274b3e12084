"""LaTeX parse time, latex2sympy2_extended's own LL prediction against our two-stage prediction.

Parses every distinct answer string of the shared data (the bundled benchmarks' answers, the
public grader cases' golds and predictions, the DeepMath-shaped stand-in's final answers)
twice in plain LL mode and twice with recipe_bcr.grading.symbolic.latex_two_stage enabled, in this order,
checks that both give the same SymPy tree (srepr) or the same error for every string, and
prints the times. Also prints how long one symbolic worker takes to start (imports and
parser warm-up), which is how long a killed worker's replacement is away.

    python benchmarks/bench_latex_parse.py
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import sympy
from latex2sympy2_extended.latex2sympy2 import latex2sympy

from recipe_bcr.grading.symbolic import latex_two_stage
from recipe_bcr.grading.symbolic.pool import SymbolicPool

SHARED = Path(os.environ.get("BCR_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def corpus() -> list[str]:
    texts: set[str] = set()
    for path in sorted((SHARED / "data/benchmarks").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            for key in ("answer", "final_answer"):
                value = row.get(key)
                if isinstance(value, list):
                    texts.update(map(str, value))
                elif value is not None:
                    texts.add(str(value))
    for line in (SHARED / "data/grader_cases/public_equivalence_cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        texts.update((case["gold"], case["pred"]))
    stand_in = pd.read_parquet(SHARED / "data/train/deepmath_schema_substitute.parquet", columns=["final_answer"])
    texts.update(map(str, stand_in["final_answer"]))
    return sorted(texts)


def parse_all(texts: list[str]) -> tuple[float, dict[str, str]]:
    out = {}
    t0 = time.perf_counter()
    for text in texts:
        try:
            out[text] = sympy.srepr(latex2sympy(text))
        except Exception as e:  # noqa: BLE001 - the error is part of the result compared
            out[text] = f"error: {e}"
    return time.perf_counter() - t0, out


def main() -> None:
    texts = corpus()
    print(f"{len(texts)} distinct answer strings")
    ll = [parse_all(texts) for _ in range(2)]
    if not latex_two_stage.enable():
        raise SystemExit("latex2sympy2_extended's layout is not the known one: two-stage parsing is off")
    staged = [parse_all(texts) for _ in range(2)]
    latex_two_stage.disable()
    diffs = [t for t in texts if ll[1][1][t] != staged[1][1][t]]
    print(f"  LL (library default): {ll[0][0]:6.2f} s first pass, {ll[1][0]:6.2f} s second")
    print(f"  two-stage:            {staged[0][0]:6.2f} s first pass, {staged[1][0]:6.2f} s second")
    print(f"  speed-up (second passes): {ll[1][0] / staged[1][0]:.1f}x; strings parsed differently: {len(diffs)}")
    for text in diffs[:10]:
        print(f"    {text!r}: LL {ll[1][1][text][:60]!r} vs two-stage {staged[1][1][text][:60]!r}")

    pool = SymbolicPool(size=1)
    t0 = time.perf_counter()
    ready = pool.start(wait_s=120)
    print(f"symbolic worker start-up (imports + parser warm-up): {time.perf_counter() - t0:.2f} s ({ready} ready)")
    pool.close()


if __name__ == "__main__":
    main()
