"""Text analyses behind the paper's qualitative claims, made quantitative.

- Metacognitive markers ("wait", "let me double-check", "alternatively", ...): counted as
  case-insensitive whole-phrase matches, reported per 1k generated tokens.
- Degeneration: a completion is degenerate when its tail is dominated by repetition, i.e.
  among the last `window` words fewer than `min_distinct` of the 4-word shingles are
  distinct (a loop "let me check again. let me check again. ..." scores near 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=16)
def _marker_regex(markers: tuple[str, ...]) -> re.Pattern[str]:
    alts = sorted((re.escape(m) for m in markers), key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z])(?:" + "|".join(alts) + r")(?![A-Za-z])", re.IGNORECASE)


def marker_count(text: str, markers: Sequence[str]) -> int:
    """Occurrences of any marker phrase (the list lives in hydra_configs/eval.yaml)."""
    return len(_marker_regex(tuple(markers)).findall(text))


def distinct_shingle_ratio(words: Sequence[str], k: int = 4) -> float:
    if len(words) < k + 1:
        return 1.0
    shingles = [tuple(words[i : i + k]) for i in range(len(words) - k + 1)]
    return len(set(shingles)) / len(shingles)


def is_degenerate(text: str, window: int = 400, min_distinct: float = 0.3) -> bool:
    words = text[-40 * window :].split()[-window:]
    return len(words) >= 40 and distinct_shingle_ratio(words) < min_distinct
