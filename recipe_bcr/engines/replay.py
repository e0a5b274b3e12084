"""Replay engine: serves the generations of a saved run, so a run can be re-scored
(new verifier, new analyses) without generating. Keyed by prompt and sample index."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.data.io import json_record
from recipe_bcr.engines.base import Generation, Messages, Sampling


def _digest(messages: Messages) -> bytes:
    return hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).digest()


class ReplayEngine:
    def __init__(self, samples: str, **_: Any) -> None:
        path = Path(samples)
        if path.is_dir():
            path = path / "samples.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"replay: no saved samples at {path}")
        self.source = path
        self._index: dict[tuple[bytes, int], int] = {}  # (prompt digest, sample) -> line number
        with path.open() as f:
            for line_no, line in enumerate(f, start=1):
                if line.strip():
                    rec = json_record(line, path, line_no)
                    try:
                        key = (_digest(rec["prompt"]), int(rec["sample"]))
                    except KeyError as e:
                        raise ValueError(f"{path} line {line_no}: record lacks {e}") from e
                    self._index[key] = line_no

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        wanted = {}
        for i, p in enumerate(prompts):
            for j in range(sampling.k):
                key = (_digest(p), j)
                if key not in self._index:
                    raise KeyError(f"replay: {self.source} has no sample {j} for prompt #{i} of this run")
                wanted[self._index[key]] = (i, j)
        results: list[list[Generation | None]] = [[None] * sampling.k for _ in prompts]
        with self.source.open() as f:  # one pass, only the lines asked for
            for line_no, line in enumerate(f, start=1):
                if line_no in wanted:
                    rec = json_record(line, self.source, line_no)
                    i, j = wanted[line_no]
                    ids = rec.get("token_ids")
                    results[i][j] = Generation(
                        rec["completion"], tuple(ids) if ids is not None else None, rec["finish_reason"], int(rec["generated_tokens"])
                    )
        return [[g for g in row if g is not None] for row in results]
