"""The shared-seed paired interventions (recipe_bcr/miniature/toy/interventions.py, issue 52): the arms share their
sampling randomness row by row, the second registration's paired arms are unchanged when `preconditions.paired` is
absent, the paired se and the sizes it implies, and a tiny end-to-end run on the committed toy_compete base."""

from __future__ import annotations

import json
import math
import random

import pytest

from recipe_bcr.engines.base import Generation, Sampling, units
from recipe_bcr.miniature.toy.interventions import (
    EFFECTS,
    END_ARMS,
    START_ARMS,
    end_suffixes,
    paired_effect,
    planned_sizes,
    problems_needed,
    run_arms,
    start_prefixes,
)
from recipe_bcr.miniature.toy.preconditions import load_preregistration
from recipe_bcr.miniature.toy.task import _INERT, categories, chain, make_problem, restated


def test_paired_effect_is_the_mean_difference_and_its_se_the_sd_of_the_differences_over_sqrt_n():
    with_text = [True, True, False, True, False, True]
    without = [True, False, False, True, True, False]
    d = [0, 1, 0, 0, -1, 1]
    mean = sum(d) / 6
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 5)
    got = paired_effect(with_text, without)
    assert got["effect"] == pytest.approx(mean) and got["n"] == 6
    assert got["sd"] == pytest.approx(sd) and got["se"] == pytest.approx(sd / math.sqrt(6))
    same = paired_effect([True, False] * 5, [True, False] * 5)  # identical arms: no noise left in the difference
    assert same["effect"] == 0.0 and same["se"] == 0.0
    assert math.isnan(paired_effect([True], [False])["se"])
    with pytest.raises(ValueError):
        paired_effect([True], [True, False])


def test_problems_needed_is_the_smallest_n_whose_se_meets_the_target():
    assert problems_needed(0.5, 0.01) == 2500
    assert problems_needed(0.3, 0.01) == 900 and 0.3 / math.sqrt(899) > 0.01
    assert problems_needed(0.0, 0.01) == 2
    with pytest.raises(ValueError):
        problems_needed(0.5, 0.0)


def test_planned_sizes_scale_end_of_steps_values_by_the_kept_share_and_floor_a_silent_pilot():
    pre = {"paired": {"long_problems": 1000, "start_problems": 400}}
    pilot = {
        "details": {
            "long_problems_drawn": 200,
            "long_problems_kept": 100,
            "kept_share": 0.5,
            "start_problems": 300,
            "sd": {name: 0.5 if name == "useful_gain" else 0.0 for name in EFFECTS},
            "seconds": {"end": 100.0, "start": 30.0},
        }
    }
    plan = planned_sizes(pilot, pre, 0.01)
    useful = plan["values"]["useful_gain"]
    assert useful["paired_problems"] == 2500 and useful["long_problems_to_draw"] == 5000
    assert useful["se_at_config"] == pytest.approx(0.5 / math.sqrt(500))
    # no discordant pair among 300: planned at sqrt(3 / 300) = 0.1 -> 100 problems, not 2
    assert plan["values"]["effect_restatement"]["paired_problems"] == 100
    assert plan["values"]["effect_filler"]["paired_problems"] == math.ceil(3 / 100 / 1e-4)
    assert plan["long_problems_to_draw"] == 5000 and plan["start_problems"] == 100
    assert plan["seconds_at_that_size"] == pytest.approx(5000 * 0.5 + 100 * 0.1)


def test_the_arms_force_the_registered_texts():
    rng = random.Random(3)
    p = next(q for q in (make_problem(rng, _spec(), k) for k in range(100)) if len(chain(q)[1]) >= 3)
    start, ops = chain(p)
    steps = "7 + 1 = 8. Now 8 - 4. 8 - 4 = 5."
    end = end_suffixes(p, steps)
    assert set(end) == set(END_ARMS) and end["recheck"] == " Check:"
    assert all(end[a].endswith(" So the final answer is") for a in ("closed", "filler", "inert_recheck"))
    inert = end["inert_recheck"]
    assert _INERT.search(inert) and " gives 5." in inert and categories(inert)["inert_recheck"]
    starts = start_prefixes(p)
    assert set(starts) == set(START_ARMS)
    first = f"{start} {ops[0][0]} {ops[0][1]} ="
    assert all(t.startswith("### Problem 1\n") and t.endswith(" " + first) for t in starts.values())
    assert restated(starts["both"]) and restated(starts["no_narration"]) and not restated(starts["no_restatement"])
    assert categories(starts["both"])["narration"] and not categories(starts["no_narration"])["narration"]


class _Tok:
    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [len(w) for w in text.split()]}


class FakeEngine:
    """Records what each submit gets; answers every request with "4." (a batched engine's units, one per poll)."""

    def __init__(self, batch_size=3):
        self.tokenizer, self.batch_size, self.calls, self.queue = _Tok(), batch_size, [], []

    def render_ids(self, messages):
        return [7, len(messages[-1]["content"])]

    def submit(self, requests, sampling):
        self.calls.append((list(requests), sampling))
        self.queue += units(requests, self.batch_size)

    def unfinished(self):
        return sum(len(u) for u in self.queue)

    def poll(self):
        unit = self.queue.pop(0)
        return [(r.id, Generation.from_ids(" 4.", [1, 2], "stop")) for r in unit]


def test_every_arm_submits_the_same_requests_in_the_same_units_with_one_seed():
    """The shared stream: each arm alone, ids 0..n-1 in order, sample 0, the one Sampling; so unit k holds the same
    problems at the same rows in every arm (the engine seeds a unit once, a row draws from its own slice)."""
    from recipe_bcr.data.prompt import build_messages
    from recipe_bcr.grading.verify import default_verifier

    rng = random.Random(0)
    problems = [make_problem(rng, _spec(), k) for k in range(7)]
    messages = [build_messages([p.question]) for p in problems]
    forced = {a: [f"arm {a} text {i}" for i in range(7)] for a in ("x", "y", "z")}
    engine, sampling = FakeEngine(), Sampling(temperature=1.0, top_p=1.0, seed=236, max_tokens=9)
    got = run_arms(engine, problems, messages, forced, sampling, default_verifier())
    assert set(got) == set(forced) and all(len(v) == 7 for v in got.values())
    assert [c[1] for c in engine.calls] == [sampling] * 3
    layouts = [[[(r.id, r.sample) for r in u] for u in units(reqs, engine.batch_size)] for reqs, _ in engine.calls]
    assert layouts[0] == layouts[1] == layouts[2] == [[(0, 0), (1, 0), (2, 0)], [(3, 0), (4, 0), (5, 0)], [(6, 0)]]
    for reqs, _ in engine.calls:
        assert [r.messages for r in reqs] == messages


def _spec():
    from recipe_bcr.miniature.toy.model import load_specs

    return load_specs(["config=toy_compete"])[0]


def _base():
    from recipe_bcr.miniature.toy.model import RESOURCES

    return RESOURCES / "toy_model_compete"


def test_a_row_samples_from_its_own_stream_whatever_the_other_rows_hold():
    """What the shared seed rests on, on the committed toy_compete base: two arms with the same seed and batches
    that differ in rows 1 and 2 give rows 0 and 3 the same continuation, token for token."""
    import torch

    from recipe_bcr.engines.base import drain
    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.miniature.toy.interventions import arm_requests

    torch.set_num_threads(1)
    engine = TransformersEngine(str(_base()), dtype="float32", batch_size=4)
    rng = random.Random(1)
    problems = [make_problem(rng, _spec(), k) for k in range(4)]
    from recipe_bcr.data.prompt import build_messages

    messages = [build_messages([p.question]) for p in problems]
    sampling = Sampling(temperature=1.0, top_p=1.0, seed=5, max_tokens=120)
    out = []
    for forced in (
        ["### Problem 1\n"] * 4,
        ["### Problem 1\n", "### Problem 1\nHmm.", "### Problem 1\nOk.", "### Problem 1\n"],
    ):
        engine.submit(arm_requests(engine, messages, forced), sampling)
        out.append(dict(drain(engine)))
    assert out[0][0].token_ids == out[1][0].token_ids and out[0][3].token_ids == out[1][3].token_ids
    assert out[0][0].num_tokens > 10


SMALL = [
    "preconditions.problems=3",
    "preconditions.groups_n3=2",
    "preconditions.groups_n5=1",
    "preconditions.interventions=2",
]


def _recorded_regime(monkeypatch, overrides):
    import torch

    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.miniature.toy.preconditions import measure_regime

    calls, submit = [], TransformersEngine.submit

    def record(self, requests, sampling):
        calls.append(([(r.id, r.prompt_ids, r.sample) for r in requests], sampling))
        return submit(self, requests, sampling)

    torch.set_num_threads(1)
    pre = load_preregistration([*SMALL, *overrides])["preconditions"]
    with monkeypatch.context() as m:
        m.setattr(TransformersEngine, "submit", record)
        return measure_regime(_base(), _spec(), [1, 2, 3, 4, 5], pre, batch_size=8), calls, pre


def test_the_second_registrations_arms_are_unchanged_and_the_paired_block_adds_every_f3_key(monkeypatch):
    """Without `preconditions.paired` (paper.yaml as committed) the requests and seeds are the second registration's
    (N=1/3/5 at seed + 1000 N, the first pass at + 7, its three arms at + 100..102, nothing else); with it, the same
    requests come first and the shared-seed arms follow, each arm with one seed, every value F3 reads and its se out."""
    old, old_calls, pre = _recorded_regime(monkeypatch, [])
    seed = int(pre["seed"])
    assert "paired" not in load_preregistration()["preconditions"]
    assert "interventions" not in old
    assert [s.seed - seed for _, s in old_calls] == [1000, 3000, 5000, 7, 100, 101, 102]

    new, new_calls, _ = _recorded_regime(
        monkeypatch, ["preconditions.paired.long_problems=3", "preconditions.paired.start_problems=3"]
    )
    assert new_calls[: len(old_calls)] == old_calls
    same = json.dumps([old["values"], old["details"]], sort_keys=True)  # NaN-safe: a tiny run leaves some NaN
    assert json.dumps([new["values"], new["details"]], sort_keys=True) == same
    extra = [s.seed - seed for _, s in new_calls[len(old_calls) :]]
    assert extra == [200] + [201] * len(END_ARMS) + [202] * len(START_ARMS)
    end_calls = new_calls[len(old_calls) + 1 : len(old_calls) + 1 + len(END_ARMS)]
    assert len({tuple((i, k) for i, _, k in reqs) for reqs, _ in end_calls}) == 1  # same ids, same order, sample 0

    iv = new["interventions"]
    assert set(iv["values"]) == {k for name in EFFECTS for k in (name, f"{name}_se")}
    assert all(v == v for v in iv["values"].values()) or iv["details"]["long_problems_kept"] < 2
    assert iv["details"]["start_problems"] == 3 and iv["details"]["long_problems_drawn"] == 3
    assert set(iv["pairs"]) == set(END_ARMS) | set(START_ARMS)
    # F3 reads these keys (rules.f3_categories): useful_gain and effect_{kind} for the inert kinds
    for key in ("useful_gain", "effect_narration", "effect_filler", "effect_inert_recheck", "effect_restatement"):
        assert key in iv["values"] and f"{key}_se" in iv["values"]


def test_base_preconditions_json_holds_the_interventions_only_when_they_were_measured(monkeypatch, tmp_path):
    """toy_command.measure_base: paper.yaml's file keeps its keys; with `preconditions.paired` the values, details and
    each arm's per-problem correctness ("1"/"0" in problem order) join it."""
    from recipe_bcr.miniature import toy_command as toy
    from recipe_bcr.miniature.toy import preconditions as pc

    got = {"values": {k: 0.5 for k in pc.REGIME_CHECKS}, "details": {"budget_n3": 309}}
    monkeypatch.setattr(toy, "ensure_model", lambda *a, **k: _base())
    monkeypatch.setattr(pc, "measure_regime", lambda *a, **k: dict(got))
    toy.measure_base(tmp_path / "a", [])
    plain = json.loads((tmp_path / "a" / "base_preconditions.json").read_text())
    assert "interventions" not in plain and plain["details"] == {"budget_n3": 309}
    got["interventions"] = {"values": {"useful_gain": 0.3}, "details": {"n": 2}, "pairs": {"closed": [True, False]}}
    toy.measure_base(tmp_path / "b", [])
    written = json.loads((tmp_path / "b" / "base_preconditions.json").read_text())
    assert written["interventions"] == {"values": {"useful_gain": 0.3}, "details": {"n": 2}, "pairs": {"closed": "10"}}
    assert {k: v for k, v in written.items() if k not in ("interventions", "launched_at")} == {
        k: v for k, v in plain.items() if k != "launched_at"
    } | {"made_by": written["made_by"]}
