"""The miniature's figures: training curves averaged over seeds, and accuracy and tokens per problem against N."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

CURVES = (
    ("critic/score/mean", "reward (score)"),
    ("bcr/acc", "accuracy"),
    ("bcr/tokens_per_problem", "tokens per problem"),
    ("bcr/truncation_rate", "truncation rate"),
)


def mean_curve(seeds: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per step, the mean of each curve key over the seeds' metrics."""
    steps = sorted({r["step"] for rows in seeds for r in rows})
    out = []
    for step in steps:
        at = [r for rows in seeds for r in rows if r["step"] == step]
        out.append(
            {
                "step": step,
                **{k: statistics.fmean(r[k] for r in at if k in r) for k, _ in CURVES if any(k in r for r in at)},
            }
        )
    return out


def plot_curves(series: dict[str, list[dict[str, Any]]], title: str, path: Path) -> Path:
    fig, axes = plt.subplots(1, len(CURVES), figsize=(4 * len(CURVES), 3.2))
    for ax, (key, name) in zip(axes, CURVES):
        for label, rows in series.items():
            pts = [(r["step"], r[key]) for r in rows if key in r]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
        ax.set_title(name)
        ax.set_xlabel("GRPO step")
        ax.grid(alpha=0.3)
    axes[-1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_training(by_arm: dict[str, list[list[dict[str, Any]]]], path: Path) -> Path:
    """Each arm's per-step curves (`plot_curves`), mean over its seeds' metrics."""
    curves = {f"{arm} ({len(seeds)} seeds)": mean_curve(seeds) for arm, seeds in by_arm.items()}
    return plot_curves(curves, "BCR (N=3) and its controls: mean over seeds", path)


def plot_scaling(curves: dict[str, dict[int, tuple[float, float, float, float]]], path: Path) -> Path:
    fig, (a, t) = plt.subplots(1, 2, figsize=(9, 3.4))
    for label, pts in curves.items():
        ns = sorted(pts)
        a.errorbar(
            ns,
            [pts[n][0] for n in ns],
            yerr=[[pts[n][0] - pts[n][2] for n in ns], [pts[n][3] - pts[n][0] for n in ns]],
            marker="o",
            capsize=3,
            label=label,
        )
        t.plot(ns, [pts[n][1] for n in ns], marker="o", label=label)
    for ax, y in ((a, "accuracy (%)"), (t, "tokens per problem")):
        ax.set_xlabel("N (problems per prompt)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
    a.set_title("accuracy vs N (bars: seed range)")
    t.set_title("tokens per problem vs N")
    t.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
