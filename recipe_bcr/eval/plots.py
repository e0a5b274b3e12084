"""Plots of a summary: accuracy and tokens per problem against N, and the Pareto view."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from recipe_bcr.eval.summary import PAPER_ORDER  # noqa: E402


def _benchmarks(rows: Sequence[dict[str, Any]]) -> list[str]:
    order = {b: i for i, b in enumerate(PAPER_ORDER)}
    return sorted({r["benchmark"] for r in rows}, key=lambda b: (order.get(b, len(order)), b))


def _by_n(rows: Sequence[dict[str, Any]], metric: str, ylabel: str, path: Path, scale: float = 1.0) -> None:
    benches = _benchmarks(rows)
    labels = sorted({r["label"] for r in rows})
    fig, axes = plt.subplots(1, len(benches), figsize=(3.2 * len(benches), 3.0), squeeze=False)
    for ax, bench in zip(axes[0], benches):
        for label in labels:
            pts = sorted((r["n"], r[metric] * scale) for r in rows if r["benchmark"] == bench and r["label"] == label)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(bench)
        ax.set_xlabel("N (problems per prompt)")
        ax.set_xticks(sorted({r["n"] for r in rows}))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def pareto(rows: Sequence[dict[str, Any]], path: Path) -> None:
    benches = _benchmarks(rows)
    labels = sorted({r["label"] for r in rows})
    fig, axes = plt.subplots(1, len(benches), figsize=(3.2 * len(benches), 3.0), squeeze=False)
    for ax, bench in zip(axes[0], benches):
        for label in labels:
            pts = sorted(
                (r["n"], r["tokens_per_problem"], 100 * r["acc"])
                for r in rows
                if r["benchmark"] == bench and r["label"] == label
            )
            if not pts:
                continue
            ax.plot([p[1] for p in pts], [p[2] for p in pts], marker="o", label=label)
            for n, x, y in pts:
                ax.annotate(f"N={n}", (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_title(bench)
        ax.set_xlabel("tokens per problem")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("accuracy (%)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_plots(rows: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "accuracy_vs_n.png", out / "tokens_per_problem_vs_n.png", out / "pareto_accuracy_vs_tokens.png"]
    _by_n(rows, "acc", "accuracy (%)", files[0], scale=100)
    _by_n(rows, "tokens_per_problem", "tokens per problem", files[1])
    pareto(rows, files[2])
    return files
