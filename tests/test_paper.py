"""`python -m recipe_bcr paper`: the run plan, the report's tables and verdicts (on planted run
files), and a smoke run of the whole command at tiny sizes through the real verl and eval harness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper.report import write_report
from recipe_bcr.miniature.paper.v1 import load_config, plan
from recipe_bcr.miniature.stages import Run

REPO = Path(__file__).resolve().parents[1]


def test_plan_has_the_main_comparison_per_seed_and_the_ablations():
    cfg = load_config(["bcr.tokens_per_problem=28"])  # the default, `calibrated`, is resolved by run_paper
    runs = plan(cfg)
    rule = cfg["bcr"]["n"] * cfg["bcr"]["tokens_per_problem"]
    main = [r for r in runs if r.group == "main"]
    assert sorted((r.single, r.seed) for r in main) == sorted((s, x) for x in cfg["seeds"] for s in (True, False))
    assert all(r.n == 1 and r.budget == cfg["baseline"]["budget"] for r in main if r.single)
    assert all(r.n == cfg["bcr"]["n"] and r.budget == rule for r in main if not r.single)
    budgets = sorted(r.budget for r in runs if r.group == "budget")
    # as 4096 and 6144 are to 5120, per ablation seed; the rule budget itself is BCR's main run, not trained twice
    k = len(cfg["ablation_seeds"])
    assert budgets == [round(rule * 4096 / 5120)] * k + [round(rule * 6144 / 5120)] * k
    assert sorted(r.reward for r in runs if r.group == "reward") == sorted(cfg["reward_ablation"] * k)
    assert len({r.name for r in runs}) == len(runs)


def test_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="no key"):
        load_config(["train_step=3"])


def _plant_eval(d: Path, label: str, per_n: dict[int, tuple[float, float]], steps: bool, filler: int) -> Path:
    d.mkdir(parents=True)
    rows = [
        {"label": label, "benchmark": "Toy", "n": n, "acc": a, "acc_stderr": 0.01, "tokens_per_problem": t}
        for n, (a, t) in per_n.items()
    ]
    (d / "summary.json").write_text(json.dumps(rows))
    section = ("1 + 2 = 3. 3 + 1 = 4. " if steps else "") + "Wait, let me double-check. " * filler
    rec = {"n": 1, "completion": f"### Problem 1\n{section}\nAnswer1: \\boxed{{4}}", "problems": [{"correct": True}]}
    (d / "samples.jsonl").write_text(json.dumps(rec) + "\n")
    return d


def _plant_metrics(d: Path, acc: float, tok: float) -> None:
    d.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "step": s,
            "critic/score/mean": 2 * acc + 1,
            "bcr/acc": acc,
            "bcr/tokens_per_problem": tok,
            "bcr/truncation_rate": 0.0,
        }
        for s in (1, 2, 3)
    ]
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _plant_preconditions_met(root: Path, cfg: dict) -> None:
    """A preconditions.json with every precondition at its threshold (met): the findings are judged."""
    from recipe_bcr.miniature.toy.preconditions import verdicts

    th = cfg["preconditions"]["thresholds"]
    details = dict.fromkeys(("problems_n1", "groups_n3", "written_n1", "skipped_n1", "budget_n3"), 1)
    details.update(
        dict.fromkeys(("acc_n1", "acc_n3", "l_avg_n1", "compression", "essential_tokens_3", "mean_tokens_n3"), 0.5)
    )
    (root / "preconditions.json").write_text(
        json.dumps({"model": "m", "key": "k", "rows": verdicts(th, th), "details": details})
    )


@pytest.mark.parametrize("bcr_tokens, verdict", [(20.0, "**reproduced**"), (40.0, "**not reproduced**")])
def test_report_has_every_table_and_judges_finding_1_by_the_numbers(tmp_path, bcr_tokens, verdict):
    cfg = load_config(["seeds=[0,1]", "ablation_seeds=[0,1]", "eval.n=[1,2]", "bcr.tokens_per_problem=28"])
    runs = [
        Run("baseline_n1_s0", "main", 1, 128, 0, single=True),
        Run("baseline_n1_s1", "main", 1, 128, 1, single=True),
        Run("bcr_n3_s0", "main", 3, 84, 0),
        Run("bcr_n3_s1", "main", 3, 84, 1),
        Run("bcr_n3_b67_s0", "budget", 3, 67, 0),
        Run("bcr_n3_b67_s1", "budget", 3, 67, 1),
        Run("bcr_n3_len_2_1_1_s0", "reward", 3, 84, 0, reward="len_2_1_1"),
    ]
    evals = {"base": _plant_eval(tmp_path / "eval" / "base", "base", {1: (0.5, 35.0), 2: (0.4, 34.0)}, True, 2)}
    for r in runs:
        tok = bcr_tokens if r.name.startswith("bcr") else 30.0
        evals[r.name] = _plant_eval(tmp_path / "eval" / r.name, r.name, {1: (0.6, tok), 2: (0.55, tok - 2)}, True, 0)
        _plant_metrics(tmp_path / "runs" / r.name, 0.1 if r.group == "reward" else 0.6, 10.0)
    _plant_preconditions_met(tmp_path, cfg)
    report = write_report(tmp_path, cfg, runs, evals, 60.0).read_text()
    for heading in ("## Table 1", "## Table 2", "## What the models write", "## Budget ablation", "## Reward ablation"):
        assert heading in report
    finding1 = next(line for line in report.splitlines() if line.startswith("1. "))
    assert verdict in finding1
    assert "Δ BCR vs baseline" in report and "(60.0..60.0)" in report  # two seeds: mean (min..max)
    finding5 = next(line for line in report.splitlines() if line.startswith("5. "))
    assert "**reproduced**" in finding5  # the length-penalty run ends at 10% training accuracy against 60%
    finding3 = next(line for line in report.splitlines() if line.startswith("3. "))
    assert "**reproduced**" in finding3 and "base 50% -> BCR 2%" in finding3, finding3  # the base's filler, gone
    # an ablation setting's row holds its seeds; BCR's main runs at the ablation seeds are the rule's row
    assert next(line for line in report.splitlines() if line.startswith("| B_max = 67 |")).endswith("| 2 |")
    assert next(line for line in report.splitlines() if line.startswith("| B_max = 84 (rule) |")).endswith("| 2 |")
    assert next(line for line in report.splitlines() if line.startswith("| len_2_1_1 |")).endswith("| 1 |")
    for fig in ("task_scaling.png", "budget_ablation_curves.png", "reward_ablation_curves.png", "training_curves.png"):
        assert (tmp_path / "figures" / fig).stat().st_size > 10_000
    assert "| bcr_n3_s1 | 2.20 | 2.20 | 60.0% -> 60.0% | 10.0 -> 10.0 | 0.00 -> 0.00 |" in report


@pytest.mark.parametrize("stderrs, verdict", [(2, "**reproduced**"), (1, "**not reproduced**")])
def test_finding_1_is_judged_by_the_preregistered_tolerance(tmp_path, stderrs, verdict):
    """BCR 1.5 pts below the baseline, standard errors 1 pt, no seed spread: accuracy counts as kept
    within 2 standard errors (paper.yaml `verdicts.accuracy_stderrs`), not within 1."""
    cfg = load_config(
        [
            "seeds=[0]",
            "ablation_seeds=[]",
            "eval.n=[1,2]",
            "bcr.tokens_per_problem=28",
            f"verdicts.accuracy_stderrs={stderrs}",
        ]
    )
    runs = [Run("baseline_n1_s0", "main", 1, 128, 0, single=True), Run("bcr_n3_s0", "main", 3, 84, 0)]
    evals = {"base": _plant_eval(tmp_path / "eval" / "base", "base", {1: (0.5, 35.0), 2: (0.4, 34.0)}, True, 2)}
    for r, acc, tok in zip(runs, (0.6, 0.585), (30.0, 20.0)):
        evals[r.name] = _plant_eval(tmp_path / "eval" / r.name, r.name, {1: (acc, tok), 2: (acc, tok)}, True, 0)
        _plant_metrics(tmp_path / "runs" / r.name, acc, tok)
    _plant_preconditions_met(tmp_path, cfg)
    finding1 = next(
        line
        for line in write_report(tmp_path, cfg, runs, evals, 60.0).read_text().splitlines()
        if line.startswith("1. ")
    )
    assert verdict in finding1 and f"-1.5 pts (counted as no loss within {float(stderrs):.1f} pts" in finding1, finding1


def test_each_run_trains_with_its_own_prompt_budget_reward_and_seed(tmp_path, monkeypatch):
    """The main_ppo and merge commands of every planned run (run_stage records them; the real commands
    run in the smoke test below and in test_train_e2e.py; the reward presets through verl's reward loop
    in test_verl_integration.py)."""
    from recipe_bcr.miniature import stages
    from recipe_bcr.miniature.paper import v1 as paper_v1

    cmds = []

    def stage(cmd, log, what):
        cmds.append(cmd)
        if "verl.trainer.main_ppo" in cmd:
            steps = int(next(a for a in cmd if a.startswith("trainer.total_training_steps=")).split("=")[1])
            log = next(a for a in cmd if "VERL_FILE_LOGGER_PATH=" in a).split("=", 1)[1]
            ckpt = next(a for a in cmd if a.startswith("trainer.default_local_dir=")).split("=", 1)[1]
            Path(ckpt, f"global_step_{steps}", "actor").mkdir(parents=True)
            Path(log).write_text(
                "".join(
                    json.dumps({"step": s, "data": {"training/global_step": s}}) + "\n" for s in range(1, steps + 1)
                )
            )
        else:
            target = Path(cmd[cmd.index("--target_dir") + 1])
            target.mkdir(parents=True)
            (target / "config.json").write_text("{}")

    monkeypatch.setattr(stages, "run_stage", stage)
    cfg = load_config(["seeds=[0,1]", "ablation_seeds=[0]", "train_steps=5", "bcr.tokens_per_problem=28"])
    data = {"group": tmp_path / "group", "single": tmp_path / "single"}
    for run in plan(cfg):
        assert paper_v1._train(run, tmp_path, tmp_path / "base", data, cfg) == tmp_path / "runs" / run.name / "hf_model"
        train, merge = cmds[-2:]
        args = set(train)
        assert {
            f"bcr.n={run.n}",
            f"bcr.budget={run.budget}",
            f"bcr_reward@bcr.reward={run.reward}",
            f"data.seed={run.seed}",
            f"actor_rollout_ref.rollout.seed={run.seed}",
            "trainer.total_training_steps=5",
            f"data.train_batch_size={cfg['grpo']['prompts_per_step']}",
            f"bcr.model.path={tmp_path / 'base'}",
            f"actor_rollout_ref.rollout.n={cfg['grpo']['rollouts']}",
            *cfg["train_overrides"],
        } <= args, run
        assert f"bcr.data_dir={data['single' if run.single else 'group']}" in args
        assert merge[merge.index("--local_dir") + 1] == str(
            tmp_path / "runs" / run.name / "checkpoints" / "global_step_5" / "actor"
        )
        assert json.loads((tmp_path / "runs" / run.name / "run.json").read_text())["reward"] == run.reward
    assert len(cmds) == 2 * len(plan(cfg))
    assert {r.reward for r in plan(cfg)} == {"paper", *cfg["reward_ablation"]}


@pytest.mark.verl
@pytest.mark.slow
def test_paper_command_runs_every_stage_at_tiny_sizes(tmp_path):
    """Each stage through the stock main_ppo and the eval harness: the preconditions, a baseline and BCR,
    every table in the report. An ablation run differs from BCR's by its budget or reward override (the
    test above; the presets run through verl's reward loop in test_verl_integration.py; the ablation
    tables and figures from planted runs in the report tests), so none is trained here."""
    out = tmp_path / "p"
    cmd = [
        sys.executable,
        "-m",
        "recipe_bcr",
        "paper",
        "config=paper_v1",
        f"out={out}",
        "train_steps=1",
        "seeds=[0]",
        "ablation_seeds=[]",
        "eval.problems=4",
        "eval.samples=1",
        "eval.n=[1,2]",
        "preconditions.problems=4",
        "preconditions.groups=1",
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    report = (out / "report.md").read_text()
    for heading in (
        "## Preconditions",
        "## Findings",
        "## Table 1",
        "## Table 2",
        "## What the models write",
        "## Budget ablation",
        "## Reward ablation",
    ):
        assert heading in report
    assert "Not run (`budget_ablation`" in report and "Not run (`reward_ablation`" in report
    for name in ("baseline_n1_s0", "bcr_n3_s0"):
        rows = [json.loads(line) for line in (out / "runs" / name / "metrics.jsonl").read_text().splitlines()]
        assert [r["step"] for r in rows] == [1] and "bcr/acc" in rows[0]
        assert (out / "runs" / name / "hf_model" / "config.json").exists()
    rollout = "hf" if "bcr_runtime=hf" in load_config([])["train_overrides"] else "vllm"
    assert f"rollout={rollout} device=cpu" in (out / "runs" / "baseline_n1_s0" / "train.log").read_text()
    import pyarrow.parquet as pq

    prompt = pq.read_table(out / "data" / "single_n1" / "train_n1.parquet").column("prompt")[0].as_py()
    assert [m["role"] for m in prompt] == ["user"]  # the baseline's single-problem prompt
    assert (out / "figures" / "task_scaling.png").exists()
    # a rerun resumes: nothing is trained or evaluated again
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.count("done earlier") == 2, again.stdout[-2000:]


def test_report_without_ablations_says_so_and_links_no_missing_figure(tmp_path):
    cfg = load_config(["seeds=[0]", "ablation_seeds=[]", "eval.n=[1,2]", "bcr.tokens_per_problem=28"])
    runs = [Run("baseline_n1_s0", "main", 1, 128, 0, single=True), Run("bcr_n3_s0", "main", 3, 84, 0)]
    evals = {"base": _plant_eval(tmp_path / "eval" / "base", "base", {1: (0.5, 35.0), 2: (0.4, 34.0)}, True, 2)}
    for r in runs:
        evals[r.name] = _plant_eval(tmp_path / "eval" / r.name, r.name, {1: (0.6, 20.0), 2: (0.55, 18.0)}, True, 0)
        _plant_metrics(tmp_path / "runs" / r.name, 0.6, 10.0)
    report = write_report(tmp_path, cfg, runs, evals, 60.0).read_text()
    assert "Not run (`budget_ablation`" in report and "Not run (`reward_ablation`" in report
    for link in (line[line.index("(") + 1 : -1] for line in report.splitlines() if line.startswith("![")):
        assert (tmp_path / link).exists(), link


def test_resuming_with_other_settings_is_refused_before_any_work(tmp_path, capsys):
    """A rerun reuses finished runs: into a folder made with other settings it would mix, say,
    12-step runs into a 20-step report. It is refused, naming the keys, and nothing is touched."""
    from recipe_bcr.miniature.paper.v1 import run_paper_v1

    out = tmp_path / "p"
    out.mkdir()
    (out / "paper_config.json").write_text(json.dumps(load_config([])))
    before = sorted(p.name for p in out.iterdir())
    assert run_paper_v1(str(out), ["train_steps=20", "seeds=[0,1,2,3]"]) == 2
    err = capsys.readouterr().err
    assert "other settings" in err and "seeds, train_steps" in err
    assert sorted(p.name for p in out.iterdir()) == before
    assert json.loads((out / "paper_config.json").read_text()) == load_config([])
