"""Summaries of one or several runs, streamed from samples.jsonl (memory flat in run size).

Per (label, benchmark, N): accuracy over scored problems (mean and Bernoulli standard
error), tokens per problem (generated tokens / N, averaged over completions), truncation
rate, format rate, accuracy by position, tokens attributed to correct vs incorrect
problems, correlation of attributed tokens with difficulty (where the benchmark has one),
metacognitive markers per 1k generated tokens, and the degenerate-completion rate.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipe_bcr.eval.runner import SAMPLES, iter_records

PAPER_ORDER = ["AIME25", "AMC23", "Minerva", "MATH-500", "OlympiadBench"]


@dataclass
class _Acc:
    completions: int = 0
    tokens: float = 0.0
    tokens_per_problem: float = 0.0
    truncated: int = 0
    format_ok: int = 0
    markers: int = 0
    degenerate: int = 0
    think_tokens: float = 0.0
    problems: int = 0
    correct: int = 0
    pos_total: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    pos_correct: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    tok_correct: list[float] = field(default_factory=lambda: [0.0, 0])
    tok_wrong: list[float] = field(default_factory=lambda: [0.0, 0])
    diff: list[float] = field(default_factory=lambda: [0.0] * 6)  # n, sx, sy, sxx, syy, sxy

    def add(self, rec: dict[str, Any]) -> None:
        n = int(rec["n"])
        self.completions += 1
        self.tokens += rec["generated_tokens"]
        self.tokens_per_problem += rec["generated_tokens"] / n
        self.truncated += rec["finish_reason"] == "length"
        self.format_ok += bool(rec["format_ok"])
        self.markers += rec["markers"]
        self.degenerate += bool(rec["degenerate"])
        self.think_tokens += rec["think_tokens"]
        for pos, p in enumerate(rec["problems"], start=1):
            if not p["scored"]:
                continue
            ok = bool(p["correct"])
            self.problems += 1
            self.correct += ok
            self.pos_total[pos] += 1
            self.pos_correct[pos] += ok
            bucket = self.tok_correct if ok else self.tok_wrong
            bucket[0] += p["tokens"]
            bucket[1] += 1
            if p.get("difficulty") is not None:
                x, y = float(p["difficulty"]), float(p["tokens"])
                d = self.diff
                d[0] += 1
                d[1] += x
                d[2] += y
                d[3] += x * x
                d[4] += y * y
                d[5] += x * y

    def row(self) -> dict[str, Any]:
        acc = self.correct / self.problems if self.problems else float("nan")
        c = max(self.completions, 1)
        d = self.diff
        corr = float("nan")
        if d[0] > 2:
            vx, vy = d[0] * d[3] - d[1] ** 2, d[0] * d[4] - d[2] ** 2
            if vx > 0 and vy > 0:
                corr = (d[0] * d[5] - d[1] * d[2]) / math.sqrt(vx * vy)
        row = {
            "completions": self.completions,
            "problems_scored": self.problems,
            "acc": acc,
            "acc_stderr": math.sqrt(acc * (1 - acc) / self.problems) if self.problems else float("nan"),
            "tokens_per_problem": self.tokens_per_problem / c,
            "tokens_per_completion": self.tokens / c,
            "truncation_rate": self.truncated / c,
            "format_rate": self.format_ok / c,
            "markers_per_1k_tokens": 1000 * self.markers / self.tokens if self.tokens else 0.0,
            "degenerate_rate": self.degenerate / c,
            "think_tokens_per_completion": self.think_tokens / c,
            "tokens_correct_problem": self.tok_correct[0] / self.tok_correct[1]
            if self.tok_correct[1]
            else float("nan"),
            "tokens_incorrect_problem": self.tok_wrong[0] / self.tok_wrong[1] if self.tok_wrong[1] else float("nan"),
            "difficulty_token_corr": corr,
        }
        for pos in sorted(self.pos_total):
            row[f"acc_pos{pos}"] = self.pos_correct[pos] / self.pos_total[pos]
        return row


def summarize(runs: Iterable[tuple[str, Path]]) -> list[dict[str, Any]]:
    """One row per (label, benchmark, N), in paper order, from each run's samples.jsonl."""
    accs: dict[tuple[str, str, int], _Acc] = defaultdict(_Acc)
    for label, run_dir in runs:
        for rec in iter_records(run_dir / SAMPLES):
            accs[(label, rec["benchmark"], int(rec["n"]))].add(rec)
    order = {b: i for i, b in enumerate(PAPER_ORDER)}
    keys = sorted(accs, key=lambda k: (k[0], k[2], order.get(k[1], len(order)), k[1]))
    return [{"label": k[0], "benchmark": k[1], "n": k[2], **accs[k].row()} for k in keys]


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    columns: list[str] = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def write_json(rows: Sequence[dict[str, Any]], path: Path) -> None:
    clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
    path.write_text(json.dumps(clean, indent=2) + "\n")


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The paper's layout: one row per (model, N), Acc / Tok columns per benchmark."""
    order = {b: i for i, b in enumerate(PAPER_ORDER)}
    benches = sorted({r["benchmark"] for r in rows}, key=lambda b: (order.get(b, len(order)), b))
    cells = {(r["label"], r["n"], r["benchmark"]): r for r in rows}
    lines = [
        "| Model | N | " + " | ".join(f"{b} Acc | {b} Tok" for b in benches) + " |",
        "|---|---:|" + "---:|---:|" * len(benches),
    ]
    for label, n in sorted({(r["label"], r["n"]) for r in rows}, key=lambda x: (x[1], x[0])):
        parts = []
        for b in benches:
            r = cells.get((label, n, b))
            parts += [f"{100 * r['acc']:.1f}", f"{r['tokens_per_problem']:,.0f}"] if r else ["-", "-"]
        lines.append(f"| {label} | {n} | " + " | ".join(parts) + " |")
    return "\n".join(lines) + "\n\nAcc: accuracy (%) over scored problems; Tok: generated tokens per problem.\n"
