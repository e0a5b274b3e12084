"""The second miniature's pre-registration (hydra_configs/paper.yaml, issue 35): load it, check it names every
precondition this code measures, judge a value against a [low, high] range, and say which commit registered it.

Every output judged by these thresholds records `thresholds_commit` (the last commit that changed paper.yaml) and
`launched_at`; a paper.yaml with uncommitted changes is refused, so no output can claim a commit whose thresholds
are not the ones it was judged by.
"""

from __future__ import annotations

import datetime
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

CONFIG = "paper.yaml"

# name -> what it measures (the thresholds live in paper.yaml `preconditions.thresholds`)
REGIME_CHECKS = {
    "reachable_fit_n3": "N=3 samples inside B with steps on every problem",
    "any_fit_n3": "N=3 samples inside B by any route",
    "slack_shortest_written": "1 - (3 x shortest written-steps mode + separators) / B",
    "acc_n1": "base N=1 accuracy",
    "recheck_gain_long": "long chains: acc with re-check - without (paired)",
    "filler_effect": "acc with filler - without (paired, no re-check)",
    "skip_share_n1": "N=1 problems without written steps",
    "length_cv_n1": "CV over problems of N=1 completion length",
    "warm_start_covers_n": "largest N with 1..N all in the warm start",
    "n5_acc_drop": "accuracy N=1 minus N=5, budget never binding",
    "concise_share_n1": "sections with steps, no narration, no restatement",
}


def config_path() -> Path:
    return Path(str(resources.files("hydra_configs") / CONFIG))


def load(overrides: list[str] | None = None) -> dict[str, Any]:
    """paper.yaml (+ dotlist overrides, for smoke sizes) as a dict; refuses one that lacks a check's threshold."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.merge(OmegaConf.load(config_path()),
                                                 OmegaConf.from_dotlist(list(overrides or []))), resolve=True)
    th = cfg.get("preconditions", {}).get("thresholds", {})
    missing, unknown = sorted(set(REGIME_CHECKS) - set(th)), sorted(set(th) - set(REGIME_CHECKS))
    if missing or unknown:
        raise ValueError(f"hydra_configs/{CONFIG} preconditions.thresholds: missing {missing}, unknown {unknown}")
    for name, bounds in th.items():
        if not (isinstance(bounds, list) and len(bounds) == 2 and any(b is not None for b in bounds)):
            raise ValueError(f"hydra_configs/{CONFIG} preconditions.thresholds.{name}: want [low, high] "
                             f"(one may be null), got {bounds!r}")
    return cfg


def within(value: float, bounds: list[float | None]) -> bool:
    """low <= value <= high (a null side is open); NaN is never within."""
    low, high = bounds
    if value != value:
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def describe(bounds: list[float | None]) -> str:
    low, high = bounds
    if low is None:
        return f"<= {high:g}"
    if high is None:
        return f">= {low:g}"
    return f"in [{low:g}, {high:g}]"


def thresholds_commit(repo: Path | None = None) -> str:
    """The last commit that changed paper.yaml; refuses a paper.yaml with uncommitted changes."""
    path = config_path()
    repo = repo or path.parents[1]
    rel = str(path.relative_to(repo))

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()

    try:
        dirty = git("status", "--porcelain", "--", rel)
        commit = git("log", "-1", "--format=%H", "--", rel)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ValueError(f"{path}: cannot read its commit ({e}); run from a git checkout of the repository") from None
    if dirty or not commit:
        raise ValueError(f"{path} has uncommitted changes: commit the thresholds before measuring "
                         f"(`git commit {rel}`), so outputs can name the commit that registered them")
    return commit


def launched_at() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
