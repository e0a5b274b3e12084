"""Per-rollout diagnostic of GRPO training on the toy task (issue 24, item 4): for every sampled
completion, its reward parts and its advantage, tagged by whether it kept its reasoning (written
steps in every problem it reached) and carried redundancy (text outside the header, the steps and
the answer line), so a report can say which behaviour the gradient favoured.

Reads verl's own rollout dump (`trainer.rollout_data_dir=DIR`: one `<step>.jsonl` per step with
`input`, `output`, `score` and the reward breakdown). The advantage is recomputed as verl's GRPO
estimator makes it under the recipe's mean-only baseline (`algorithm.norm_adv_by_std_in_grpo=false`),
grouping rollouts by their prompt (two identical prompts in one batch would share a group);
`tests/test_bcr_advantage.py` checks it against verl's `compute_advantage`.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.miniature.toy.profile import sections
from recipe_bcr.miniature.toy.task import read_section, redundant_chars

CATEGORIES = ("kept reasoning, no redundancy", "kept reasoning, redundancy", "dropped reasoning")


def advantages(scores: Sequence[float], groups: Sequence[Any]) -> list[float]:
    """verl 0.9.1's GRPO outcome advantage under the recipe's mean-only baseline (Eq. 3):
    reward minus its group's mean, 0 for a group of one (verl's `compute_grpo_outcome_advantage`
    with `norm_adv_by_std_in_grpo=False`; tests/test_bcr_advantage.py compares the two). Plain
    Python: verl stays above this layer."""
    members: dict[Any, list[float]] = defaultdict(list)
    for s, g in zip(scores, groups, strict=True):
        members[g].append(float(s))
    return [
        float(s) - (sum(members[g]) / len(members[g]) if len(members[g]) > 1 else 0.0) for s, g in zip(scores, groups)
    ]


def tag(output: str, n: int, redundancy_cut: float = 0.3) -> dict[str, Any]:
    """kept_reasoning: every problem section the completion finished (wrote its boxed answer) has steps;
    a section cut by the budget before its answer is judged only when none was finished (it may not have
    reached its steps yet). redundancy: the share of the sections' characters outside their essential text."""
    written = [s for s in sections(output, n) if s.split("\n", 1)[-1].strip()]
    judged = [s for s in written if "\\boxed{" in s] or written
    parts = [redundant_chars(s) for s in written]
    total = sum(t for t, _ in parts)
    share = sum(r for _, r in parts) / total if total else 0.0
    return {
        "kept_reasoning": bool(judged) and all(read_section(s)[0] for s in judged),
        "redundancy": share,
        "redundant": share > redundancy_cut,
    }


def _golds(gts: Any) -> list[str]:
    if isinstance(gts, str) and gts.startswith("["):
        gts = json.loads(gts)
    return [str(g) for g in gts] if isinstance(gts, list | tuple) else [str(gts)]


def _with_parts(row: dict[str, Any]) -> dict[str, Any]:
    """verl's v1 trainer dumps input, output, gts, score and uid only: the reward parts (acc, fmt, n)
    are recomputed with the same scoring function; the dumped score stays the one trained on."""
    if "acc" in row or "gts" not in row:
        return row
    from recipe_bcr.grading.reward import score_completion
    from recipe_bcr.grading.verify import default_verifier

    golds = _golds(row["gts"])
    parts = score_completion(row["output"], golds, default_verifier()).breakdown
    return {**row, "acc": parts["acc"], "fmt": parts["fmt"], "n": len(golds)}


def group_of(row: dict[str, Any]) -> Any:
    """The GRPO group: verl's uid key "{sample}_{rollout}_{output}" names the sample; else the prompt."""
    uid = row.get("uid")
    return uid.rsplit("_", 2)[0] if isinstance(uid, str) and uid.count("_") >= 2 else row["input"]


def summarize(rows: Iterable[dict[str, Any]], redundancy_cut: float = 0.3) -> dict[str, dict[str, float]]:
    """Mean reward parts, advantage and truncation per category of rollout (rows: verl dump lines;
    truncation counts only where the dump records it)."""
    rows = [_with_parts(r) for r in rows]
    adv = advantages([r["score"] for r in rows], [group_of(r) for r in rows])
    acc: dict[str, dict[str, float]] = {c: defaultdict(float) for c in CATEGORIES}
    for row, a in zip(rows, adv):
        t = tag(row["output"], int(row.get("n", 1)), redundancy_cut)
        cat = CATEGORIES[2] if not t["kept_reasoning"] else CATEGORIES[1] if t["redundant"] else CATEGORIES[0]
        c = acc[cat]
        c["rollouts"] += 1
        for key, value in (
            ("score", row["score"]),
            ("acc", row.get("acc", 0.0)),
            ("fmt", row.get("fmt", 0.0)),
            ("truncated", row.get("truncated", 0.0)),
            ("advantage", a),
            ("redundancy", t["redundancy"]),
        ):
            c[key] += float(value)
    out = {
        cat: {k: (v if k == "rollouts" else v / c["rollouts"]) for k, v in c.items()}
        for cat, c in acc.items()
        if c["rollouts"]
    }
    if not any("truncated" in r for r in rows):  # verl's v1 dump does not record it: unknown, not 0
        for c in out.values():
            c["truncated"] = float("nan")
    return out


def dump_files(folder: Path) -> dict[int, Path]:
    """verl's rollout dump, step -> its file: `<step>.jsonl`, or `<step>.jsonl.gz` where a committed copy was
    compressed (`gzip -kn`; the plain file wins where both are there)."""
    files = {int(p.name.split(".")[0]): p for p in Path(folder).glob("*.jsonl.gz")}
    files |= {int(p.stem): p for p in Path(folder).glob("*.jsonl")}
    return dict(sorted(files.items()))


def read_dump(folder: Path) -> dict[int, list[dict[str, Any]]]:
    """verl's rollout dump: step -> rows."""
    out = {}
    for step, p in dump_files(folder).items():
        text = gzip.decompress(p.read_bytes()).decode() if p.suffix == ".gz" else p.read_text()
        out[step] = [json.loads(line) for line in text.splitlines() if line.strip()]
    return out
