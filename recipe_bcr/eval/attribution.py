"""Attribute a completion's generated tokens to its "### Problem i" sections.

Exact path: with the engine's own token ids and a byte-level BPE tokenizer (Qwen, DeepSeek),
every token's byte length is known without re-tokenising, so token boundaries map onto the
decoded text's byte offsets; a section owns the tokens that start inside it. Fallback (no
ids, or a tokenizer that is not byte-level): the offset mapping of one encoding of the whole
completion. The method used is recorded.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np


@lru_cache(maxsize=8)
def _byte_lengths(tokenizer: Any) -> np.ndarray:
    """Bytes each vocabulary id adds to decode(skip_special_tokens=True), computed once per tokenizer.

    A byte-level BPE token is a string of byte-mapped characters, one character per byte;
    added tokens are rendered as their content (special ones are skipped).
    """
    vocab = tokenizer.backend_tokenizer.get_vocab(with_added_tokens=True)
    table = np.zeros(max(len(tokenizer), max(vocab.values()) + 1), dtype=np.int64)
    for piece, tid in vocab.items():
        table[tid] = len(piece)
    for tid, tok in tokenizer.added_tokens_decoder.items():
        table[tid] = 0 if tok.special else len(tok.content.encode("utf-8"))
    return table


def _is_byte_level(tokenizer: Any) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    return backend is not None and type(backend.decoder).__name__ == "ByteLevel"


def token_byte_starts(tokenizer: Any, token_ids: Sequence[int], text: str) -> np.ndarray | None:
    """Byte offset in `text` where each token starts, or None if ids and text do not line up."""
    if not _is_byte_level(tokenizer):
        return None
    table = _byte_lengths(tokenizer)
    ids = np.asarray(token_ids, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= len(table)):
        return None
    ends = np.cumsum(table[ids])
    total = int(ends[-1]) if ids.size else 0
    if total != len(text.encode("utf-8")):
        return None
    return ends - table[ids]


def attribute(
    tokenizer: Any,
    text: str,
    spans: Sequence[tuple[int, int] | None],
    token_ids: Sequence[int] | None,
) -> tuple[list[int], str]:
    """Tokens per span (0 for a missing span) and the method ("ids" or "reencode")."""
    starts = token_byte_starts(tokenizer, token_ids, text) if token_ids is not None else None
    method = "ids"
    if starts is None:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        char_starts = [s for s, _ in enc["offset_mapping"]]
        # offsets are characters here; compare in characters
        counts = []
        for span in spans:
            counts.append(0 if span is None else bisect_left(char_starts, span[1]) - bisect_left(char_starts, span[0]))
        return counts, "reencode"
    counts = []
    for span in spans:
        if span is None:
            counts.append(0)
            continue
        b0, b1 = len(text[: span[0]].encode("utf-8")), len(text[: span[1]].encode("utf-8"))
        counts.append(int(np.searchsorted(starts, b1) - np.searchsorted(starts, b0)))
    return counts, method
