"""How one answer's check travels through the grading modules, and the public cases' agreement.

For every case of the public grader cases (`data/grader_cases/public_equivalence_cases.jsonl` under the
shared folder, `BCR_SHARED` or `../shared`), `Verifier.check(pred, gold)` runs under `sys.setprofile`,
with the readers' caches emptied before each check (a cold check: the longest path) and the symbolic
pool warm (its verdict cache emptied too). Every Python call event whose function lives in a
`recipe_bcr.grading` module is one step of the path; calls into other code (the standard library,
SymPy) are not steps, and the caller of a step is the nearest `recipe_bcr.grading` frame below it.
Only the calling thread is traced: the symbolic worker processes' work is not part of the path.

Units of the path: each `recipe_bcr.grading` module, except that (1) the answer reader is one class
(`answers.tree._Reader`) whose methods are split over `tree.py` and the `read_*.py` files for their size, so those
six modules are one unit, `answers.reader`; (2) `answers/node.py` is the plain data every stage reads (a node's
constructor, its structural reads, and `Fact` lookups of facts already kept on it): a call into it is no step,
but when a `Fact` is first computed, the computing module's frame is a step like any other. `--strict` counts
every module as its own unit, node.py included (every cursor method, node constructor and fact lookup is then a
step; that count is printed for comparison, it is not the metric); `--with-node` keeps the reader one unit and
makes node.py a unit of its own.

For each check it counts:
- **re-entries**: calls into unit M from another unit, when M was already entered in this check and
  is not on the call stack now (control had left M and comes back to it);
- **callbacks**: calls into unit M from another unit while M is on the call stack below the caller
  (a cycle between units; a generator of one unit consumed by another counts as one).

It prints each count's median, 90th percentile and maximum over the checks, and the worst paths (the
modules entered, in order, repeats of the module just left collapsed). With `--completions` it also
traces `score_completion` (the reward's path) over whole completions (one per case, the prediction boxed), and
`--agreement` prints the verdicts against the cases: agreement over the unambiguous cases, and false
credit (a case credited whose source says it is not equivalent), as tests/test_verify.py judges them.

    python benchmarks/bench_grader_path.py [--agreement] [--completions] [--strict | --with-node] [--worst 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
from pathlib import Path

from recipe_bcr.grading.verify import Verifier

SHARED = Path(os.environ.get("BCR_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CASES = SHARED / "data/grader_cases/public_equivalence_cases.jsonl"
PACKAGE = "recipe_bcr.grading"
# public cases whose source's verdict the grader reverses on purpose (tests/test_verify.py's OVERRULED)
OVERRULED = {"eq-0115", "eq-0208"}


def cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def clear_caches() -> None:
    """Empty every functools cache of the grading modules, so that each check reads its answers afresh."""
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE):
            continue
        for key, value in list(vars(module).items()):
            if hasattr(value, "cache_clear"):
                value.cache_clear()
            elif key == "_CACHE" and isinstance(value, dict):
                value.clear()


# The answer reader is one class (tree._Reader) whose methods are split over these modules for their size: a
# call between them is a call within the reader.
READER = {
    "answers.tree",
    "answers.read_base",
    "answers.read_numbers",
    "answers.read_functions",
    "answers.read_structures",
    "answers.read_text",
}
DATA = {"answers.node"}  # plain data: a call into it (a node built, its children walked) is no step
STRICT = False  # --strict: every module is its own unit, node.py included
WITH_NODE = False  # --with-node: the reader one unit, node.py a unit of its own


def unit(name: str) -> str | None:
    """The unit of the path a function of module `name` belongs to; None outside the grading package."""
    if not name.startswith(PACKAGE + "."):
        return None
    module = name[len(PACKAGE) + 1 :]
    if STRICT:
        return module
    if module in DATA and not WITH_NODE:
        return None
    return "answers.reader" if module in READER else module


class PathTracer:
    """The modules one call enters, with its re-entries and callbacks (see the module docstring)."""

    def __init__(self) -> None:
        self.stack: list[str | None] = []  # per Python frame: its grading module, or None
        self.entered: set[str] = set()
        self.path: list[str] = []
        self.reentries = 0
        self.callbacks = 0

    def _caller(self) -> str | None:
        return next((m for m in reversed(self.stack) if m is not None), None)

    def profile(self, frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event == "call":
            module = unit(frame.f_globals.get("__name__", ""))
            if module is not None:
                caller = self._caller()
                if caller is not None and caller != module:
                    if module in self.stack:
                        self.callbacks += 1
                    elif module in self.entered:
                        self.reentries += 1
                if not self.path or self.path[-1] != module:
                    self.path.append(module)
                self.entered.add(module)
            self.stack.append(module)
        elif event == "return" and self.stack:
            self.stack.pop()

    def run(self, fn, *args):  # noqa: ANN001, ANN201
        sys.setprofile(self.profile)
        try:
            return fn(*args)
        finally:
            sys.setprofile(None)


def trace(fn, *args) -> tuple[PathTracer, object]:  # noqa: ANN001
    clear_caches()
    tracer = PathTracer()
    result = tracer.run(fn, *args)
    return tracer, result


def summary(label: str, tracers: list[tuple[str, PathTracer]], worst: int) -> None:
    for what in ("reentries", "callbacks"):
        values = sorted(getattr(t, what) for _, t in tracers)
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        print(
            f"{label}: {what} over {len(values)} checks: median {statistics.median(values):g}, "
            f"p90 {p90}, max {values[-1]}"
        )
    for case_id, tracer in sorted(tracers, key=lambda x: (-x[1].reentries, -x[1].callbacks))[:worst]:
        print(f"  {case_id}: {tracer.reentries} re-entries, {tracer.callbacks} callbacks: {' > '.join(tracer.path)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worst", type=int, default=5, help="how many of the longest paths to print")
    parser.add_argument("--agreement", action="store_true", help="also print agreement and false credit")
    parser.add_argument("--completions", action="store_true", help="also trace score_completion on completions")
    parser.add_argument("--strict", action="store_true", help="every module its own unit, node.py included")
    parser.add_argument("--with-node", action="store_true", help="the reader one unit, node.py one of its own")
    args = parser.parse_args()
    global STRICT, WITH_NODE
    STRICT, WITH_NODE = args.strict, args.with_node
    verifier = Verifier(timeout_s=30.0)
    rows = cases()
    for case in rows:  # warm: the pool's workers started, every import done
        verifier.check(case["pred"], case["gold"])
    gc.collect()
    tracers, verdicts = [], {}
    for case in rows:
        verifier._cache.clear()  # the symbolic verdicts too: each check asks its questions afresh
        tracer, verdict = trace(verifier.check, case["pred"], case["gold"])
        tracers.append((case["id"], tracer))
        verdicts[case["id"]] = verdict.correct
    summary("Verifier.check", tracers, args.worst)
    if args.completions:
        from recipe_bcr.grading.reward import score_completion

        completion_tracers = []
        for case in rows:
            verifier._cache.clear()
            text = f"The answer is $\\boxed{{{case['pred']}}}$."
            tracer, _ = trace(score_completion, text, [case["gold"]], verifier)
            completion_tracers.append((case["id"], tracer))
        summary("score_completion", completion_tracers, args.worst)
    if args.agreement:
        judged = [c for c in rows if not c["ambiguous"] and c["id"] not in OVERRULED]
        agree = sum(verdicts[c["id"]] == c["equivalent"] for c in judged)
        false_credit = [c["id"] for c in rows if verdicts[c["id"]] and not c["equivalent"]]
        print(f"agreement {agree / len(judged):.3f} ({agree} of {len(judged)} unambiguous, overruled left out)")
        everything = sum(verdicts[c["id"]] == c["equivalent"] for c in rows)
        print(f"agreement over all {len(rows)} cases {everything / len(rows):.3f}")
        print(f"false credit {len(false_credit)}: {false_credit}")
    verifier.close()


if __name__ == "__main__":
    main()
