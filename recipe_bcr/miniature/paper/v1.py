"""`python -m recipe_bcr paper config=paper_v1 out=DIR [key=value ...]`: the FIRST miniature (benchmarks/paper_v1/,
hydra_configs/paper_v1.yaml; its mechanism never engaged, see that report's notice), kept so that its committed
report stays reproducible. The second miniature is `python -m recipe_bcr paper` (recipe_bcr/miniature/paper/command.py).

On the toy task (recipe_bcr/miniature/toy) and the CPU runtime, each stage through the product's own
commands, as a user would run them:
1. the warm-started model (the "base") of the toy config `toy`, its preconditions (is it in the
   paper's regime? recipe_bcr/miniature/toy/preconditions.py, thresholds pre-registered in paper.yaml), toy
   data at N=3 (group prompt) and N=1 (single prompt);
2. GRPO runs through the stock `python -m verl.trainer.main_ppo +recipe=bcr_toy`: the N=1
   baseline (single-problem prompt, a budget that never binds), BCR at N=3 under B = N x
   tokens_per_problem, per seed; the budget ablation (B scaled as 4096/5120/6144 are to 5120)
   and the reward ablation (bcr_reward presets len_2_1_1, len_5_1_1); each merged with
   `python -m verl.model_merger merge`;
3. `python -m recipe_bcr.eval` for every model (N=1..5 for the main three, N=1 for ablations);
4. tables, figures and the report (recipe_bcr.miniature.paper.report).
Every stage whose output exists is skipped, so a rerun resumes. Sizes: hydra_configs/paper_v1.yaml.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recipe_bcr.miniature.paper.report import write_report
from recipe_bcr.miniature.stages import Run, evaluate, train_group_count, train_run
from recipe_bcr.miniature.toy.model import RESOURCES, ensure_model, load_specs
from recipe_bcr.miniature.toy.preconditions import table as precondition_table
from recipe_bcr.miniature.toy.task import write_toy_benchmark, write_toy_data
from recipe_bcr.miniature.toy_command import measure_preconditions


def load_config(overrides: list[str]) -> dict[str, Any]:
    base = OmegaConf.load(Path(str(resources.files("hydra_configs") / "paper_v1.yaml")))
    try:
        cfg = OmegaConf.merge(base, OmegaConf.from_dotlist(overrides))
    except Exception as e:  # omegaconf raises several types for a bad dotlist
        raise ValueError(f"hydra_configs/paper_v1.yaml with overrides {overrides}: {e}") from None
    raw = OmegaConf.to_container(cfg, resolve=True)
    unknown = sorted(set(raw) - set(base.keys()))
    if unknown:
        raise ValueError(f"hydra_configs/paper_v1.yaml has no key(s) {unknown}")
    return raw


def plan(cfg: dict[str, Any]) -> list[Run]:
    """Every training run of the paper command, the main comparison first."""
    n, tpp = int(cfg["bcr"]["n"]), float(cfg["bcr"]["tokens_per_problem"])
    rule = round(n * tpp)
    runs = []
    for s in cfg["seeds"]:
        runs.append(Run(f"baseline_n1_s{s}", "main", 1, int(cfg["baseline"]["budget"]), s, single=True))
        runs.append(Run(f"bcr_n{n}_s{s}", "main", n, rule, s))
    for s in cfg["ablation_seeds"]:
        for scale in cfg["budget_ablation"]:
            budget = round(rule * float(scale))
            if budget != rule or s not in cfg["seeds"]:
                runs.append(Run(f"bcr_n{n}_b{budget}_s{s}", "budget", n, budget, s))
        for preset in cfg["reward_ablation"]:
            runs.append(Run(f"bcr_n{n}_{preset}_s{s}", "reward", n, rule, s, reward=preset))
    return runs


def _train(run: Run, root: Path, model: Path, data: dict[str, Path], cfg: dict[str, Any]) -> Path:
    return train_run(run, root, model, data["single" if run.single else "group"], cfg, int(cfg["train_steps"]))


def _evaluate(label: str, model: Path, ns: list[int], root: Path, bench: Path, cfg: dict[str, Any]) -> Path:
    return evaluate(label, model, ns, root, bench, cfg["eval"])


def run_paper_v1(out: str, overrides: list[str]) -> int:
    try:
        cfg = load_config(overrides)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    root = Path(out).resolve()
    made_with = root / "paper_config.json"
    if made_with.exists():  # resuming: finished runs are reused, so they must be these settings' runs
        old = json.loads(made_with.read_text())
        changed = sorted(k for k in set(old) | set(cfg) if old.get(k) != cfg.get(k))
        if changed:
            print(
                f"error: {root} holds a paper run made with other settings ({', '.join(changed)} differ; "
                f"see {made_with}); resuming would mix its runs into this one. Use another out=DIR, or delete it.",
                file=sys.stderr,
            )
            return 2
    root.mkdir(parents=True, exist_ok=True)
    made_with.write_text(json.dumps(cfg, indent=1))
    t0 = time.time()
    print(f"[1/4] the warm-started toy model ({cfg['toy']}), its preconditions and data -> {root / 'data'}")
    toy_overrides = [f"config={cfg['toy']}"]
    task, mspec, toy = load_specs(toy_overrides)
    model = ensure_model(
        Path(toy["cache_dir"]), task, mspec, model_dir=toy["model_dir"], shipped=RESOURCES / toy["shipped"]
    )
    if not (root / "preconditions.json").exists():
        measure_preconditions(root, toy_overrides, cfg["preconditions"])
    pre = json.loads((root / "preconditions.json").read_text())
    print(precondition_table(pre["rows"]))
    if cfg["bcr"]["tokens_per_problem"] == "calibrated":  # Algorithm 3 on this base: lambda x L_avg per problem
        d = pre["details"]
        cfg = {**cfg, "bcr": {**cfg["bcr"], "tokens_per_problem": round(d["compression"] * d["l_avg_n1"], 2)}}
        print(f"      budget from calibration: {cfg['bcr']['tokens_per_problem']} tokens per problem")
    runs = plan(cfg)
    d = toy["data"]
    train_groups = train_group_count(d, cfg)
    data = {"group": root / "data" / f"group_n{cfg['bcr']['n']}", "single": root / "data" / "single_n1"}
    write_toy_data(data["group"], int(cfg["bcr"]["n"]), train_groups, d["val_groups"], d["seed"], task)
    write_toy_data(data["single"], 1, train_groups, d["val_groups"], d["seed"], task, prompt_style="single")
    bench = write_toy_benchmark(
        root / "data" / "toy_benchmark.jsonl", int(cfg["eval"]["problems"]), int(cfg["eval"]["seed"]), task
    )

    print(f"[2/4] {len(runs)} GRPO runs of {cfg['train_steps']} steps (stock main_ppo, CPU) -> {root / 'runs'}")
    models, spent_train = {}, []
    for k, run in enumerate(runs, 1):
        t = time.time()
        models[run.name] = _train(run, root, model, data, cfg)
        if time.time() - t > 60:  # a run trained now, not one done earlier
            spent_train.append(time.time() - t)
        eta = (
            f"{statistics.fmean(spent_train) * (len(runs) - k) / 60:.0f} min more"
            if spent_train
            else "after the next run"
        )
        print(f"      [{k}/{len(runs)} runs] {(time.time() - t0) / 60:.1f} min so far; training ETA {eta}", flush=True)

    print(f"[3/4] evaluation: base and every trained model -> {root / 'eval'}")
    ns = [int(n) for n in cfg["eval"]["n"]]
    evals = {"base": _evaluate("base", model, ns, root, bench, cfg)}
    for k, run in enumerate(runs, 1):
        evals[run.name] = _evaluate(run.name, models[run.name], ns if run.group == "main" else [1], root, bench, cfg)
        print(f"      [{k}/{len(runs)} trained models evaluated] {(time.time() - t0) / 60:.1f} min so far", flush=True)

    print(f"[4/4] tables, figures, report -> {root / 'report.md'}")
    timing = root / "wall_seconds.json"  # every invocation's wall time: a resumed run reports the sum
    spent = (json.loads(timing.read_text()) if timing.exists() else []) + [round(time.time() - t0, 1)]
    timing.write_text(json.dumps(spent))
    report = write_report(root, cfg, runs, evals, sum(spent), overrides)
    print(report.read_text())
    print(f"done in {spent[-1]:.0f} s ({sum(spent):.0f} s over {len(spent)} invocation(s)): {report}")
    return 0
