"""verl 0.9.1 warns, on import, about each optional training engine it cannot import
(torchtitan, veomni, automodel, mindspeed, megatron). The recipe uses none of them, and
every command and Ray worker repeated the five lines over the recipe's own output. Those
five messages are hidden, matched from their first word; every other warning still shows."""

from __future__ import annotations

import warnings

OPTIONAL_VERL_ENGINES = ("torchtitan", "veomni", "automodel", "mindspeed", "megatron")


def hide_missing_engine_warnings() -> None:
    """Idempotent; call before verl is imported (each message is emitted once, at import)."""
    for engine in OPTIONAL_VERL_ENGINES:
        warnings.filterwarnings("ignore", message=f"{engine} engine is not available: ", category=UserWarning)
