"""The size limits every reader of an answer shares (the extraction, the tree, the symbolic check)."""

from __future__ import annotations

MAX_ANSWER_CHARS = 2000  # a longer answer is no answer (and reading it would cost time on every step)
MAX_DIGITS = 1000  # an exact number is never expanded beyond this many digits (1e100000000 would take minutes)
