"""The path to the committed main part: every earlier main part, rerun and pilot, with the registration it ran under,
its settings, its gates per BCR seed and its verdicts, read from each folder's own records, and what was changed
after it. `python -m recipe_bcr.miniature.paper.history --write` writes `benchmarks/paper/history.json` (a strict-JSON
snapshot, so a checkout without git history still has it) and the section "Earlier main parts and pilots (the path)"
between the `<!-- path:begin -->` / `<!-- path:end -->` markers of benchmarks/paper/report.md and docs/miniature.md;
`--check` exits 1 when any of the three differs from what `--write` would write.

A folder that left the tree is read with `git show <commit>:<path>` at the last commit that held it (its `where`), or,
where git or that commit is not there, taken from the snapshot. The folders still in the tree are read from the tree. The only
hand-written parts are `FOLDERS` below: which folders, in the order they ran, and the one-line note on what was
changed after each (a person's reading; the settings that differ from the row before are computed).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
COMMIT = "ba05637e0f50dc2f2e72f605f17e09300b7bdfbc"  # the last commit holding the first two registrations' folders
AMENDMENT2 = "2245be765d3d25829c148bdbe065c94d435e63d0"  # the last commit holding paper_v3's pilots under amendment 2
TOY_GAPS = "34ed6e32fec1f75607baeccaf8aee3acb965d7a6"  # the last commit holding toy_gaps' base and toy pilot
# the last commit holding the second registration's 16-prompt pilots (pilot16/) and its fresh-clone rerun
V2_RERUN = "b28ec3c75bebdc2f16e0aa6b4872e79d0560c32d"
# the last commit holding the second registration's main part's runs/ and eval/
V2_MAIN = "6121d0c87b6368011da274c614fa827819283917"
SNAPSHOT = Path("benchmarks") / "paper" / "history.json"
REPORT = Path("benchmarks") / "paper" / "report.md"
DOCS = Path("docs") / "miniature.md"
BEGIN, END = "<!-- path:begin -->", "<!-- path:end -->"
HEADING = "## Earlier main parts and pilots (the path)"
NOT_RECORDED = "not recorded"
NO_RUN = "none (no run)"
# The gates the second registration first wrote down (76d82aa): the first miniature registered none, so its runs are
# judged by these afterwards, from their per-step metrics.
FIRST_GATES = "benchmarks/paper/pilot/plan.json"


@dataclass(frozen=True)
class Folder:
    path: str  # the folder, relative to the repository root
    kind: str  # "main part", "rerun" (the same command from a fresh clone), "pilot", "trial"
    form: str  # "v1" (findings.json + paper_config.json), "part" (findings.json + plan.json), "pilot" (pilot.json +
    # plan.json), "base" (plan.json + base_preconditions.json [+ toy_pilot.json]: a registration stopped at its base)
    where: str  # "tree", or the commit (40 hex digits) whose tree holds the folder after it left ours
    registration: str  # the registration when the folder records none of its own
    next: str  # hand-written: what was changed after this result


V1 = "first miniature (`paper.yaml`, later `paper_v1.yaml`)"
V2 = "`paper.yaml`"
V3 = "`paper_v3.yaml`"
FOLDERS: tuple[Folder, ...] = (
    Folder(
        "benchmarks/paper_24_steps",
        "trial",
        "v1",
        COMMIT,
        V1,
        "the whole first command: 3 seeds, 40 steps, the ablations (next row)",
    ),
    Folder(
        "benchmarks/paper_v1",
        "main part",
        "v1",
        COMMIT,
        V1,
        "the same command from a fresh clone (next row)",
    ),
    Folder(
        "benchmarks/paper_fresh_clone",
        "rerun",
        "v1",
        COMMIT,
        V1,
        "the mechanism never engaged (format 0 at every step): a second registration (`paper.yaml`) with gates, "
        "controls and a two-sided fit",
    ),
    Folder(
        "benchmarks/paper/pilot",
        "pilot",
        "pilot",
        COMMIT,
        V2,
        "the same pilot on the faster CPU step (7700c18)",
    ),
    Folder(
        "benchmarks/paper/pilot_rerun",
        "pilot",
        "pilot",
        COMMIT,
        V2,
        "format reached 0.90 after step 50 on float rounding alone: lr 4e-4 (2372aa8)",
    ),
    Folder("benchmarks/paper/pilot_lr4", "pilot", "pilot", COMMIT, V2, "the main part at lr 4e-4"),
    Folder("benchmarks/paper/lr4", "main part", "part", COMMIT, V2, "the same command from a fresh clone"),
    Folder(
        "benchmarks/paper/lr4/fresh_clone",
        "rerun",
        "part",
        COMMIT,
        V2,
        "seed 0 lost first-position accuracy in 3 of 4 runs at 4e-4: diagnostic pilots of seed 3 at 4e-4 and 2e-4",
    ),
    Folder("benchmarks/paper/pilot_lr3/lr4_s3", "pilot", "pilot", COMMIT, V2, "(run beside the next row)"),
    Folder(
        "benchmarks/paper/pilot_lr3/lr2_s3",
        "pilot",
        "pilot",
        COMMIT,
        V2,
        "lr 3e-4 registered with a rule to keep it or return to 2e-4 (303e4ea), piloted on seeds 3 and 4",
    ),
    Folder("benchmarks/paper/pilot_lr3/s3", "pilot", "pilot", COMMIT, V2, "(run beside the next row)"),
    Folder(
        "benchmarks/paper/pilot_lr3/s4",
        "pilot",
        "pilot",
        COMMIT,
        V2,
        "3e-4 missed its rule (last position, reward trend): the main part at 2e-4 (e9ebbc4)",
    ),
    Folder("benchmarks/paper/prompts8", "main part", "part", COMMIT, V2, "the same command from a fresh clone"),
    Folder(
        "benchmarks/paper/prompts8/fresh_clone",
        "rerun",
        "part",
        COMMIT,
        V2,
        "format's step 50 split seeds by chance at 8 prompts: 16 prompts a step (f97213e), piloted first",
    ),
    Folder("benchmarks/paper/pilot16/s3", "pilot", "pilot", V2_RERUN, V2, "(run beside the next row)"),
    Folder(
        "benchmarks/paper/pilot16/s4",
        "pilot",
        "pilot",
        V2_RERUN,
        V2,
        "both met every gate on their first 60 steps: the main part at 60 steps by the steps rule",
    ),
    Folder("benchmarks/paper/arrival_batches", "main part", "part", COMMIT, V2, "the same command from a fresh clone"),
    Folder(
        "benchmarks/paper/arrival_batches/fresh_clone",
        "rerun",
        "part",
        COMMIT,
        V2,
        "which rows shared a rollout batch depended on arrival: the HF rollout sorts a step before batching it "
        "(162652a); the main part again",
    ),
    Folder("benchmarks/paper", "main part", "part", V2_MAIN, V2, "the same command from a fresh clone"),
    Folder(
        "benchmarks/paper/fresh_clone",
        "rerun",
        "part",
        V2_RERUN,
        V2,
        "a third registration (accuracy-based steps rule, a window format gate, a trained baseline off the ceiling)",
    ),
    Folder(
        "benchmarks/paper_v3/toy_gaps",
        "base",
        "base",
        TOY_GAPS,
        V3,
        "the toy amended (`toy_gaps_fill`: up to 28 fillers, so the fit rule's B leaves room for the useful "
        "re-checks; the fit rule simulated before its base was built)",
    ),
    Folder(
        "benchmarks/paper_v3/toy_gaps_fill",
        "base",
        "base",
        "tree",
        V3,
        "its N=5 sections copied neighbours' questions from far back: two designs explored before the last candidate "
        "(`toy_gaps_fill20`: 20 fillers; `toy_gaps_fill_deep`: a fourth layer; registration_v3.md section 10)",
    ),
    Folder(
        "benchmarks/paper_v3/toy_gaps_fill20",
        "base",
        "base",
        "tree",
        V3,
        "every precondition met (n5_acc_drop 0.098 against <= 0.10): named the last candidate (registration_v3.md "
        "section 10); toy_gaps_fill_deep not measured; its pilots follow (next row)",
    ),
    Folder(
        "benchmarks/paper_v3/pilots_amendment2",
        "pilot",
        "base",
        AMENDMENT2,
        V3,
        "truncation fell from ~0.81 to ~0 inside the gate's first window, so an engaged run missed the gate: "
        "amendment 3 (registration_v3.md section 11) starts it at step 1, the base's own rollouts; the pilots "
        "run again under it",
    ),
)
# Attempts stopped before they kept any record (hand-written: no folder holds them): what ran, how far, and why it
# stopped.
STOPPED: tuple[str, ...] = (
    "toy_gaps_fill's toy pilot (both baseline seeds), chained after its base's measurement: stopped after ~7 minutes "
    "(a few steps) when the base's miss of n5_acc_drop was read; nothing kept",
    "toy_gaps_fill20's toy pilot, first start (registration 117dcd79755b93a8, launched 2026-11-29T07:12:33Z): 13 of "
    "150 steps per seed, run beside the test suite, which its memory starved; stopped, its files moved out of the "
    "tree, and the pilot started afresh on a quiet machine (a new launched_at); no verdict",
)
SETTINGS = ("toy", "lr", "prompts_per_step", "rollouts", "steps", "steps_registered", "budget", "seeds")


class HistoryError(Exception):
    """A record could not be read and no snapshot holds it; the message names the file, the commit and the fix."""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"git {' '.join(args)} exited {done.returncode}")
    return done.stdout


class _Reader:
    """One folder's files: from git at COMMIT, or from the tree."""

    def __init__(self, repo: Path, folder: Folder):
        self.repo, self.folder = repo, folder

    def text(self, name: str) -> str:
        path = f"{self.folder.path}/{name}"
        if self.folder.where != "tree":
            return _git(self.repo, "show", f"{self.folder.where}:{path}")
        return (self.repo / path).read_text(encoding="utf-8")

    def json(self, name: str) -> Any:
        return _strict(json.loads(self.text(name)))

    def names(self, under: str) -> list[str]:
        """File names under `under` (relative to the folder)."""
        base = f"{self.folder.path}/{under}"
        if self.folder.where != "tree":
            out = _git(self.repo, "ls-tree", "-r", "--name-only", self.folder.where, base + "/")
            return sorted(line[len(self.folder.path) + 1 :] for line in out.splitlines() if line)
        root = self.repo / base
        return sorted(str(p.relative_to(self.repo / self.folder.path)) for p in root.rglob("*") if p.is_file())


def _strict(x: Any) -> Any:
    """NaN and infinities (the earliest records wrote them) as null: the snapshot is strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_strict(v) for v in x]
    return x


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return NOT_RECORDED
        d = d[k]
    return d


def _registration(record: dict[str, Any], folder: Folder) -> dict[str, Any]:
    reg = record.get("registration")
    if isinstance(reg, dict):
        return {
            "config": folder.registration,
            "id": reg.get("id") or NOT_RECORDED,
            "commit": reg.get("commit") or NOT_RECORDED,
        }
    commit = record.get("thresholds_commit")
    return {"config": folder.registration, "id": NOT_RECORDED, "commit": commit or NOT_RECORDED}


def _v2_settings(record: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    s = plan.get("settings", {})
    return {
        "toy": _get(s, "toy"),
        "lr": _get(s, "grpo", "lr"),
        "prompts_per_step": _get(s, "grpo", "prompts_per_step"),
        "rollouts": _get(s, "grpo", "rollouts"),
        "steps": _get(record, "train_steps"),
        "steps_registered": _get(record, "train_steps_registered"),
        "budget": _get(record, "budget", "B"),
        "seeds": _get(s, "seeds"),
        "overrides": record.get("overrides", NOT_RECORDED),
    }


def _gate_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"run": r["run"], "steps": r.get("steps", NOT_RECORDED), "gates": r["gates"]} for r in runs]


_V1_VERDICT = re.compile(r"^(\d+)\. \*\*.*?\*\*: \*\*([^*]+)\*\*")


def _v1_verdicts(findings: list[Any]) -> dict[str, str]:
    out = {}
    for f in findings:
        if isinstance(f, dict):
            out[f"F{f['id']}"] = f["verdict"]
        else:
            m = _V1_VERDICT.match(f)
            if m:
                out[f"F{m.group(1)}"] = m.group(2)
    return out


def _v1_gates(reader: _Reader, repo: Path) -> tuple[list[dict[str, Any]], str]:
    """The first miniature's BCR seeds judged afterwards by the gates first registered, from runs/*/metrics.jsonl."""
    from recipe_bcr.miniature.paper.rules import gates

    metas = [n for n in reader.names("runs") if n.endswith("/run.json")]
    first = json.loads(_git(repo, "show", f"{COMMIT}:{FIRST_GATES}"))["settings"]["gates"] if metas else None
    out = []
    for meta in metas:
        run = reader.json(meta)
        if run.get("group") != "main" or run.get("single"):
            continue
        rows = [json.loads(x) for x in reader.text(meta.replace("run.json", "metrics.jsonl")).splitlines() if x.strip()]
        out.append({"run": run["name"], "steps": len(rows), "gates": _strict(gates(rows, int(run["n"]), first))})
    if not out:
        return [], "none registered; no per-step metrics kept"
    return out, f"none registered; judged afterwards by the gates first registered, `{COMMIT[:7]}:{FIRST_GATES}`"


def extract(folder: Folder, repo: Path) -> dict[str, Any]:
    """One folder's row, read from its records (OSError when a file cannot be read)."""
    r = _Reader(repo, folder)
    row: dict[str, Any] = {
        "folder": folder.path,
        "at": folder.where,
        "kind": folder.kind,
    }
    if folder.form == "v1":
        found, cfg = r.json("findings.json"), r.json("paper_config.json")
        budget = _get(cfg, "bcr", "tokens_per_problem")
        if isinstance(budget, int):
            budget = budget * int(_get(cfg, "bcr", "n"))
        else:
            metas = [n for n in r.names("runs") if n.endswith("/run.json")] if budget == "calibrated" else []
            runs = [r.json(n) for n in metas]
            budgets = {run["budget"] for run in runs if run.get("group") == "main" and not run.get("single")}
            budget = budgets.pop() if len(budgets) == 1 else NOT_RECORDED
        gates, basis = _v1_gates(r, repo)
        row |= {
            "registration": {"config": folder.registration, "id": NOT_RECORDED, "commit": NOT_RECORDED},
            "launched_at": NOT_RECORDED,
            "settings": {
                "toy": _get(cfg, "toy"),
                "lr": _get(cfg, "grpo", "lr"),
                "prompts_per_step": _get(cfg, "grpo", "prompts_per_step"),
                "rollouts": _get(cfg, "grpo", "rollouts"),
                "steps": _get(cfg, "train_steps"),
                "steps_registered": NOT_RECORDED,
                "budget": budget,
                "seeds": _get(cfg, "seeds"),
                "overrides": NOT_RECORDED,
            },
            "gates_basis": basis,
            "gates": gates,
            "interpretable": NOT_RECORDED,
            "verdicts": _v1_verdicts(found["findings"]),
        }
    elif folder.form == "base":
        row |= _base_row(r)
    else:
        record, plan = r.json("pilot.json" if folder.form == "pilot" else "findings.json"), r.json("plan.json")
        settings = _v2_settings(record, plan)
        if folder.form == "pilot":  # a pilot trains one seed: its run's, whatever the plan's seeds
            runs = [{"run": record["run"], "steps": record.get("train_steps", NOT_RECORDED), "gates": record["gates"]}]
            settings["seeds"] = [int(record["run"].rsplit("_s", 1)[1])]
        else:
            runs = record["gates"]
        row |= {
            "registration": _registration(record, folder),
            "launched_at": record.get("launched_at", NOT_RECORDED),
            "settings": settings,
            "gates_basis": "registered",
            "gates": _gate_rows(runs),
            "interpretable": record.get("interpretable", NOT_RECORDED) if folder.form == "part" else NOT_RECORDED,
            "verdicts": {k: v["verdict"] for k, v in record["findings"].items()} if folder.form == "part" else {},
        }
    row["next"] = folder.next
    return row


def _base_row(r: _Reader) -> dict[str, Any]:
    """A registration that stopped at its base: the preconditions it missed and the toy pilot's reading, no BCR run."""
    from recipe_bcr.miniature.toy.preconditions import describe

    files = r.names(".")
    pre = r.json("base_preconditions.json")
    pilot = r.json("toy_pilot.json") if "toy_pilot.json" in files else None
    plan = r.json("plan.json") if "plan.json" in files else None  # written by a part run after the measurement
    missed = [f"{x['name']} {x['value']:.3f} (registered {describe(x['range'])})" for x in pre["rows"] if not x["met"]]
    reading = [f"preconditions: {'missed ' + '; '.join(missed) if missed else 'all met'}"]
    if pilot:
        accs = ", ".join(f"{k.rsplit('_', 1)[-1]} {v:.3f}" for k, v in pilot["accuracy_n1"].items())
        reading.append(f"toy pilot: N=1 accuracy {accs} -> {pilot['decision']}")
    gate_rows = []
    if "steps_pilot.json" in files:  # the steps pilot's BCR runs, by the gates of the registration they ran under
        chosen = r.json("steps_pilot.json")
        plateau = any(c["plateaued"] for c in chosen["checks"])
        reading.append(f"steps pilot: {chosen['steps']} steps{'' if plateau else ' (the maximum: no plateau)'}")
        gate_rows = _pilot_gates(r, plan["settings"]["gates"])
    settings = _v2_settings({**pre, "budget": {"B": _get(pre, "details", "budget_n3")}}, plan or {})
    if plan is None:  # nothing trained: the toy measured, no GRPO settings in play
        settings |= {"toy": pre["toy"], "lr": NO_RUN, "prompts_per_step": NO_RUN, "rollouts": NO_RUN}
    settings |= {
        "steps": pilot["steps"] if pilot else NOT_RECORDED,
        "seeds": [int(k.rsplit("_s", 1)[1]) for k in pilot["accuracy_n1"]] if pilot else [],
    }
    return {
        "registration": _registration(pre, r.folder),
        "launched_at": min((x["launched_at"] for x in (pre, plan or {}) if "launched_at" in x), default=NOT_RECORDED),
        "settings": settings,
        "gates_basis": "; ".join(reading) + ("" if gate_rows else " (no BCR run)"),
        "gates": gate_rows,
        "interpretable": False if missed else NOT_RECORDED,
        "verdicts": {},
    }


def _pilot_gates(r: _Reader, rule: dict[str, Any]) -> list[dict[str, Any]]:
    """The gates of a folder's BCR pilot runs (group "pilot", a group prompt) from their per-step metrics."""
    from recipe_bcr.miniature.paper.rules import gates

    out = []
    for meta in (n for n in r.names("runs") if n.endswith("/run.json")):
        run = r.json(meta)
        if run.get("single"):
            continue
        rows = [json.loads(x) for x in r.text(meta.replace("run.json", "metrics.jsonl")).splitlines() if x.strip()]
        out.append({"run": run["name"], "steps": len(rows), "gates": _strict(gates(rows, int(run["n"]), rule))})
    return out


def _fix(folder: Folder, repo: Path, snapshot: Path) -> str:
    if folder.where != "tree":
        at = folder.where[:7]
        return (
            f"`{folder.path}` is read from git at commit {at} (`git -C {repo} show {at}:{folder.path}/...`)"
            f" and {snapshot} does not hold it. Fix: in a clone with full history (`git fetch --unshallow`) run "
            f"`python -m recipe_bcr.miniature.paper.history --write`, or restore the snapshot with "
            f"`git checkout -- {SNAPSHOT}`"
        )
    return f"`{folder.path}` is read from the tree. Fix: restore it with `git checkout -- {folder.path}`"


def collect(repo: Path = ROOT, snapshot: Path | None = None) -> dict[str, Any]:
    """Every folder's row: from its records where they can be read, else from the snapshot (HistoryError when
    neither holds it)."""
    snapshot = snapshot or repo / SNAPSHOT
    try:
        old = {row["folder"]: row for row in json.loads(snapshot.read_text(encoding="utf-8"))["rows"]}
    except FileNotFoundError:
        old = {}
    rows = []
    for folder in FOLDERS:
        try:
            row = extract(folder, repo)
        except OSError as e:
            if folder.where == "tree" or folder.path not in old:
                raise HistoryError(f"cannot read {folder.path}: {e}\n{_fix(folder, repo, snapshot)}") from e
            row = {**old[folder.path], "next": folder.next}
        rows.append(row)
    return {"commit": COMMIT, "rows": rows, "stopped": list(STOPPED)}


def _lr(x: Any) -> str:
    if not isinstance(x, float):
        return str(x)
    mant, exp = f"{x:e}".split("e")
    return f"{float(mant):g}e{int(exp)}"


def _settings(s: dict[str, Any]) -> str:
    def item(label: str, value: Any) -> str:
        return f"{label} {NOT_RECORDED}" if value == NOT_RECORDED else f"{label} {value}"

    if s["lr"] == NO_RUN:
        return f"{item('toy', s['toy'])}, {item('B', s['budget'])}, {NO_RUN}"
    steps = f"{s['steps']} steps"
    if s["steps_registered"] not in (s["steps"], NOT_RECORDED):
        steps += f" (registered {s['steps_registered']})"
    if NOT_RECORDED in (s["prompts_per_step"], s["rollouts"]):
        batch = f"prompts x rollouts {NOT_RECORDED}"
    else:
        batch = f"{s['prompts_per_step']} prompts x {s['rollouts']} rollouts"
    return ", ".join(
        [
            item("toy", s["toy"]),
            item("lr", _lr(s["lr"])),
            batch,
            steps,
            item("B", s["budget"]),
            item("seeds", s["seeds"]),
        ]
    )


def _gates(row: dict[str, Any]) -> str:
    if not row["gates"]:
        return row["gates_basis"]
    parts = []
    for r in row["gates"]:
        g = r["gates"]
        missed = [k for k, v in g.items() if k != "all_met" and not v["met"]]
        seed = r["run"].rsplit("_", 1)[-1]
        step = g["format"]["step_reached"]
        fmt = f"0.90 at step {step}" if step is not None else "0.90 never"
        parts.append(f"{seed} {'all' if g['all_met'] else 'no: ' + ', '.join(missed)} ({fmt})")
    text = "; ".join(parts)
    return text if row["gates_basis"] == "registered" else f"{text} [{row['gates_basis']}]"


def _verdicts(row: dict[str, Any]) -> str:
    v = row["verdicts"]
    if not v:
        return "none (a pilot)" if row["kind"] in ("pilot", "base") else NOT_RECORDED
    if len(set(v.values())) == 1 and len(v) > 1:
        text = f"{', '.join(v)}: {next(iter(v.values()))}"
    else:
        text = ", ".join(f"{k} {x}" for k, x in v.items())
    return f"{text} (by its own rules)" if row["registration"]["config"] == V1 else text


def _registration_cell(row: dict[str, Any]) -> str:
    reg = row["registration"]
    commit = f"commit {NOT_RECORDED}" if reg["commit"] == NOT_RECORDED else f"commit `{reg['commit'][:7]}`"
    ident = "" if reg["id"] == NOT_RECORDED else f", id `{reg['id']}`"
    return f"{reg['config']}, {commit}{ident}; launched {row['launched_at']}"


def _changed(prev: dict[str, Any] | None, row: dict[str, Any]) -> str:
    """The settings (other than seeds) and registration commit that differ from the row before."""
    if prev is None:
        return "-"
    out = []
    a, b = prev["registration"], row["registration"]
    if (a["config"], a["commit"]) != (b["config"], b["commit"]):
        commit = b["commit"] if b["commit"] == NOT_RECORDED else b["commit"][:7]
        out.append(f"registration {commit}")
    for key in SETTINGS[:-1]:
        x, y = prev["settings"][key], row["settings"][key]
        if x != y and not any(v in (NOT_RECORDED, NO_RUN) for v in (x, y)):
            out.append(f"{key} {_lr(x)} -> {_lr(y)}")
    return "; ".join(out) or "none"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=118, break_long_words=False, break_on_hyphens=False)


def render(history: dict[str, Any]) -> str:
    """The section between the markers, from the snapshot's rows."""
    short = history["commit"][:7]
    intro = (
        "Every main part, rerun and pilot of the miniature in the order they ran, each read from its own records by "
        "`python -m recipe_bcr.miniature.paper.history --write` (snapshot: `benchmarks/paper/history.json`). "
        "A folder marked (at `<commit>`) left the tree: `git show <commit>:<folder>/findings.json` (or `pilot.json`, "
        f'`plan.json`, `report.md`), or `git checkout <commit> -- <folder>`. "{NOT_RECORDED}": the folder\'s files '
        "do not hold the value. Gates per BCR seed: `all` or the gates missed, with the step at which format's "
        '5-step mean first reached 0.90. "Changed" is computed from the records (settings other than seeds, '
        "and the registration's commit, against the row above); \"what changed next\" is a person's note."
    )
    lines = [
        HEADING,
        "",
        *_wrap(intro),
        "",
        "| folder | kind | registration | settings | gates per BCR seed | verdicts | changed | what changed next |",
        "|---|---|---|---|---|---|---|---|",
    ]
    prev = None
    for row in history["rows"]:
        where = f" (at `{row['at'][:7]}`)" if row["at"] != "tree" else ""
        cells = [
            f"`{row['folder']}/`{where}",
            row["kind"],
            _registration_cell(row),
            _settings(row["settings"]),
            _gates(row),
            _verdicts(row),
            _changed(prev, row),
            row["next"],
        ]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        prev = row
    if history.get("stopped"):
        lines += ["", "Attempts stopped before they kept a record:", ""]
        for note in history["stopped"]:
            lines += textwrap.wrap(f"- {note}.", width=118, subsequent_indent="  ", break_long_words=False)
    lines += [
        "",
        *_wrap(
            "The seed repeats that showed a run repeats bit for bit (`benchmarks/paper/seed_repeat.json`, "
            f"`seed_repeat_step_batches/`, `arrival_batches/seed_repeat_16/`) are at `{short}` as well; "
            "`benchmarks/paper/fresh_clone.json` compares the committed main part with its rerun file by file."
        ),
    ]
    return "\n".join(lines)


def fill(text: str, block: str, name: str) -> str:
    """`text` with the marked block replaced; a missing marker is an error."""
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise HistoryError(f"{name}: no {BEGIN} / {END} markers to fill")
    return pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text, count=1)


def dumps(history: dict[str, Any]) -> str:
    return json.dumps(history, indent=1, allow_nan=False) + "\n"


def outputs(repo: Path, snapshot: Path, report: Path, docs: Path) -> dict[Path, str]:
    """Each file as --write would leave it."""
    history = collect(repo, snapshot)
    block = render(history)
    return {
        snapshot: dumps(history),
        report: fill(report.read_text(encoding="utf-8"), block, str(report)),
        docs: fill(docs.read_text(encoding="utf-8"), block, str(docs)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m recipe_bcr.miniature.paper.history", description=__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the snapshot and both marked blocks")
    mode.add_argument("--check", action="store_true", help="exit 1 if any of them differs from what --write writes")
    ap.add_argument("--repo", type=Path, default=ROOT, help="the repository whose git history and tree are read")
    ap.add_argument("--snapshot", type=Path, help=f"default: REPO/{SNAPSHOT}")
    ap.add_argument("--report", type=Path, help=f"default: REPO/{REPORT}")
    ap.add_argument("--docs", type=Path, help=f"default: REPO/{DOCS}")
    args = ap.parse_args(argv)
    snapshot = args.snapshot or args.repo / SNAPSHOT
    report, docs = args.report or args.repo / REPORT, args.docs or args.repo / DOCS
    try:
        if not (args.write or args.check):
            print(render(collect(args.repo, snapshot)))
            return 0
        want = outputs(args.repo, snapshot, report, docs)
    except (HistoryError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        stale = [str(p) for p, text in want.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print(
                f"stale: {', '.join(stale)}; run: python -m recipe_bcr.miniature.paper.history --write", file=sys.stderr
            )
            return 1
        return 0
    if args.write:
        for path, text in want.items():
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
