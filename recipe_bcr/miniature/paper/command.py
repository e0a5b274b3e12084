"""`python -m recipe_bcr paper out=DIR [part=...] [key=value ...]`: the paper in miniature, pre-registered. By default
(`registration=paper_v3`) the third registration (issue 52, hydra_configs/paper_v3.yaml): part=toy_pilot, then
part=steps_pilot (after the base's preconditions), then main / ablations on the steps the steps pilot chose, every arm
evaluated at every N, judged by judge_v3. With `registration=paper`, the second (issue 35, hydra_configs/paper.yaml),
whose pilot is part=pilot.

Stages, each skipped when its output exists in DIR, so a rerun resumes run by run (a run stopped half
way, from its last checkpoint, every 10 steps):
(a) the base's preconditions (`python -m recipe_bcr toy --preconditions`'s measurement -> base_preconditions.json,
    or the one already in DIR if the same commit of paper.yaml judged it); a missed precondition stops here, before
    any training, with findings.json all "not interpretable" and the diagnosis, unless
    allow_missed_preconditions=true (recorded; the findings stay not interpretable);
(b) B, Algorithm 3 at the lambda the measurement chose (its `budget_n3`);
(c) part=main: BCR at N=3 under B and its three controls, at every registered seed (runs/<name>/: run.json,
    metrics.jsonl, verl's rollout dump); part=ablations: the budget scales and the two length penalties;
    part=pilot: BCR at the first seed only, then its gates (pilot.json): a pilot may lower train_steps for the
    runs after it, never a threshold;
(d) evaluation (`python -m recipe_bcr.eval`) of the base and every main run at N = eval.n, of every ablation run at
    N=1, on eval.problems toy problems: each run as soon as it is trained, so a run with its run.json, metrics.jsonl
    and evaluation committed is done on any machine (its model, ignored by git, is not needed again);
(e) findings.json and report.md (paper_findings, paper_writeup) from everything in DIR; part=findings does only this,
    so a committed folder (benchmarks/paper/: run metrics, evaluation samples and summaries, no models) is judged
    again by the same code.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.paper.pilots import (
    accepted_toy,
    accuracy_n1,
    baseline_runs,
    judge_toy,
    plateau_step,
    read_steps,
    steps_runs,
    write_json,
)
from recipe_bcr.miniature.stages import Run, at_once, evaluate, recorded, train_run, write_data
from recipe_bcr.verl_ext.threads import usable_cores

# Keys of the command itself (not of paper.yaml): what to run, and whether a missed precondition stops it
COMMAND_KEYS = {
    "part": "main (default): BCR and its three controls, evaluated and judged | ablations: the budget scales and "
    "the length penalties, then the findings again | pilot: one BCR seed and its gates | findings: judge what DIR "
    "holds again, training and evaluating nothing (a committed folder's findings.json and report.md re-derived)",
    "allow_missed_preconditions": "false (default): stop before training when the base misses a precondition | "
    "true: train anyway (recorded; every verdict stays not interpretable)",
    "jobs": "2 (default): GRPO runs and evaluations at once, each its own processes and its share of the cores "
    "(each run's seconds: runs/*/run.json) | 1: one at a time",
    "registration": "paper_v3 (default): the third miniature, hydra_configs/paper_v3.yaml, whose parts begin with "
    "toy_pilot and steps_pilot | paper: the second (hydra_configs/paper.yaml)",
}
PARTS = ("main", "ablations", "pilot", "findings", "toy_pilot", "steps_pilot")
THIRD_PARTS = ("toy_pilot", "steps_pilot")  # the third registration's pilots; `pilot` is the second's
# torch threads of the evaluation harness unless paper.yaml sets `eval.threads`: on 2 shared cores the toy model
# generated 400-600 tokens/s on one thread against 13 on two spinning OpenMP threads (issue 35's report)
EVAL_THREADS = 1
# paper.yaml keys that judge the run: never overridden from the command line (a new commit of paper.yaml moves them)
JUDGING = (
    "preconditions.thresholds",
    "preconditions.compression_grid",
    "preconditions.fit_target",
    "gates",
    "findings",
    "toy",
    "toy_pilot.accept",
    "steps.max_slope_pts",
    "steps.window",
)


def split_command_keys(overrides: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(command keys with their defaults, paper.yaml overrides)."""
    keys: dict[str, Any] = {"part": "main", "allow_missed_preconditions": False, "jobs": 2, "registration": "paper_v3"}
    rest = []
    for o in overrides:
        k, _, v = o.partition("=")
        if k == "allow_missed_preconditions":
            keys[k] = v.lower() in ("true", "1", "yes")
        elif k == "jobs":
            if not (v.isdigit() and int(v) >= 1):
                raise ValueError(f"jobs={v}: want a whole number >= 1 (runs trained and evaluated at once)")
            keys[k] = int(v)
        elif k in keys:
            keys[k] = v
        else:
            rest.append(o)
    if keys["part"] not in PARTS:
        raise ValueError(f"part={keys['part']}: want one of {', '.join(PARTS)}")
    third = keys["registration"] == "paper_v3"
    if (keys["part"] in THIRD_PARTS) != third and keys["part"] in (*THIRD_PARTS, "pilot"):
        raise ValueError(
            f"part={keys['part']} belongs to the {'second' if keys['part'] == 'pilot' else 'third'} registration "
            f"(registration={'paper' if keys['part'] == 'pilot' else 'paper_v3'})"
        )
    return keys, rest


def load_config(overrides: list[str], name: str = "paper") -> dict[str, Any]:
    """hydra_configs/<name>.yaml with size overrides; refuses unknown keys, a judging key, and a train_steps above
    the registered one (a pilot may lower it, never raise it)."""
    from recipe_bcr.miniature.toy.preconditions import load_preregistration

    registered = load_preregistration(name=name)
    for o in overrides:
        key = o.partition("=")[0]
        node: Any = registered
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ValueError(f"hydra_configs/{name}.yaml has no key {key!r} (`python -m recipe_bcr paper --help`)")
            node = node[part]
        if any(key == j or key.startswith(j + ".") for j in JUDGING):
            raise ValueError(
                f"{key} is pre-registered in hydra_configs/{name}.yaml: it moves only in a new commit of that file, "
                "made before the run it judges"
            )
    cfg = load_preregistration(overrides, name)
    if "train_steps" in cfg and int(cfg["train_steps"]) > int(registered["train_steps"]):
        raise ValueError(
            f"train_steps={cfg['train_steps']}: the registered number is at most {registered['train_steps']} "
            "(a pilot may lower it, never raise it)"
        )
    return cfg


def plan_arms(cfg: dict[str, Any], budget: int, caps: dict[int, int] | None = None) -> list[Run]:
    """The miniature's runs for BCR's measured budget B: per seed, BCR at N=3 and the controls that tell budget
    competition from truncation (N=1 under a hard cap of B/N, N=2 at 2B/3, the never-binding N=1 baseline; the third
    registration also an N=1 cap by chain length, `budget: oracle`, from `caps`), then the budget and length-penalty
    ablations at every seed."""
    n = int(cfg["bcr"]["n"])
    rule = {"per_problem": lambda: round(budget / n), "two_thirds": lambda: round(2 * budget / 3)}
    runs = []
    for s in cfg["seeds"]:
        runs.append(Run(f"bcr_n{n}_s{s}", "main", n, budget, s))
        for name, c in cfg["controls"].items():
            if s not in c.get("seeds", cfg["seeds"]):  # the third registration gives each control its own seeds
                continue
            single = c["prompt"] == "single"
            if c["budget"] == "oracle":
                if not caps:
                    raise ValueError(f"controls.{name}: budget oracle needs the caps by chain length (oracle_cap.py)")
                oracle = tuple(sorted(caps.items()))
                runs.append(Run(f"{name}_s{s}", "control", 1, max(caps.values()), s, single=single, token_caps=oracle))
                continue
            b = rule[c["budget"]]() if isinstance(c["budget"], str) else int(c["budget"])
            runs.append(Run(f"{name}_s{s}", "control", int(c["n"]), b, s, single=single))
    for s in cfg["ablations"].get("seeds", cfg["seeds"]):
        for scale in cfg["ablations"]["budget_scales"]:
            b = round(budget * float(scale))
            if b != budget:
                runs.append(Run(f"bcr_n{n}_b{b}_s{s}", "budget", n, b, s))
        for preset in cfg["ablations"]["reward"]:
            runs.append(Run(f"bcr_n{n}_{preset}_s{s}", "reward", n, budget, s, reward=preset))
    return runs


def plan_part(cfg: dict[str, Any], budget: int, part: str, caps: dict[int, int] | None = None) -> list[Run]:
    """The runs one part trains: main (BCR and the controls), ablations, pilot (BCR at the first seed) or none
    (findings)."""
    runs = plan_arms(cfg, budget, caps)
    if part == "findings":
        return []
    if part == "pilot":
        return [r for r in runs if r.group == "main"][:1]
    groups = ("main", "control") if part == "main" else ("budget", "reward")
    return [r for r in runs if r.group in groups]


def base_preconditions(root: Path, overrides: list[str], key: str | None, name: str = "paper") -> dict[str, Any]:
    """Stage (a): DIR/base_preconditions.json, measured now or read back when the same registration (the YAML's
    content, `registration`) judged the same base (`key`: its settings key)."""
    from recipe_bcr.miniature.toy.preconditions import registration
    from recipe_bcr.miniature.toy_command import measure_base

    ident = registration(name=name)["id"]
    path = root / "base_preconditions.json"
    if path.exists():
        pre = json.loads(path.read_text())
        if (pre.get("registration") or {}).get("id") != ident:
            raise ValueError(
                f"{path} was judged by registration {(pre.get('registration') or {}).get('id')}, paper.yaml is "
                f"registration {ident}: delete it to measure the base again, or use another out=DIR"
            )
        if pre.get("key") != key:
            raise ValueError(
                f"{path} measured the toy base with settings key {pre.get('key')}, the base this run trains has "
                f"{key}: delete it to measure the base again, or use another out=DIR"
            )
        print(f"      done earlier ({path})")
        return pre
    sized = [o for o in overrides if o.startswith("preconditions.")]
    return measure_base(root, [f"registration={name}", *sized] if name != "paper" else sized)


def _state(root: Path, cfg: dict[str, Any], reg: dict[str, Any]) -> dict[str, Any]:
    """DIR/plan.json: the launch time and the settings of the first invocation; a later part or a rerun with other
    settings (train_steps aside: each run records its own) is refused, so no folder mixes two experiments."""
    from recipe_bcr.miniature.toy.preconditions import launched_at

    path = root / "plan.json"
    settings = {k: v for k, v in cfg.items() if k != "train_steps"}
    if path.exists():
        state = json.loads(path.read_text())
        old = state["settings"]
        changed = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
        if changed or state["registration"]["id"] != reg["id"]:
            raise ValueError(
                f"{root} holds a paper run made with other settings ({', '.join(changed) or 'registration'} "
                f"differ; see {path}): use another out=DIR, or delete it"
            )
        return state
    state = {"launched_at": launched_at(), "registration": reg, "settings": settings}
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=1) + "\n")
    return state


def _counter(model: Path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def write_findings(
    root: Path, cfg: dict[str, Any], pre: dict[str, Any], model: Path, context: dict[str, Any], made_by: str
) -> Path:
    """Stage (e): judge what DIR holds and write findings.json and report.md, by the rules of the registration
    `cfg` is (the third's has a toy pilot)."""
    if "toy_pilot" in cfg:
        from recipe_bcr.miniature.paper import judge_v3, writeup_v3

        return writeup_v3.write(root, judge_v3.judge(root, cfg, pre, _counter(model), context), made_by)
    from recipe_bcr.miniature.paper import findings as paper_findings
    from recipe_bcr.miniature.paper import writeup as paper_writeup

    result = paper_findings.judge(root, cfg, pre, _counter(model), context)
    return paper_writeup.write(root, result, made_by)


def write_pilot(root: Path, run: Run, cfg: dict[str, Any], context: dict[str, Any]) -> None:
    """A pilot's gates, read from its run's metrics, printed and written to DIR/pilot.json."""
    from recipe_bcr.miniature.paper.gates import gates_table
    from recipe_bcr.miniature.paper.rules import gates

    rows = [json.loads(x) for x in (root / "runs" / run.name / "metrics.jsonl").read_text().splitlines() if x]
    result = [{"run": run.name, "n": run.n, "steps": len(rows), "gates": gates(rows, run.n, cfg["gates"])}]
    (root / "pilot.json").write_text(
        json.dumps({**context, "run": run.name, "gates": result[0]["gates"]}, indent=1) + "\n"
    )
    print(gates_table(result))
    print(f"pilot: gates {'all met' if result[0]['gates']['all_met'] else 'NOT all met'} -> {root / 'pilot.json'}")


def trained_then_evaluated(
    run: Run,
    root: Path,
    base: Path,
    data: Path,
    cfg: dict[str, Any],
    steps: int,
    threads: int,
    bench: Path,
    ns: list[int],
) -> Path:
    """One run trained and merged (`train_run`), then evaluated at the group sizes `ns` -> root/eval/<run>. A run that
    root records (run.json) and has evaluated is done even where its model is gone: what the findings read is kept
    in git run by run, and a new machine goes on from there."""
    done = root / "eval" / run.name
    if (done / "summary.json").exists():
        if recorded(run, root, steps):
            print(f"      {run.name}: trained and evaluated earlier ({done})")
            return done
        raise ValueError(
            f"{done} holds an evaluation of a run that {root / 'runs' / run.name / 'run.json'} does not record: "
            f"delete {done} to train and evaluate {run.name} again"
        )
    ev = cfg["eval"]
    hf = train_run(run, root, base, data, cfg, steps, threads)
    return evaluate(run.name, hf, ns, root, bench, ev, int(ev.get("threads", EVAL_THREADS)))


def part_work(
    root: Path,
    runs: list[Run],
    base: Path,
    data: dict[tuple, Path],
    cfg: dict[str, Any],
    steps: int,
    threads: int,
    bench: Path,
    with_base: bool,
    every_n: bool = False,
) -> list[tuple[str, Callable[[], Path]]]:
    """A part's stages for `at_once`: the base's evaluation (main part only), then each run trained and evaluated,
    BCR at every registered N, the controls and ablations at N=1 (what the second registration's F1, F4 and F5
    read); `every_n`: every arm at every N (the third's F2 compares BCR's fall over N with the baseline's)."""
    ev = cfg["eval"]
    ns = [int(n) for n in ev["n"]]
    todo = []
    if with_base:
        todo.append(
            ("base", partial(evaluate, "base", base, ns, root, bench, ev, int(ev.get("threads", EVAL_THREADS))))
        )
    for r in runs:
        at = ns if r.group == "main" or every_n else [1]
        todo.append(
            (r.name, partial(trained_then_evaluated, r, root, base, data[r.data_key], cfg, steps, threads, bench, at))
        )
    return todo


def run_part(out: str, keys: dict[str, Any], overrides: list[str], ship_name: str | None = None) -> int:
    """One part of the miniature in DIR (see the module docstring); returns the exit status."""
    from recipe_bcr.miniature.toy.model import RESOURCES, built_with, ensure_model, load_specs
    from recipe_bcr.miniature.toy.preconditions import load_preregistration, registration
    from recipe_bcr.miniature.toy.task import write_toy_benchmark

    root, part = Path(out).resolve(), keys["part"]
    absent = [f for f in ("plan.json", "base_preconditions.json") if not (root / f).exists()]
    if part == "findings" and absent:  # checked before anything is written: judging nothing would measure a base
        print(
            f"error: part=findings judges a folder a paper run left, and {root} has no {' or '.join(absent)}: "
            f"run `python -m recipe_bcr paper out={out} registration={keys['registration']}` first (or name such a "
            "folder, e.g. out=benchmarks/paper_v3)",
            file=sys.stderr,
        )
        return 2
    name = keys["registration"]
    third = name == "paper_v3"
    try:
        cfg = load_config(overrides, name)
        state = _state(root, cfg, registration(name=name))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    made_by = "python -m recipe_bcr paper " + " ".join(
        [f"out={out}", f"part={part}", f"jobs={keys['jobs']}", *([f"registration={name}"] if third else []), *overrides]
    )
    t0 = time.time()
    task, mspec, toy = load_specs([f"config={cfg['toy']}"])
    model = ensure_model(
        Path(toy["cache_dir"]), task, mspec, model_dir=toy["model_dir"], shipped=RESOURCES / toy["shipped"]
    )
    context = {
        "registration": state["registration"],
        "launched_at": state["launched_at"],
        "overrides": overrides,
        "allow_missed_preconditions": keys["allow_missed_preconditions"],
        "jobs": keys["jobs"],
        "train_steps": cfg.get("train_steps"),
        "train_steps_registered": load_preregistration(name=name).get("train_steps"),
        "budget": None,
        "stopped": None,
    }
    if part == "toy_pilot":
        return toy_pilot_part(root, cfg, model, toy, task, keys["jobs"], context, t0)
    try:  # the third registration's order, checked before the base is measured
        if third and part == "steps_pilot":
            accepted_toy(root)
        elif third and part in ("main", "ablations"):
            read_steps(root)
        elif third and part == "findings" and (root / "steps_pilot.json").exists():
            context["train_steps"] = read_steps(root)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"[1/5] the base's preconditions ({cfg['toy']}) -> {root / 'base_preconditions.json'}")
    try:
        pre = base_preconditions(root, overrides, built_with(model), name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    missed = [r["name"] for r in pre["rows"] if not r["met"]]
    if missed and not keys["allow_missed_preconditions"]:
        context["stopped"] = (
            f"the base misses {len(missed)} precondition(s) ({', '.join(missed)}): no GRPO run was made"
        )
        report = write_findings(root, cfg, pre, model, context, made_by)
        print(
            f"error: {context['stopped']}. The findings are not interpretable ({report.parent / 'findings.json'}); "
            "fix the task or the base, never a threshold (allow_missed_preconditions=true trains anyway).",
            file=sys.stderr,
        )
        return 3
    budget, lam = int(pre["details"]["budget_n3"]), float(pre["details"]["compression"])
    context["budget"] = {"B": budget, "lambda": lam, "l_avg_n1": pre["details"]["l_avg_n1"]}
    caps = None
    if any(c["budget"] == "oracle" for c in cfg["controls"].values()):
        from recipe_bcr.miniature.paper.oracle_cap import caps_for

        caps = caps_for(task, _counter(model), budget, int(cfg["bcr"]["n"]))
        context["oracle_caps"] = caps
    if part == "steps_pilot":
        return steps_pilot_part(root, cfg, model, toy, task, budget, keys["jobs"], context, t0)
    runs = plan_part(cfg, budget, part, caps)
    bcr_runs = [r.name for r in runs if r.group == "main"]
    if ship_name and (part != "main" or ship_name not in bcr_runs):
        print(
            f"error: --ship {ship_name}: part=main ships one of its BCR runs ({', '.join(bcr_runs)})", file=sys.stderr
        )
        return 2
    if part == "findings":
        print(f"[5/5] findings of what {root} holds (nothing trained or evaluated) -> findings.json, report.md")
        try:
            print(write_findings(root, cfg, pre, model, context, made_by).read_text())
        except ValueError as e:  # a record the rules read is missing
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    print(f"[2/5] B = {budget} (Algorithm 3 at lambda {lam}); part={part}: {len(runs)} run(s)")

    try:
        steps = read_steps(root) if third else int(cfg["train_steps"])
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    context["train_steps"], ev = steps, cfg["eval"]
    data = write_data(root, runs, toy["data"], {**cfg, "train_steps": steps}, task)
    bench = write_toy_benchmark(root / "data" / "toy_benchmark.jsonl", int(ev["problems"]), int(ev["seed"]), task)

    jobs = keys["jobs"]
    threads = max(1, usable_cores() // jobs)  # each run's training worker: its share of the cores
    timing = root / "wall_seconds.json"
    try:
        if part == "pilot":
            print(f"[3/5] {len(runs)} GRPO run(s) of {steps} steps -> {root / 'runs'}")
            at_once(
                jobs,
                [(r.name, partial(train_run, r, root, model, data[r.data_key], cfg, steps, threads)) for r in runs],
                t0,
            )
            write_pilot(root, runs[0], cfg, context)
            _add_time(timing, part, time.time() - t0)
            return 0
        print(
            f"[3/5] {len(runs)} GRPO run(s) of {steps} steps, {jobs} at once -> {root / 'runs'}\n"
            f"[4/5] each evaluated once trained, on {ev['problems']} problems -> {root / 'eval'}"
        )
        at_once(jobs, part_work(root, runs, model, data, cfg, steps, threads, bench, part == "main", third), t0)
        print(f"[5/5] findings -> {root / 'findings.json'}, {root / 'report.md'}")
        report = write_findings(root, cfg, pre, model, context, made_by)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _add_time(timing, part, time.time() - t0)
    print(report.read_text())
    if ship_name:
        from recipe_bcr.miniature.paper.ship import ship_run

        run = next(r for r in runs if r.name == ship_name)  # its model trained again where this machine lacks it
        train_run(run, root, model, data[run.data_key], cfg, steps, threads)
        print(f"the demo's trained model: {ship_run(root, ship_name)} (run {ship_name})")
    return 0


def toy_pilot_part(
    root: Path, cfg: dict[str, Any], model: Path, toy: dict[str, Any], task: Any, jobs: int, context: dict, t0: float
) -> int:
    """The third registration's toy pilot: the baseline alone at the pilot seeds to `steps.max`, each evaluated at N=1
    on the held-out questions, judged by `toy_pilot.accept` -> DIR/toy_pilot.json."""
    from recipe_bcr.miniature.toy.task import write_toy_benchmark

    runs, steps, ev = baseline_runs(cfg), int(cfg["steps"]["max"]), cfg["eval"]
    print(f"[toy pilot] {len(runs)} baseline run(s) of {steps} steps, then N=1 on {ev['problems']} held-out questions")
    data = write_data(root, runs, toy["data"], {**cfg, "train_steps": steps}, task)
    bench = write_toy_benchmark(root / "data" / "toy_benchmark.jsonl", int(ev["problems"]), int(ev["seed"]), task)
    threads = max(1, usable_cores() // jobs)
    at_once(
        jobs, part_work(root, runs, model, data, {**cfg, "eval": {**ev, "n": [1]}}, steps, threads, bench, False), t0
    )
    verdict = judge_toy({r.name: accuracy_n1(root / "eval" / r.name) for r in runs}, cfg["toy_pilot"])
    write_json(root / "toy_pilot.json", {**context, "steps": steps, "toy": cfg["toy"], **verdict})
    _add_time(root / "wall_seconds.json", "toy_pilot", time.time() - t0)
    print(f"toy pilot: N=1 accuracy {verdict['accuracy_n1']} -> {verdict['decision']} ({root / 'toy_pilot.json'})")
    return 0


def steps_pilot_part(
    root: Path,
    cfg: dict[str, Any],
    model: Path,
    toy: dict[str, Any],
    task: Any,
    budget: int,
    jobs: int,
    context: dict,
    t0: float,
) -> int:
    """The third registration's steps pilot: BCR at B and the toy pilot's baseline runs at the pilot seeds to
    `steps.max`; the steps rule on their metrics -> DIR/steps_pilot.json (the main part's steps)."""
    runs, steps = steps_runs(cfg, budget), int(cfg["steps"]["max"])
    print(f"[steps pilot] {len(runs)} run(s) of {steps} steps at B = {budget}")
    data = write_data(root, runs, toy["data"], {**cfg, "train_steps": steps}, task)
    threads = max(1, usable_cores() // jobs)
    at_once(
        jobs, [(r.name, partial(train_run, r, root, model, data[r.data_key], cfg, steps, threads)) for r in runs], t0
    )
    metrics = {r.name: _metrics(root / "runs" / r.name) for r in runs}
    chosen = plateau_step(metrics, cfg["steps"])
    write_json(root / "steps_pilot.json", {**context, "budget": budget, **chosen})
    _add_time(root / "wall_seconds.json", "steps_pilot", time.time() - t0)
    print(f"steps pilot: the main part trains {chosen['steps']} steps ({root / 'steps_pilot.json'})")
    return 0


def _metrics(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x.strip()]


def _add_time(path: Path, part: str, seconds: float) -> None:
    """wall_seconds.json: every invocation's wall time, per part (a resumed part reports the sum)."""
    spent = json.loads(path.read_text()) if path.exists() else {}
    spent.setdefault(part, []).append(round(seconds, 1))
    path.write_text(json.dumps(spent) + "\n")


def run_paper(out: str, overrides: list[str], ship_name: str | None = None) -> int:
    """`python -m recipe_bcr paper`: one part of the registration the keys name (the third by default)."""
    try:
        keys, rest = split_command_keys(overrides)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return run_part(out, keys, rest, ship_name)
