"""`python -m recipe_bcr paper` on the second miniature (hydra_configs/paper.yaml, issue 35): the runs and budgets
planned from a preconditions measurement, resuming stage by stage, the stop on a missed precondition, the refusal
of a paper.yaml with uncommitted changes and of overrides that would move a registered rule, and findings.json
judged from synthetic output folders written in the eval harness's and verl's own formats."""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
from pathlib import Path

import pytest

from recipe_bcr.miniature import stages
from recipe_bcr.miniature import toy_command as toy
from recipe_bcr.miniature.paper import command as paper
from recipe_bcr.miniature.paper import findings as paper_findings
from recipe_bcr.miniature.paper.rules import VERDICTS
from recipe_bcr.miniature.stages import Run, evaluate, train_run
from recipe_bcr.miniature.toy import preconditions as pre_mod
from recipe_bcr.miniature.toy.model import RESOURCES, built_with
from recipe_bcr.miniature.toy.preconditions import load_preregistration, registration

REPO = Path(__file__).resolve().parents[1]
MEASURED = REPO / "tests" / "fixtures" / "base_preconditions_missed.json"  # an earlier base measured: misses 3
CFG = load_preregistration()


def _preconditions(root: Path, met: bool) -> dict:
    """The committed measurement (B = 261), judged by today's commit of paper.yaml; every row met when `met`."""
    pre = json.loads(MEASURED.read_text())
    pre["registration"] = registration()
    pre["key"] = built_with(RESOURCES / "toy_model_compete")  # as if measured on today's base
    if met:
        pre["rows"] = [{**r, "met": True} for r in pre["rows"]]
        pre["all_met"] = True
    root.mkdir(parents=True, exist_ok=True)
    (root / "base_preconditions.json").write_text(json.dumps(pre))
    return pre


# --- planning


def test_runs_and_budgets_are_planned_from_the_measured_lambda():
    budget = json.loads(MEASURED.read_text())["details"]["budget_n3"]
    main = {r.name: r for r in paper.plan_part(CFG, budget, "main")}
    assert len(main) == 4 * len(CFG["seeds"]) == 12
    for s in CFG["seeds"]:
        assert (main[f"bcr_n3_s{s}"].n, main[f"bcr_n3_s{s}"].budget, main[f"bcr_n3_s{s}"].single) == (3, 261, False)
        assert (main[f"truncation_n1_s{s}"].budget, main[f"truncation_n1_s{s}"].single) == (87, True)
        assert (main[f"n2_s{s}"].n, main[f"n2_s{s}"].budget) == (2, 174)
        assert (main[f"baseline_n1_s{s}"].budget, main[f"baseline_n1_s{s}"].single) == (
            CFG["controls"]["baseline_n1"]["budget"],
            True,
        )
    abl = paper.plan_part(CFG, budget, "ablations")
    assert sorted({r.budget for r in abl if r.group == "budget"}) == [183, 222, 300, 339]
    assert {r.seed for r in abl} == set(CFG["seeds"]) and not {r.name for r in abl} & set(main)
    assert [r.name for r in paper.plan_part(CFG, budget, "pilot")] == ["bcr_n3_s0"]


@pytest.mark.parametrize(
    "override, message",
    [
        ("gates.format_min=0.5", "pre-registered"),
        ("findings.F1.acc_margin_pts=-10", "pre-registered"),
        ("preconditions.thresholds.acc_n1=[0.2,0.9]", "pre-registered"),
        ("train_steps=150", "at most 100"),
        ("train_step=10", "no key"),
    ],
)
def test_an_override_that_would_move_a_registered_rule_is_refused(override, message):
    with pytest.raises(ValueError, match=message):
        paper.load_config([override])
    assert paper.load_config(["train_steps=60", "seeds=[0]"])["train_steps"] == 60  # a pilot may lower it


def test_command_keys_are_split_from_paper_yaml_overrides():
    keys, rest = paper.split_command_keys(
        ["registration=paper", "part=pilot", "train_steps=3", "allow_missed_preconditions=true"]
    )
    assert keys == {"part": "pilot", "allow_missed_preconditions": True, "jobs": 2, "registration": "paper"}
    assert rest == ["train_steps=3"]
    third = paper.split_command_keys(["part=toy_pilot"])[0]  # the third registration is the default
    assert (third["registration"], third["part"]) == ("paper_v3", "toy_pilot")
    with pytest.raises(ValueError, match="part=toy_pilot belongs to the third registration"):
        paper.split_command_keys(["registration=paper", "part=toy_pilot"])
    with pytest.raises(ValueError, match="part=pilot belongs to the second registration"):
        paper.split_command_keys(["part=pilot"])
    assert paper.split_command_keys(["jobs=1"])[0]["jobs"] == 1
    with pytest.raises(ValueError, match="part=all"):
        paper.split_command_keys(["part=all"])
    for bad in ("jobs=0", "jobs=two", "jobs=-1"):
        with pytest.raises(ValueError, match=bad):
            paper.split_command_keys([bad])


def test_stages_run_jobs_at_once_and_come_back_in_plan_order():
    both = threading.Barrier(2, timeout=10)  # passes only when two stages run at the same time

    def stage(name):
        def run():
            both.wait()
            return Path(name)

        return run

    work = [(n, stage(n)) for n in ("a", "b", "c", "d")]
    assert stages.at_once(2, work, 0.0) == [(n, Path(n)) for n in ("a", "b", "c", "d")]


def test_one_job_runs_one_stage_at_a_time():
    """Two stages that each wait for the other: at jobs=1 the first waits alone until its barrier breaks and the
    second never starts; run together (jobs ignored) both would pass the barrier and return."""
    pair = threading.Barrier(2, timeout=0.5)
    started = []

    def stage(name):
        def run():
            started.append(name)
            pair.wait()
            return Path(name)

        return run

    with pytest.raises(threading.BrokenBarrierError):
        stages.at_once(1, [(n, stage(n)) for n in ("a", "b")], 0.0)
    assert started == ["a"]


def test_a_failed_stage_lets_the_running_one_finish_and_starts_no_other():
    started, finished = [], []
    gate = threading.Event()

    def fails():
        started.append("a")
        raise RuntimeError("training a failed")

    def slow():
        started.append("b")
        gate.wait(10)
        finished.append("b")
        return Path("b")

    def later():
        started.append("c")
        return Path("c")

    threading.Timer(0.5, gate.set).start()
    with pytest.raises(RuntimeError, match="training a failed"):
        stages.at_once(2, [("b", slow), ("a", fails), ("c", later)], 0.0)
    assert finished == ["b"] and "c" not in started


# --- resuming


def _finished_run(root: Path, run: Run, steps: int) -> None:
    out = root / "runs" / run.name
    (out / "hf_model").mkdir(parents=True)
    (out / "hf_model" / "config.json").write_text("{}")
    (out / "run.json").write_text(json.dumps({**run.__dict__, "extra": [], "steps": steps}))


def test_a_finished_run_evaluation_and_measurement_are_not_redone(tmp_path, monkeypatch):
    def never(*a, **k):
        raise AssertionError("a stage whose output exists was run again")

    monkeypatch.setattr(stages, "run_stage", never)
    monkeypatch.setattr(toy, "measure_base", never)
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    _finished_run(tmp_path, run, 100)
    hf = train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 100)
    assert hf == tmp_path / "runs" / run.name / "hf_model"
    (tmp_path / "eval" / "base").mkdir(parents=True)
    (tmp_path / "eval" / "base" / "summary.json").write_text("[]")
    assert evaluate("base", tmp_path / "m", [1], tmp_path, tmp_path / "b", CFG["eval"]) == tmp_path / "eval" / "base"
    pre = _preconditions(tmp_path, met=False)
    assert paper.base_preconditions(tmp_path, [], pre["key"])["registration"] == registration()


def test_a_finished_run_with_other_settings_is_refused_not_mixed(tmp_path, monkeypatch):
    monkeypatch.setattr(stages, "run_stage", lambda *a, **k: pytest.fail("trained"))
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    _finished_run(tmp_path, run, 100)  # e.g. a pilot at 100 steps, then the full run at 60
    with pytest.raises(ValueError, match="steps 100 -> 60"):
        train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 60)


class FakeVerl:
    """Stands in for main_ppo and the merger in `run_stage`: training logs its steps (from the checkpoint verl would
    resume from) to the command's file logger and checkpoints every `trainer.save_freq`, stopping after `stop_after`
    steps when set (a session's end); merging writes the model."""

    def __init__(self, process: str, stop_after: int | None = None, merge_fails: bool = False) -> None:
        self.process, self.stop_after, self.merge_fails, self.commands = process, stop_after, merge_fails, []

    def __call__(self, cmd: list[str], log: Path, what: str) -> None:
        self.commands.append(cmd)
        if "verl.model_merger" in cmd:
            if self.merge_fails:
                raise RuntimeError("merging failed")
            target = Path(cmd[cmd.index("--target_dir") + 1])
            target.mkdir(parents=True)
            (target / "config.json").write_text("{}")
            return
        arg = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in cmd if "=" in a}
        ckpt, steps = Path(arg["trainer.default_local_dir"]), int(arg["trainer.total_training_steps"])
        tracker = ckpt / "latest_checkpointed_iteration.txt"
        start = int(tracker.read_text()) + 1 if tracker.exists() else 1
        metrics_log = Path(arg["+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FILE_LOGGER_PATH"])
        with metrics_log.open("w") as f:
            for step in range(start, steps + 1):
                f.write(json.dumps({"step": step, "data": {"training/global_step": step, "process": self.process}}))
                f.write("\n")
                if step % int(arg["trainer.save_freq"]) == 0 or step == steps:
                    (ckpt / f"global_step_{step}").mkdir(parents=True)
                    tracker.write_text(str(step))
                if step == self.stop_after:
                    raise KeyboardInterrupt  # the process ends between two steps


def test_a_run_stopped_half_way_resumes_from_its_last_checkpoint(tmp_path, monkeypatch):
    """A session ends during a 25-step run (checkpoints every 10): run again with the same settings it resumes at
    step 21 (the 4 steps after the checkpoint are trained again), and metrics.jsonl holds every step once, each
    from the process that trained it last."""
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("first", stop_after=24))
    with pytest.raises(KeyboardInterrupt):
        train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 25)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("second"))
    train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 25)
    out = tmp_path / "runs" / run.name
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 26))
    assert [r["process"] for r in rows] == ["first"] * 20 + ["second"] * 5
    assert json.loads((out / "verl_metrics.0.jsonl").read_text().splitlines()[-1])["step"] == 24
    assert json.loads((out / "run.json").read_text())["resumed_from"] == 20
    assert not (out / "run.started.json").exists() and stages.finished(run, tmp_path, 25)


def test_a_run_trained_to_its_last_step_but_not_merged_is_only_merged_again(tmp_path, monkeypatch):
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("first", merge_fails=True))
    with pytest.raises(RuntimeError, match="merging failed"):
        train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 20)
    again = FakeVerl("second")
    monkeypatch.setattr(stages, "run_stage", again)
    train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 20)
    assert [("verl.model_merger" in c) for c in again.commands] == [True]  # no training command: nothing left to train
    rows = [json.loads(x) for x in (tmp_path / "runs" / run.name / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 21)) and {r["process"] for r in rows} == {"first"}


def test_a_half_done_run_with_other_settings_starts_afresh(tmp_path, monkeypatch):
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("first", stop_after=12))
    with pytest.raises(KeyboardInterrupt):
        train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 25)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("second"))
    train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 30)  # e.g. the steps rule chose 30, not 25
    out = tmp_path / "runs" / run.name
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 31)) and {r["process"] for r in rows} == {"second"}
    assert json.loads((out / "run.json").read_text())["resumed_from"] is None
    assert sorted(p.name for p in out.glob("verl_metrics.*")) == ["verl_metrics.0.jsonl"]


def test_a_half_done_run_whose_record_is_unreadable_starts_afresh_without_a_traceback(tmp_path, monkeypatch):
    run = Run("bcr_n3_s0", "main", 3, 261, 0)
    monkeypatch.setattr(stages, "run_stage", FakeVerl("first", stop_after=12))
    with pytest.raises(KeyboardInterrupt):
        train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 25)
    (tmp_path / "runs" / run.name / "run.started.json").write_text('{"name": "bcr_n3')  # e.g. cut short by hand
    monkeypatch.setattr(stages, "run_stage", FakeVerl("second"))
    train_run(run, tmp_path, tmp_path / "m", tmp_path / "d", CFG, 25)
    rows = [json.loads(x) for x in (tmp_path / "runs" / run.name / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 26)) and {r["process"] for r in rows} == {"second"}


def test_a_run_trains_on_the_threads_it_is_given(tmp_path, monkeypatch):
    """Runs trained at once share the cores: each run's training worker gets its share (BCR_TRAIN_THREADS)."""
    seen = []

    def stop(cmd, log, what):
        seen.append(cmd)
        raise RuntimeError("stop before training")

    monkeypatch.setattr(stages, "run_stage", stop)
    with pytest.raises(RuntimeError, match="stop before training"):
        train_run(Run("bcr_n3_s0", "main", 3, 261, 0), tmp_path, tmp_path / "m", tmp_path / "d", CFG, 100, threads=3)
    assert 'ray_kwargs.ray_init.runtime_env.env_vars.BCR_TRAIN_THREADS="3"' in seen[0]


def test_a_measurement_judged_by_another_registration_is_refused(tmp_path):
    _preconditions(tmp_path, met=True)
    pre = json.loads((tmp_path / "base_preconditions.json").read_text())
    other = {"id": "0" * 16, "commit": None}
    (tmp_path / "base_preconditions.json").write_text(json.dumps({**pre, "registration": other}))
    with pytest.raises(ValueError, match="judged by registration 0000"):
        paper.base_preconditions(tmp_path, [], pre["key"])


def test_a_measurement_of_another_base_is_refused(tmp_path):
    """Same thresholds commit, other base (a rebuilt toy_compete): its preconditions say nothing of this one."""
    pre = _preconditions(tmp_path, met=True)
    assert paper.base_preconditions(tmp_path, [], pre["key"])["key"] == pre["key"]
    with pytest.raises(ValueError, match="settings key .* the base this run trains has 0123abcd"):
        paper.base_preconditions(tmp_path, [], "0123abcd")


# --- the stop before training, the pilot


def test_a_missed_precondition_stops_before_training_with_not_interpretable_findings(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paper, "train_run", lambda *a, **k: pytest.fail("trained despite a missed precondition"))
    out = tmp_path / "p"
    _preconditions(out, met=False)  # the committed measurement: acc_n1, recheck_gain_long, n5_acc_drop missed
    assert paper.run_paper(str(out), ["registration=paper"]) == 3
    err = capsys.readouterr().err
    assert "misses 3 precondition(s) (acc_n1, recheck_gain_long, n5_acc_drop)" in err and "never a threshold" in err
    found = json.loads((out / "findings.json").read_text())
    assert {f["verdict"] for f in found["findings"].values()} == {"not interpretable"}
    assert set(found["findings"]) == set(paper_findings.FINDINGS)
    assert any(d.startswith("precondition acc_n1 = 0.260") for d in found["diagnosis"])
    assert found["registration"] == registration() and found["launched_at"].endswith("Z")
    assert found["stopped"] and not (out / "runs").exists()
    assert "**Not interpretable**" in (out / "report.md").read_text()


def test_the_override_trains_anyway_and_is_recorded(tmp_path, monkeypatch):
    class Trained(Exception):
        pass

    def train(run, *a, **k):
        raise Trained(run.name)

    monkeypatch.setattr(paper, "train_run", train)
    out = tmp_path / "p"
    _preconditions(out, met=False)
    with pytest.raises(Trained, match="bcr_n3_s0"):
        paper.run_paper(
            str(out), ["registration=paper", "allow_missed_preconditions=true", "part=pilot", "train_steps=2"]
        )
    plan = json.loads((out / "plan.json").read_text())
    assert plan["registration"] == registration() and "train_steps" not in plan["settings"]
    assert (out / "data" / "group_n3" / "train_n3.parquet").exists()


def test_the_pilot_trains_one_bcr_seed_and_records_its_gates(tmp_path, monkeypatch, capsys):
    def train(run, root, model, data, cfg, steps, threads):
        _finished_run(root, run, steps)
        flat = {"bcr/truncation_rate": 1.0, "bcr/fmt": 0.0, "bcr/acc_pos1": 0.5, "bcr/acc_pos3": 0.0}
        rows = [{"step": s, **flat, "critic/score/mean": 0.5} for s in range(1, steps + 1)]
        (root / "runs" / run.name / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return root / "runs" / run.name / "hf_model"

    monkeypatch.setattr(paper, "train_run", train)
    monkeypatch.setattr(paper, "evaluate", lambda *a, **k: pytest.fail("the pilot evaluates nothing"))
    out = tmp_path / "p"
    _preconditions(out, met=True)
    assert paper.run_paper(str(out), ["registration=paper", "part=pilot", "train_steps=20"]) == 0
    pilot = json.loads((out / "pilot.json").read_text())
    assert pilot["run"] == "bcr_n3_s0" and pilot["train_steps"] == 20 and pilot["train_steps_registered"] == 100
    assert not pilot["gates"]["all_met"] and not pilot["gates"]["format"]["met"]
    assert "| bcr_n3_s0 | 20 | 1.000 -> 1.000 |" in capsys.readouterr().out
    # another part into the same folder with other sizes is refused before anything runs
    assert paper.run_paper(str(out), ["registration=paper", "seeds=[0]"]) == 2


def test_the_main_part_evaluates_bcr_and_the_base_at_every_n_and_the_controls_at_n1(tmp_path, monkeypatch):
    """F2 reads BCR over N = 1..5; F1 and the controls' table read N=1 only: evaluating the 9 control models at
    N = 2..5 would more than double the main part's evaluation for numbers no finding reads."""

    threads = set()

    def train(run, root, model, data, cfg, steps, run_threads):
        threads.add(run_threads)
        _finished_run(root, run, steps)
        return root / "runs" / run.name / "hf_model"

    evaluated = {}
    monkeypatch.setattr(paper, "train_run", train)
    monkeypatch.setattr(paper, "evaluate", lambda name, model, ns, *a, **k: evaluated.setdefault(name, list(ns)))
    monkeypatch.setattr(paper, "write_findings", lambda root, *a, **k: root / "report.md")
    out = tmp_path / "p"
    _preconditions(out, met=True)
    (out / "report.md").write_text("report")
    assert paper.run_paper(str(out), ["registration=paper", "train_steps=2"]) == 0
    every = [int(n) for n in CFG["eval"]["n"]]
    assert evaluated.pop("base") == every
    assert {k: v for k, v in evaluated.items() if k.startswith("bcr_")} == {f"bcr_n3_s{s}": every for s in CFG["seeds"]}
    controls = {k: v for k, v in evaluated.items() if not k.startswith("bcr_")}
    assert len(controls) == 3 * len(CFG["seeds"]) and all(v == [1] for v in controls.values())
    assert threads == {max(1, len(os.sched_getaffinity(0)) // 2)}  # two runs at once (jobs=2): half the cores each


def test_a_folder_made_under_another_registration_is_refused_before_anything_is_written(tmp_path, capsys):
    """The registration is paper.yaml's content: a folder whose plan.json names another one is never resumed."""
    out = tmp_path / "p"
    paper._state(out, paper.load_config([]), {"id": "0" * 16, "commit": None})
    before = sorted(p.name for p in out.iterdir())
    assert paper.run_paper(str(out), ["registration=paper"]) == 2
    assert "registration differ" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before == ["plan.json"]


# --- findings from synthetic output folders (the eval harness's records and summaries, verl's rollout dump)


@pytest.fixture(scope="module")
def count():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(RESOURCES / "toy_model_compete"))
    return tok, (lambda text: len(tok(text, add_special_tokens=False)["input_ids"]))


def _section(problem, style: str, wrong: bool) -> str:
    """A toy section: `verbose` (narration, restatement, steps, filler, re-check), `concise` (steps, a re-check on
    long chains only) or `cut` (the verbose one less its narration and a filler)."""
    from recipe_bcr.miniature.toy.model import load_specs
    from recipe_bcr.miniature.toy.task import CHECK, CLOSING, FILLERS, NARRATION, RESTATE, chain, written_steps

    rng = random.Random(0)
    spec = load_specs([f"config={CFG['toy']}"])[0]  # the registered task: remainder lines in steps and re-checks
    steps, value = written_steps(problem, rng, spec, 0.0)
    check, _ = written_steps(problem, rng, spec, 0.0, check=True)
    value += wrong
    long = len(chain(problem)[1]) >= CFG["preconditions"]["long_chain_ops"]
    q = problem.question.removeprefix("What is ").removesuffix("?")
    parts = {
        "verbose": [NARRATION, RESTATE.format(q), steps, FILLERS[0], FILLERS[1], CHECK, check],
        "concise": [steps, *([CHECK, check] if long else [])],
        "cut": [RESTATE.format(q), steps, FILLERS[0], CHECK, check],
    }[style]
    return f"### Problem 1\n{' '.join([*parts, CLOSING.format(value)])}\nAnswer1: \\boxed{{{value}}}"


def _plant_eval(root: Path, label: str, style: str, tok, ns=(1,), tokens_correct=None) -> None:
    """samples.jsonl through the harness's own scoring (score_sample) and summary.json through its summary."""
    from recipe_bcr.data.eval_tasks import build_tasks
    from recipe_bcr.engines.base import Generation
    from recipe_bcr.eval.scoring import score_sample
    from recipe_bcr.eval.summary import summarize, write_json
    from recipe_bcr.grading.verify import default_verifier

    bench = root / "data" / "toy_benchmark.jsonl"
    tasks = build_tasks({"Toy": {"path": str(bench), "question": "problem", "answer": "answer"}}, [1])
    run_dir = root / "eval" / label
    run_dir.mkdir(parents=True)
    with (run_dir / "samples.jsonl").open("w") as f:
        for k, task in enumerate(tasks):
            text = _section(task.problems[0], style, wrong=k % 4 == 0)  # 75% accurate: below F1's ceiling
            gen = Generation.from_ids(text, tok(text, add_special_tokens=False)["input_ids"] + [0], "stop")
            rec = score_sample(task, 0, gen, default_verifier(), tok, thinking=False, markers=[], seed=0)
            f.write(json.dumps(rec) + "\n")
    rows = summarize([(label, run_dir)])
    for n in ns[1:]:  # N > 1: the same row, at the tokens per correct problem asked for
        rows.append({**rows[0], "n": n, "tokens_correct_problem": tokens_correct[n]})
    if tokens_correct:
        rows[0]["tokens_correct_problem"] = tokens_correct[1]
    write_json(rows, run_dir / "summary.json")


def _engaged(steps: int = 100, acc=lambda s: 0.8) -> list[dict]:
    return [
        {
            "step": s,
            "bcr/truncation_rate": max(0.1, 1 - s / 40),
            "bcr/fmt": min(1.0, s / 30),
            "bcr/acc_pos1": 0.9,
            "bcr/acc_pos3": min(0.8, s / 50),
            "bcr/acc": acc(s),
            "critic/score/mean": 0.5 + s / 100 + (0.05 if s % 2 else -0.05),
            "response_length/mean": 200.0,
        }
        for s in range(1, steps + 1)
    ]


def _plant_run(root: Path, run: Run, metrics: list[dict], dump_lengths: list[list[int]] | None = None) -> None:
    out = root / "runs" / run.name
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({**run.__dict__, "extra": [], "steps": len(metrics)}))
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in metrics))
    for step, lengths in enumerate(dump_lengths or [], start=1):  # verl's dump: one line per rollout
        (out / "rollouts").mkdir(exist_ok=True)
        rows = [
            {"input": f"p{g}", "output": "x", "score": 0.0, "step": step, "uid": f"u{g}_{k}_0", "response_tokens": n}
            for g in range(2)
            for k, n in enumerate(lengths)
        ]
        (out / "rollouts" / f"{step}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _synthetic_folder(root: Path, tok, bcr_gates: bool = True, ablations: bool = True) -> None:
    from recipe_bcr.miniature.toy.model import load_specs
    from recipe_bcr.miniature.toy.task import write_toy_benchmark

    _preconditions(root, met=True)
    task = load_specs([f"config={CFG['toy']}"])[0]
    write_toy_benchmark(root / "data" / "toy_benchmark.jsonl", 40, 35, task)
    decreasing = {1: 60.0, 2: 55.0, 3: 50.0, 4: 50.5, 5: 45.0}  # within 1 token of non-increasing
    _plant_eval(root, "base", "verbose", tok, ns=(1, 2, 3, 4, 5), tokens_correct={n: 100.0 for n in decreasing})
    for run in paper.plan_part(CFG, 261, "main"):
        arm = paper_findings.arm_of({"group": run.group, "name": run.name})
        style = {"bcr": "concise", "baseline_n1": "verbose"}.get(arm, "cut")
        engaged = bcr_gates or run.seed != 1
        _plant_run(root, run, _engaged() if engaged else _engaged()[:15])
        _plant_eval(root, run.name, style, tok, ns=(1, 2, 3, 4, 5), tokens_correct=decreasing)
    if not ablations:
        return
    for k, run in enumerate(paper.plan_part(CFG, 261, "ablations")):
        if run.group == "budget":
            _plant_run(root, run, _engaged())
            _plant_eval(root, run.name, "concise", tok)
            rows = json.loads((root / "eval" / run.name / "summary.json").read_text())
            rows[0]["tokens_per_problem"] = run.budget / 5  # more budget, more tokens
            (root / "eval" / run.name / "summary.json").write_text(json.dumps(rows))
        else:
            falling = _engaged(acc=lambda s: 0.8 if s <= 50 else 0.2)
            _plant_run(root, run, falling, dump_lengths=[[60, 120, 200, 261]] * 10)
    for run in paper.plan_part(CFG, 261, "main"):  # BCR at B = 261 sits at 261 / 5 tokens among the budgets
        if run.group == "main":
            rows = json.loads((root / "eval" / run.name / "summary.json").read_text())
            rows[0]["tokens_per_problem"] = 261 / 5
            (root / "eval" / run.name / "summary.json").write_text(json.dumps(rows))


def _context() -> dict:
    return {
        "registration": registration(),
        "launched_at": "2026-11-27T05:00:00Z",
        "overrides": [],
        "train_steps": 100,
        "train_steps_registered": 100,
        "budget": {"B": 261, "lambda": 0.85},
    }


def test_findings_json_holds_every_registered_part_and_judges_an_engaged_run(tmp_path, count):
    from recipe_bcr.miniature.paper import writeup as paper_writeup

    tok, n_tokens = count
    _synthetic_folder(tmp_path, tok)
    pre = json.loads((tmp_path / "base_preconditions.json").read_text())
    result = paper_findings.judge(tmp_path, CFG, pre, n_tokens, _context())
    json.dumps(result)  # JSON-ready
    for key in ("preconditions", "gates", "controls", "eval_problems", "registration", "launched_at", "findings"):
        assert key in result, key
    assert result["preconditions"]["all_met"] and {r["name"] for r in result["preconditions"]["rows"]} == set(
        pre_mod.REGIME_CHECKS
    )
    assert [g["run"] for g in result["gates"]] == ["bcr_n3_s0", "bcr_n3_s1", "bcr_n3_s2"]
    assert all(g["gates"]["all_met"] for g in result["gates"]) and result["interpretable"], result["diagnosis"]
    assert set(result["controls"]) == set(paper_findings.ARMS) and all(
        c["seeds"] == 3 for c in result["controls"].values()
    )
    assert result["eval_problems"] == dict.fromkeys(paper_findings.ARMS, 40)
    f = result["findings"]
    assert set(f) == set(paper_findings.FINDINGS) and {v["verdict"] for v in f.values()} <= set(VERDICTS)
    # F1: same accuracy (75%), fewer tokens than the baseline and than the truncation control
    assert f["F1"]["verdict"] == "reproduced" and f["F1"]["diff_pts"] == 0 and f["F1"]["beyond_truncation"]
    assert f["F1"]["reading"] == "BCR compresses beyond what the truncation control gives"
    assert f["F2"]["verdict"] == "reproduced"
    # F3: narration, restatement and filler gone; re-checks on long chains kept, shorter ones dropped
    assert f["F3"]["verdict"] == "reproduced"
    assert f["F3"]["inert_falls"] == dict.fromkeys(("narration", "restatement", "filler"), 1.0)
    assert f["F3"]["useful_recheck_long_fall"] == 0.0 and f["F3"]["base"]["long_problems"] > 0
    assert f["F4"]["verdict"] == "reproduced" and f["F4"]["budgets"] == [183, 222, 261, 300, 339]
    assert f["F5"]["verdict"] == "reproduced" and all(p["collapsed_seeds"] == 3 for p in f["F5"]["penalties"].values())
    report = paper_writeup.write(tmp_path, result, "python -m recipe_bcr paper out=x").read_text()
    assert json.loads((tmp_path / "findings.json").read_text()) == json.loads(json.dumps(result))
    assert "**F1, accuracy kept and tokens cut at N=1: reproduced.**" in report
    assert "| truncation_n1 | 1 | 87 | 3 |" in report
    # the figures the report links, made from the folder's metrics and summaries
    for fig in ("training_curves", "task_scaling"):
        assert f"](figures/{fig}.png)" in report and (tmp_path / "figures" / f"{fig}.png").stat().st_size > 10_000


def test_a_bcr_seed_that_misses_a_gate_makes_every_finding_not_interpretable(tmp_path, count):
    tok, n_tokens = count
    _synthetic_folder(tmp_path, tok, bcr_gates=False, ablations=False)
    pre = json.loads((tmp_path / "base_preconditions.json").read_text())
    result = paper_findings.judge(tmp_path, CFG, pre, n_tokens, _context())
    assert not result["interpretable"]
    assert any(d.startswith("bcr_n3_s1 misses the gate(s) truncation") for d in result["diagnosis"])
    assert {v["verdict"] for v in result["findings"].values()} == {"not interpretable"}


def test_absent_ablations_are_not_testable_and_other_sizes_not_interpretable(tmp_path, count):
    tok, n_tokens = count
    _synthetic_folder(tmp_path, tok, ablations=False)
    pre = json.loads((tmp_path / "base_preconditions.json").read_text())
    found = paper_findings.judge(tmp_path, CFG, pre, n_tokens, _context())["findings"]
    assert found["F4"]["verdict"] == found["F5"]["verdict"] == "not testable" and found["F4"]["budgets"] == [261]
    assert found["F1"]["verdict"] == "reproduced"
    sized = paper_findings.judge(tmp_path, CFG, pre, n_tokens, {**_context(), "overrides": ["seeds=[0]"]})
    assert not sized["interpretable"] and "not the registered experiment" in sized["diagnosis"][-1]


@pytest.mark.verl
@pytest.mark.slow
def test_the_pilot_runs_one_real_grpo_step_and_resumes(tmp_path):
    """The part=pilot path through the stock main_ppo on the shipped toy_model_compete at the registered GRPO sizes
    (paper.yaml's prompts a step x rollouts, B from the committed measurement), for one step: run.json, per-step metrics with the
    bcr/* keys, verl's rollout dump, pilot.json; a rerun trains nothing."""
    import sys

    out = tmp_path / "p"
    _preconditions(out, met=False)  # the committed measurement misses 3: trained under the recorded override
    keys = ["registration=paper", "part=pilot", "train_steps=1", "allow_missed_preconditions=true"]
    cmd = [sys.executable, "-m", "recipe_bcr", "paper", f"out={out}", *keys]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    run = json.loads((out / "runs" / "bcr_n3_s0" / "run.json").read_text())
    want = {"name": "bcr_n3_s0", "group": "main", "n": 3, "budget": 261, "seed": 0, "reward": "paper", "steps": 1}
    assert {k: run[k] for k in want} == want
    rows = [json.loads(x) for x in (out / "runs" / "bcr_n3_s0" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1] and {"bcr/acc_pos3", "bcr/fmt", "critic/score/mean"} <= set(rows[0])
    dump = [json.loads(x) for x in (out / "runs" / "bcr_n3_s0" / "rollouts" / "1.jsonl").read_text().splitlines()]
    assert len(dump) == CFG["grpo"]["prompts_per_step"] * CFG["grpo"]["rollouts"]  # every rollout of the step
    pilot = json.loads((out / "pilot.json").read_text())
    assert pilot["train_steps"] == 1 and pilot["allow_missed_preconditions"] and "truncation" in pilot["gates"]
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "bcr_n3_s0: done earlier" in again.stdout, again.stdout[-2000:]


def test_the_evaluation_runs_the_harness_on_one_thread_at_the_registered_sampling(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(stages, "run_stage", lambda cmd, log, what: seen.append(cmd))
    evaluate("bcr_n3_s0", tmp_path / "m", [1, 2, 3, 4, 5], tmp_path, tmp_path / "b.jsonl", CFG["eval"], threads=1)
    cmd = seen[0]
    assert cmd[:3] == ["env", "OMP_NUM_THREADS=1", "OMP_WAIT_POLICY=PASSIVE"] and "recipe_bcr.eval" in cmd
    ev = CFG["eval"]
    want = [
        "n=[1,2,3,4,5]",
        f"sampling.max_tokens={ev['tokens_per_problem'] * 5}",
        f"sampling.temperature={ev['temperature']}",
        f"sampling.k={ev['samples']}",
        f"sampling.seed={ev['seed']}",
    ]
    assert [a for a in want if a not in cmd] == []


def test_part_findings_judges_a_folder_again_without_training_or_evaluating(tmp_path, monkeypatch, count):
    """What a committed folder holds (run metrics, evaluation samples and summaries, no models) is enough to write
    its findings again: part=findings runs no stage but the judgement, and writes what judge() returns."""
    tok, n_tokens = count
    _synthetic_folder(tmp_path, tok, ablations=False)
    paper._state(tmp_path, paper.load_config([]), registration())  # plan.json, as the main part leaves it
    monkeypatch.setattr(paper, "train_run", lambda *a, **k: pytest.fail("trained"))
    monkeypatch.setattr(paper, "evaluate", lambda *a, **k: pytest.fail("evaluated"))
    assert paper.run_paper(str(tmp_path), ["registration=paper", "part=findings"]) == 0
    written = json.loads((tmp_path / "findings.json").read_text())
    pre = json.loads((tmp_path / "base_preconditions.json").read_text())
    assert (
        written["budget"]["B"] == 261
        and written["launched_at"] == json.loads((tmp_path / "plan.json").read_text())["launched_at"]
    )
    context = {**_context(), "launched_at": written["launched_at"], "budget": written["budget"]}
    assert written == json.loads(json.dumps(paper_findings.judge(tmp_path, CFG, pre, n_tokens, context)))
    assert written["findings"]["F1"]["verdict"] == "reproduced" and not (tmp_path / "wall_seconds.json").exists()


def test_part_findings_on_a_folder_no_paper_run_left_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "empty"
    assert paper.run_paper(str(out), ["registration=paper", "part=findings"]) == 2
    err = capsys.readouterr().err
    assert "has no plan.json or base_preconditions.json" in err and f"python -m recipe_bcr paper out={out}" in err
    assert not out.exists()
