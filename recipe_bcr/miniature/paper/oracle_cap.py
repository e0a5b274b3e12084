"""The oracle-allocation control (issue 52, docs/registration_v3.md section 3): single-problem runs whose token cap
follows the problem's chain length, BCR's budget B spread by need instead of evenly. Beside the uniform B/N cap it
tells budget sharing from adaptive reallocation: c(ops) = (shortest written section of ops + EOS) x B / (N x the mean
of that over ops), so the caps average B/N over chain lengths drawn evenly (as the toy draws them)."""

from __future__ import annotations

from recipe_bcr.miniature.paper.design_checks import ChainCosts, Count, chain_costs
from recipe_bcr.miniature.toy.task import ToySpec


def oracle_caps(costs: dict[int, ChainCosts], budget: int, n: int) -> dict[int, int]:
    """Chain length -> token cap. Example: toy_compete's shortest sections 26..101 tokens (+ EOS) at B = 309, N = 3
    give 45, 64, 86, 111, 140, 172."""
    need = {ops: c.bare + 1 for ops, c in costs.items()}
    mean = sum(need.values()) / len(need)
    return {ops: round(v * budget / (n * mean)) for ops, v in need.items()}


def caps_for(spec: ToySpec, count: Count, budget: int, n: int) -> dict[int, int]:
    """The caps of a toy at budget B, its sections' tokens counted by the base's tokenizer."""
    return oracle_caps(chain_costs(spec, count), budget, n)
