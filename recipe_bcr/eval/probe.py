"""Sample base-model completions on single problems and record their token lengths.

Shared by data_prep/estimate_difficulty.py (k=4 rollouts per training problem, the paper's
difficulty proxy) and data_prep/calibrate_budget.py (Algorithm 3's probe set).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tqdm.auto import tqdm

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.engines.base import Engine, Sampling


@dataclass(frozen=True)
class ProbeResult:
    lengths: list[int]
    truncated: int  # samples that hit max_tokens (their length is a lower bound)


def probe_lengths(
    engine: Engine, questions: Sequence[str], sampling: Sampling, chunk: int = 256, progress: bool = True
) -> list[ProbeResult]:
    """k completion lengths (engine token counts) for every question, single-problem prompt."""
    results: list[ProbeResult] = []
    with tqdm(total=len(questions), desc="probe", unit="problem", disable=not progress) as bar:
        for start in range(0, len(questions), chunk):
            batch = [build_messages([q], style="single") for q in questions[start : start + chunk]]
            for gens in engine.generate(batch, sampling):
                results.append(
                    ProbeResult([g.num_tokens for g in gens], sum(g.finish_reason == "length" for g in gens))
                )
            bar.update(len(batch))
    return results
