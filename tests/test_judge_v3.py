"""The third registration's findings (recipe_bcr/miniature/paper/judge_v3.py) on a planted folder: arms built so
that every finding should read "reproduced" do, and a trained baseline outside its registered range makes F1 alone
"not interpretable"; the report is written from the same dict."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

import pytest

from recipe_bcr.grading.reward import score_completion
from recipe_bcr.grading.verify import Verifier
from recipe_bcr.miniature.paper import command as paper
from recipe_bcr.miniature.paper import judge_v3, section_faults, summary, writeup_v3
from recipe_bcr.miniature.toy.model import load_specs
from recipe_bcr.miniature.toy.preconditions import load_preregistration, registration
from recipe_bcr.miniature.toy.task import (
    CHECK,
    CLOSING,
    FILLERS,
    INERT_CHECK,
    NARRATION,
    RESTATE,
    benchmark_problems,
    chain,
    written_steps,
)

V3 = load_preregistration(name="paper_v3")
SPEC = load_specs([f"config={V3['toy']}"])[0]
PROBLEMS = benchmark_problems(40, 35, SPEC)
B = 400
CAPS = {o: 20 * o + 40 for o in range(1, 7)}


def _section(i: int, problem, verbose: bool, label: int | None = None, restates: str | None = None) -> str:
    """Problem i's section; `label`: the number its answer label carries (default i); `restates`: a chain it
    restates after its narration."""
    steps, value = written_steps(problem, random.Random(0), SPEC, 0.0)
    check, _ = written_steps(problem, random.Random(0), SPEC, 0.0, check=True)
    long = len(chain(problem)[1]) >= V3["preconditions"]["long_chain_ops"]
    q = problem.question[8:-1]
    parts = [NARRATION, steps, *FILLERS, INERT_CHECK.format(q, value)] if verbose else [steps]
    parts[1:1] = [RESTATE.format(restates)] if restates else []
    parts += [CHECK, check] if long or verbose else []
    return f"### Problem {i}\n{' '.join([*parts, CLOSING.format(value)])}\nAnswer{label or i}: \\boxed{{{value}}}"


def _written_right(problem) -> bool:
    """The planted section's answer is the gold (the toy's knowledge gaps make some written steps wrong)."""
    return str(written_steps(problem, random.Random(0), SPEC, 0.0)[1]) == problem.answers[0]


def _records(arm: str, n: int) -> list[dict]:
    """N=n groups over the planted problems: correct by a per-problem rule (the same in every seed), the baseline's
    later problems lost at larger N, BCR's kept; tokens per problem 120 (verbose arms) or 60 - n (BCR). The base at
    N >= 4 labels its last answer with the number before it and restates the first problem's chain there."""
    out = []
    for g in range(len(PROBLEMS) // n):
        group = PROBLEMS[g * n : (g + 1) * n]
        verbose = arm != "bcr"
        slip = arm == "verbose" and n >= 4
        text = "\n\n".join(
            _section(i + 1, p, verbose, *((n - 1, group[0].question[8:-1]) if slip and i == n - 1 else ()))
            for i, p in enumerate(group)
        )
        probs = []
        for i, p in enumerate(group):
            k = PROBLEMS.index(p)
            lost = arm == "baseline" and i >= 1 and k % 3 == 0  # the baseline degrades with N
            answer = None if lost else "1"  # lost: the section never written
            correct = k % 7 != 0 and not lost
            probs.append({"id": f"Toy-{k}", "scored": True, "correct": correct, "answer": answer, "gold": p.answers})
        tokens = n * (120 if verbose else 60 - n)
        out.append(
            {"n": n, "problems": probs, "generated_tokens": tokens, "completion": text, "prompt": _prompt(group)}
        )
    return out


def _prompt(group) -> list[dict]:
    return [{"role": "user", "content": "\n".join(f"### Problem {i + 1}\n{p.question}" for i, p in enumerate(group))}]


def _eval(root: Path, label: str, arm: str, ns=(1, 2, 3, 4, 5)) -> None:
    out = root / "eval" / label
    out.mkdir(parents=True)
    recs = [r for n in ns for r in _records(arm, n)]
    (out / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (out / "summary.json").write_text(
        json.dumps([{"n": n, "benchmark": "Toy", "acc": 0.8, "tokens_per_problem": 60.0} for n in ns])
    )


def _metrics(steps=60, acc=lambda s: 0.8, length=200.0) -> list[dict]:
    return [
        {
            "step": s,
            "bcr/truncation_rate": max(0.1, 1 - s / 40),
            "bcr/fmt": min(1.0, s / 20),
            "bcr/acc_pos1": 0.9,
            "bcr/acc_pos3": 0.85,
            "bcr/acc": acc(s),
            "critic/score/mean": 0.5 + s / 100,
            "response_length/mean": length,
        }
        for s in range(1, steps + 1)
    ]


def _plant(root: Path, run, metrics, lengths=None) -> None:
    out = root / "runs" / run.name
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({**run.__dict__, "extra": [], "steps": len(metrics)}))
    (out / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in metrics))
    for step, ls in enumerate(lengths or [], start=1):
        (out / "rollouts").mkdir(exist_ok=True)
        rows = [{"input": f"p{g}", "output": "x", "score": 0.0, "step": step, "uid": f"u{g}_{k}_0", "response_tokens": x}
                for g in range(2) for k, x in enumerate(ls)]  # fmt: skip
        (out / "rollouts" / f"{step}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _pre(baseline_ok: bool = True) -> dict:
    th = V3["preconditions"]["thresholds"]
    rows = [
        {"name": k, "value": 0.9 if k == "allocator_share" else 0.2, "range": v, "met": True} for k, v in th.items()
    ]
    values = {"useful_gain": 0.3, "effect_filler": 0.0, "effect_inert_recheck": 0.005, "effect_narration": -0.004}
    return {"rows": rows, "interventions": {"values": values}, "registration": registration(name="paper_v3")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("v3")
    _eval(root, "base", "verbose")
    runs = paper.plan_part(V3, B, "main", CAPS) + paper.plan_part(V3, B, "ablations", CAPS)
    for run in runs:
        arm = {"main": "bcr", "budget": "bcr"}.get(run.group, "baseline" if run.name.startswith("baseline") else "cap")
        if run.group == "reward":
            falling = _metrics(acc=lambda s: 0.8 if s <= 30 else 0.2, length=50.0)
            _plant(root, run, falling, lengths=[[60, 120, 200, 300]] * 20)
            continue
        _plant(root, run, _metrics())
        _eval(root, run.name, arm, ns=(1,) if run.group == "budget" else (1, 2, 3, 4, 5))
        if run.group == "budget":  # more budget, more tokens
            path = root / "eval" / run.name / "samples.jsonl"
            recs = [json.loads(x) for x in path.read_text().splitlines()]
            path.write_text("".join(json.dumps({**r, "generated_tokens": run.budget / 10}) + "\n" for r in recs))
    return root


@pytest.fixture(scope="module")
def count():
    from tokenizers import Tokenizer

    from recipe_bcr.miniature.toy.model import RESOURCES

    tok = Tokenizer.from_file(str(RESOURCES / "toy_model_compete" / "tokenizer.json"))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _context() -> dict:
    return {"registration": registration(name="paper_v3"), "launched_at": "2026-11-28T20:00:00Z", "overrides": [],
            "train_steps": 60, "budget": {"B": B, "lambda": 0.75}, "oracle_caps": CAPS}  # fmt: skip


def test_arms_built_to_reproduce_every_finding_do(folder, count, tmp_path):
    result = judge_v3.judge(folder, V3, _pre(), count, _context())
    assert result["interpretable"], result["diagnosis"]
    verdicts = {fid: f["verdict"] for fid, f in result["findings"].items()}
    assert verdicts == {fid: "reproduced" for fid in ("F1", "F2", "F3", "F4", "F5")}, {
        fid: {k: v for k, v in f.items() if k != "penalties"} for fid, f in result["findings"].items()
    }
    assert result["findings"]["F1"]["seeds"] == [5, 5]
    assert set(result["against_controls"]) == {"baseline_n1", "truncation_n1", "oracle_cap_n1"}
    assert set(result["controls"]) == set(judge_v3.ARMS)
    assert result["over_n"]["bcr"]["3"]["tokens"] == [57.0] * 5  # 60 - N tokens per problem, every seed
    lost = result["by_position"]["baseline_n1"]["2"]  # the baseline's later sections go unwritten, BCR's do not
    assert lost[0]["no_answer"] == 0 < lost[1]["no_answer"] and lost[1]["acc"] < lost[0]["acc"]
    assert {c["no_answer"] for cells in result["by_position"]["bcr"].values() for c in cells} == {0.0}
    assert set(result["over_n"]) == {"base", *judge_v3.ARMS}
    base = result["by_position"]["base"]  # its last answer at N >= 4 labelled for the problem before it
    assert [c["other_label"] for c in base["4"]] == [c["wrong_question"] for c in base["4"]] == [0, 0, 0, 1]
    assert {c["other_label"] for n in "123" for c in base[n]} == {0}
    curve = result["over_n"]["base"]  # read under its own header, every planted answer is read as written
    written = [_written_right(p) for p in PROBLEMS[: len(PROBLEMS) // 4 * 4]]
    assert curve["4"]["acc_by_header"] == [pytest.approx(sum(written) / len(written))] != curve["4"]["acc"]
    assert curve["3"]["acc_by_header"] == curve["3"]["acc"]
    chains = result["by_chain_n1"]  # N=1 by chain length: every evaluated arm, the planted 59 tokens for BCR
    assert set(chains) == {"base", *judge_v3.ARMS} and {c["tokens"] for c in chains["bcr"].values()} == {59.0}
    kinds = result["text_kinds_n1"]  # what F3 compares, for every arm: the verbose base's filler, BCR's cut
    assert set(kinds) == set(chains) and kinds["bcr"]["filler"] < 0.5 * kinds["base"]["filler"]
    slopes = result["final_slopes"]["runs"]  # flat planted accuracy: every main-part run at a plateau
    assert len(slopes) == len(paper.plan_part(V3, B, "main", CAPS)) and {round(x, 9) for x in slopes.values()} == {0}
    root = tmp_path / "v3"
    shutil.copytree(folder, root)
    text = writeup_v3.write(root, result, "test").read_text()
    assert "**F1: reproduced.**" in text and "| oracle_cap_n1 |" in text
    assert "| base | 1 | " in text and "| bcr | 5 | " in text  # over N: the base's row, BCR's over its seeds
    assert "| baseline_n1 | 2 | " in text and "| section 5 |" in text  # where accuracy went, by section
    assert "| base | 0 / 0 | 0 / 0 | 0 / 0 | 25 / 25 | 20 / 20 |" in text  # one section of 4, of 5
    assert "bcr_n3 +0.00, +0.00, +0.00, +0.00, +0.00;" in text  # last-window slopes, by arm and seed
    assert "precondition `n5_acc_drop`, measured on the base's own sets, was 20.0 points" in text
    assert {p.name for p in (root / "figures").iterdir()} == {"training_curves.png", "over_n.png"}
    assert "| truncation step 1 -> last 20 |" in text and "(last 20)" in text  # the registered windows
    assert (
        "| arm | narration | restatement | filler |" in text
        and f"| bcr | {100 * chains['bcr']['1']['acc']:.1f} (59) |" in text
    )
    json.loads((root / "findings.json").read_text())


def test_the_readme_blocks_state_the_third_registrations_findings(folder, count, tmp_path):
    """summary.blocks reads a third-registration findings.json: its verdicts, F1's interval and the arms over N."""
    result = judge_v3.judge(folder, V3, _pre(), count, _context())
    root = tmp_path / "v3"
    shutil.copytree(folder, root)
    writeup_v3.write(root, result, "test")
    got = summary.blocks(root)
    f1 = result["findings"]["F1"]
    assert "F1 reproduced, F2 reproduced" in got["status"] and "(F1): reproduced.**" in got["results"]
    assert f"{f1['diff_pts']:+.1f} points (90% CI {f1['ci_pts'][0]:+.1f}..{f1['ci_pts'][1]:+.1f})" in got["results"]
    bcr = 100 * sum(result["over_n"]["bcr"]["1"]["acc"]) / 5
    assert f"| BCR (N=3 under B={B}) | 5 | {bcr:.1f} |" in got["results"]
    bcr4 = 100 * sum(result["over_n"]["bcr"]["4"]["acc"]) / 5  # BCR's planted answers all carry their own labels
    assert f"at N=4/N=5 its accuracy is {bcr4:.1f}/" in got["results"]
    assert "0/0% of its sections carry another problem's answer label" in got["results"]
    older = json.loads(json.dumps(result))  # findings made before the reading: no line, no error
    for curve in older["over_n"].values():
        for cell in curve.values():
            del cell["acc_by_header"]
    assert summary.later_answers(older) == ""
    result["findings"]["F2"] = {"verdict": "not testable", "n": [1, 5], "testable": False, "ok": None}
    writeup_v3.write(root, result, "test")
    assert "(F2): not testable.** BCR's tokens per problem at N = 1..5: not computed" in summary.blocks(root)["results"]


def test_a_trained_baseline_off_its_range_makes_f1_alone_not_interpretable(folder, count, monkeypatch):
    cfg = json.loads(json.dumps(V3))
    cfg["findings"]["F1"]["baseline_acc_range"] = [0.95, 0.99]  # the planted baseline sits near 0.8
    result = judge_v3.judge(folder, cfg, _pre(), count, _context())
    assert result["findings"]["F1"]["verdict"] == "not interpretable"
    assert result["findings"]["F4"]["verdict"] == "reproduced"
    missed = _pre()
    missed["rows"][0]["met"] = False
    every = judge_v3.judge(folder, V3, missed, count, _context())
    assert {f["verdict"] for f in every["findings"].values()} == {"not interpretable"}


def test_f5_reads_a_committed_compressed_dump_as_verl_wrote_it(folder, count, tmp_path):
    """A penalty run's rollouts committed as `<step>.jsonl.gz` (what a fresh clone holds) judge F5 as the plain dump."""
    plain = judge_v3.judge(folder, V3, _pre(), count, _context())["findings"]["F5"]
    root = tmp_path / "v3"
    shutil.copytree(folder, root)
    for path in root.glob("runs/*/rollouts/*.jsonl"):
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        path.unlink()
    assert judge_v3.judge(root, V3, _pre(), count, _context())["findings"]["F5"] == plain


def test_a_penalty_run_without_the_rollouts_f5_reads_is_refused_not_judged_untestable(folder, count, tmp_path):
    root = tmp_path / "v3"
    shutil.copytree(folder, root)
    run = next(p.parent for p in sorted(root.glob("runs/*/rollouts")))
    (run / "rollouts" / "20.jsonl").unlink()  # e.g. a dump left on a machine that was not kept
    with pytest.raises(ValueError, match=rf"{run.name}/rollouts lacks the rollouts of step\(s\) 20\.\.20 that F5"):
        judge_v3.judge(root, V3, _pre(), count, _context())


def test_section_faults_read_labels_and_restated_questions_per_section():
    """A fourth answer labelled "Answer3" is renamed to its header's number, and only then does the grader read it as
    problem 4's; a restated chain is compared with the section's own question."""
    group = [p for p in PROBLEMS if _written_right(p)][:4]
    text = "\n\n".join(
        _section(i + 1, p, True, *((3, group[0].question[8:-1]) if i == 3 else ())) for i, p in enumerate(group)
    )
    fixed, changed = section_faults.relabelled(text)
    assert changed == 1 and fixed.count("Answer3:") == 1 and fixed.count("Answer4:") == 1
    assert section_faults.relabelled(fixed) == (fixed, 0)
    rec = {"n": 4, "prompt": _prompt(group), "completion": text}
    assert [(f["other_label"], f["wrong_question"]) for f in section_faults.faults(rec)] == [(False, False)] * 3 + [
        (True, True)
    ]
    verifier = Verifier(workers=1)
    try:
        scored = score_completion(text, [p.answers[0] for p in group], verifier)
        assert scored.correct == [True, True, False, False]  # two answers for problem 3, none for 4
        problems = [{"gold": list(p.answers), "scored": True, "correct": ok} for p, ok in zip(group, scored.correct)]
        assert section_faults.header_accuracy([{**rec, "problems": problems}], verifier) == 1.0
        bare = [{k: v for k, v in p.items() if k != "gold"} for p in problems]
        with pytest.raises(ValueError, match="carry no `gold`"):
            section_faults.header_accuracy([{**rec, "key": "Toy|n4|g0|s0", "problems": bare}], verifier)
    finally:
        verifier.close()
