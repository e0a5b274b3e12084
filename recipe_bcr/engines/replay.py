"""Replay engine: serves the generations of a saved run, so a run can be re-scored
(new verifier, new analyses) without generating. Keyed by prompt and sample index."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.data.io import json_record
from recipe_bcr.engines.base import Generation, Messages, Request, Sampling, generate_all


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
        self._wanted: dict[int, int] = {}  # line number -> request id

    def submit(self, requests: Sequence[Request], sampling: Sampling) -> None:
        for r in requests:
            line_no = self._index.get((_digest(r.messages), r.sample))
            if line_no is None:
                raise KeyError(f"replay: {self.source} has no sample {r.sample} for request {r.id} of this run")
            self._wanted[line_no] = r.id

    def unfinished(self) -> int:
        return len(self._wanted)

    def poll(self) -> list[tuple[int, Generation]]:
        """Everything submitted, read in one pass over the saved file (only the lines asked for)."""
        wanted, self._wanted = self._wanted, {}
        out = []
        with self.source.open() as f:
            for line_no, line in enumerate(f, start=1):
                if line_no in wanted:
                    rec = json_record(line, self.source, line_no)
                    ids = rec.get("token_ids")
                    gen = Generation(
                        rec["completion"],
                        tuple(ids) if ids is not None else None,
                        rec["finish_reason"],
                        int(rec["generated_tokens"]),
                    )
                    out.append((wanted[line_no], gen))
        return out

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        return generate_all(self, prompts, sampling)
