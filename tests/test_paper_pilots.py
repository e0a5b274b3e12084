"""The third registration's pilots and parts (hydra_configs/paper_v3.yaml, issue 52): the toy pilot's acceptance
rule, the steps rule over pilot runs, and the command's order (toy pilot, then base and steps pilot, then the main
part on the steps it chose, every arm evaluated at every N). Training and evaluation are replaced by stand-ins that
write what the real stages write (tests/test_paper_second.py runs a real GRPO step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipe_bcr.miniature.paper import command as paper
from recipe_bcr.miniature.paper.pilots import judge_toy, plateau_step, read_steps
from recipe_bcr.miniature.toy import model as toy_model
from recipe_bcr.miniature.toy.model import RESOURCES, built_with
from recipe_bcr.miniature.toy.preconditions import load_preregistration, registration

V3 = load_preregistration(name="paper_v3")
BASE = RESOURCES / "toy_model_gaps_fill20"  # the registered toy's base


def test_the_toy_is_accepted_only_when_every_pilot_seed_lies_in_the_range():
    tp = V3["toy_pilot"]
    assert judge_toy({"s5": 0.85, "s6": 0.88}, tp)["decision"] == "accepted"
    assert judge_toy({"s5": 0.85, "s6": 0.93}, tp)["decision"] == tp["above"]  # a ceiling: one more gap
    assert judge_toy({"s5": 0.79, "s6": 0.86}, tp)["decision"] == tp["below"]
    assert judge_toy({"s5": 0.90, "s6": 0.82}, tp)["decision"] == "accepted"  # the range's ends are in it


def _rows(accs):
    return [{"step": s + 1, "bcr/acc": a} for s, a in enumerate(accs)]


def test_the_steps_rule_takes_the_first_checkpoint_where_every_run_is_flat():
    st = V3["steps"]
    rising_then_flat = _rows([0.5 + 0.01 * min(s, 50) for s in range(150)])  # +1 point a step until step 51
    flat = _rows([0.8] * 150)
    chosen = plateau_step({"a": rising_then_flat, "b": flat}, st)
    assert chosen["steps"] == 70  # the first checkpoint whose 20-step window (51..70) lies wholly on the flat part
    first, second = chosen["checks"][:2]
    assert (first["step"], first["slopes_pts"]["a"]) == (10, None)  # shorter than the window: no slope, not flat
    assert second["slopes_pts"]["a"] == pytest.approx(1.0) and not second["plateaued"]
    forever = _rows([0.3 + 0.002 * s for s in range(150)])  # +0.2 points a step throughout
    assert plateau_step({"a": forever, "b": flat}, st)["steps"] == st["max"]
    json.dumps(chosen, allow_nan=False)  # short windows are recorded as null, not NaN


def test_the_main_part_needs_the_steps_pilots_choice(tmp_path):
    with pytest.raises(ValueError, match="part=steps_pilot` first"):
        read_steps(tmp_path)


@pytest.fixture
def stand_ins(monkeypatch):
    """The registered toy's committed base (not built again), and training / evaluation stand-ins that record what
    they were asked."""
    seen = {"trained": {}, "evaluated": {}, "events": []}

    def ensure(cache, task, mspec, **kw):
        return BASE

    def train(run, root, model, data, cfg, steps, threads):
        out = root / "runs" / run.name
        if (out / "hf_model").exists() and (out / "run.json").exists():  # as train_run: finished, not trained again
            return out / "hf_model"
        (out / "hf_model").mkdir(parents=True, exist_ok=True)
        (out / "run.json").write_text(json.dumps({**run.__dict__, "extra": [], "steps": steps}))
        acc = 0.86 if run.name.startswith("baseline") else 0.8
        rows = [{"step": s, "bcr/acc": acc} for s in range(1, steps + 1)]
        (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        seen["trained"][run.name] = (run, steps)
        seen["events"].append(("trained", run.name))
        return out / "hf_model"

    def evaluate(label, model, ns, root, bench, ev, threads=None):
        out = root / "eval" / label
        if (out / "summary.json").exists():  # as evaluate: done, not evaluated again
            return out
        out.mkdir(parents=True, exist_ok=True)
        rows = [{"n": n, "benchmark": "Toy", "acc": 0.86 if label.startswith("baseline") else 0.8} for n in ns]
        (out / "summary.json").write_text(json.dumps(rows))
        seen["evaluated"][label] = list(ns)
        seen["events"].append(("evaluated", label))
        seen["bench"] = bench
        return out

    monkeypatch.setattr(toy_model, "ensure_model", ensure)
    monkeypatch.setattr(paper, "train_run", train)
    monkeypatch.setattr(paper, "evaluate", evaluate)
    return seen


def _measured(root: Path) -> None:
    """A base measurement as the third registration's stage (a) leaves it, every row met, B = 400."""
    th = V3["preconditions"]["thresholds"]
    rows = [{"name": k, "value": 0.0, "range": v, "met": True} for k, v in th.items()]
    details = {"budget_n3": 400, "compression": 0.75, "l_avg_n1": 178.0}
    pre = {"registration": registration(name="paper_v3"), "key": built_with(BASE), "rows": rows, "details": details}
    (root / "base_preconditions.json").write_text(json.dumps(pre))


def test_the_third_registrations_parts_run_in_their_registered_order(tmp_path, stand_ins, monkeypatch, capsys):
    out = tmp_path / "v3"
    third = ["registration=paper_v3"]
    # the steps pilot and the main part need what comes before them, and say so before measuring anything
    assert paper.run_paper(str(out), [*third, "part=steps_pilot"]) == 2
    assert paper.run_paper(str(out), third) == 2
    assert not (out / "base_preconditions.json").exists()

    assert paper.run_paper(str(out), [*third, "part=toy_pilot"]) == 0
    pilot = json.loads((out / "toy_pilot.json").read_text())
    assert pilot["decision"] == "accepted" and set(pilot["accuracy_n1"]) == {"baseline_n1_s5", "baseline_n1_s6"}
    assert pilot["registration"]["id"] == registration(name="paper_v3")["id"]
    assert {r.group for r, _ in stand_ins["trained"].values()} == {"pilot"}
    assert all(steps == V3["steps"]["max"] for _, steps in stand_ins["trained"].values())
    assert stand_ins["evaluated"] == {"baseline_n1_s5": [1], "baseline_n1_s6": [1]}
    questions = [json.loads(x)["problem"] for x in stand_ins["bench"].read_text().splitlines()]
    assert len(set(questions)) == len(questions) == V3["eval"]["problems"]  # distinct held-out questions

    _measured(out)  # stage (a) as it would have left it (measured for real in tests/test_registration_v3.py)
    stand_ins["trained"].clear()
    assert paper.run_paper(str(out), [*third, "part=steps_pilot"]) == 0
    assert set(stand_ins["trained"]) == {"bcr_n3_s5", "bcr_n3_s6"}  # the toy pilot's baseline runs are reused
    chosen = json.loads((out / "steps_pilot.json").read_text())
    assert chosen["steps"] == V3["steps"]["window"]  # flat runs: the first checkpoint with a whole window

    stand_ins["trained"].clear()
    stand_ins["evaluated"].clear()
    monkeypatch.setattr(paper, "write_findings", lambda root, *a, **k: root / "report.md")
    (out / "report.md").write_text("report")
    assert paper.run_paper(str(out), [*third, "jobs=1"]) == 0
    every = [int(n) for n in V3["eval"]["n"]]
    assert stand_ins["evaluated"] and all(ns == every for ns in stand_ins["evaluated"].values())
    trained = {name: run for name, (run, steps) in stand_ins["trained"].items() if steps == chosen["steps"]}
    assert len(trained) == len(stand_ins["trained"])
    seeds = {arm: sorted(r.seed for n, r in trained.items() if n.rsplit("_s", 1)[0] == arm) for arm in V3["controls"]}
    assert seeds == {arm: c["seeds"] for arm, c in V3["controls"].items()}
    assert sorted(r.seed for n, r in trained.items() if n.startswith("bcr_n3_s")) == V3["seeds"]
    assert dict(trained["oracle_cap_n1_s0"].token_caps)  # the oracle arm carries its caps by chain length
    events = stand_ins["events"]  # each run evaluated as soon as it is trained, before the next one trains
    assert all(events.index(("evaluated", name)) == events.index(("trained", name)) + 1 for name in trained)

    # another machine: the merged models (ignored by git) are gone; run.json, metrics and evaluations are committed
    for hf in out.glob("runs/*/hf_model"):
        hf.rmdir()
    stand_ins["trained"].clear()
    stand_ins["evaluated"].clear()
    assert paper.run_paper(str(out), third) == 0
    assert stand_ins["trained"] == {} and stand_ins["evaluated"] == {}  # nothing trained or evaluated again
    judged = []  # part=findings judges the folder at the steps its steps pilot chose
    monkeypatch.setattr(paper, "write_findings", lambda root, *a: judged.append(a[-2]["train_steps"]) or root / "r")
    (out / "r").write_text("report")
    assert paper.run_paper(str(out), [*third, "part=findings"]) == 0 and judged == [chosen["steps"]]
    # an evaluation of a run that no run.json records is refused, not taken as that run's
    (out / "runs" / "n2_s0" / "run.json").unlink()
    assert paper.run_paper(str(out), third) == 2
    assert f"{out / 'eval' / 'n2_s0'} holds an evaluation of a run that" in capsys.readouterr().err
    assert stand_ins["trained"] == {}
