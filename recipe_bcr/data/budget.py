"""Token budget arithmetic (paper, Algorithm 3 and Sec. 3.4)."""

from __future__ import annotations

from collections.abc import Sequence


def budget_for(n: int, tokens_per_problem: float, pinned: int | None = None) -> int:
    """B_max for N problems: a pinned budget wins, else round(N x tokens per problem)."""
    if pinned is not None:
        if int(pinned) < 1:
            raise ValueError(f"a pinned budget must be positive, got {pinned}")
        return int(pinned)
    if n < 1 or tokens_per_problem <= 0:
        raise ValueError(f"need n >= 1 and tokens_per_problem > 0 (got {n}, {tokens_per_problem})")
    return int(round(n * float(tokens_per_problem)))


def calibrate(
    lengths: Sequence[float], n: int, compression: float = 0.5, round_to: int = 1024
) -> tuple[float, float, int]:
    """(L_avg, N x L_avg x lambda, the nearest multiple of `round_to`, at least one)."""
    if not lengths:
        raise ValueError("no probe lengths to calibrate from")
    if not 0 < compression <= 1:
        raise ValueError(f"compression ratio lambda must be in (0, 1], got {compression}")
    l_avg = sum(lengths) / len(lengths)
    raw = n * l_avg * compression
    cap = max(round_to, int(round(raw / round_to)) * round_to)
    return l_avg, raw, cap
