"""Generate and score pending tasks into samples.jsonl, resumably, one chunk at a time."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from recipe_bcr.data.io import json_record
from recipe_bcr.engines.base import Engine, Sampling
from recipe_bcr.eval.scoring import score_sample
from recipe_bcr.eval.tasks import Task
from recipe_bcr.verify import Verifier

SAMPLES = "samples.jsonl"
log = logging.getLogger(__name__)


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """Stream the records of a samples file (complete lines only)."""
    with path.open() as f:
        for line_no, line in enumerate(f, start=1):
            if line.endswith("\n") and line.strip():
                yield json_record(line, path, line_no)


def _repair_tail(path: Path) -> None:
    """Drop a half-written last line left by an interrupted run."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        content = f.read()
        f.seek(content.rfind(b"\n") + 1)
        f.truncate()


def done_keys(path: Path) -> set[str]:
    _repair_tail(path)
    return {r["key"] for r in iter_records(path)} if path.exists() else set()


def run_tasks(
    tasks: Sequence[Task],
    engine: Engine,
    sampling: Sampling,
    run_dir: Path,
    verifier: Verifier,
    tokenizer: Any,
    *,
    thinking: bool,
    markers: Sequence[str],
    chunk_size: int = 64,
    keep_token_ids: bool = True,
    progress: bool = True,
) -> int:
    """Generate what samples.jsonl lacks; return the number of new samples."""
    path = run_dir / SAMPLES
    done = done_keys(path)
    pending = [t for t in tasks if any(t.key(j) not in done for j in range(sampling.k))]
    todo = sum(1 for t in pending for j in range(sampling.k) if t.key(j) not in done)
    new = 0
    tokens = 0
    scoring_s = 0.0
    t0 = time.perf_counter()
    with tqdm(total=todo, desc="eval", unit="sample", disable=not progress) as bar:
        for start in range(0, len(pending), chunk_size):
            chunk = pending[start : start + chunk_size]
            generations = engine.generate([t.messages for t in chunk], sampling)
            t_score = time.perf_counter()
            jobs = []
            for task, gens in zip(chunk, generations):
                if len(gens) != sampling.k:
                    raise RuntimeError(f"engine returned {len(gens)} samples for {task.key(0)}, expected {sampling.k}")
                jobs += [(task, j, gen) for j, gen in enumerate(gens) if task.key(j) not in done]

            lines = [
                json.dumps(
                    score_sample(
                        task, j, gen, verifier, tokenizer,
                        thinking=thinking, markers=markers, seed=sampling.seed, keep_token_ids=keep_token_ids,
                    ),
                    ensure_ascii=False,
                )
                + "\n"
                for task, j, gen in jobs
            ]
            tokens += sum(gen.num_tokens for _, _, gen in jobs)
            with path.open("a") as f:
                f.writelines(lines)
                f.flush()
                os.fsync(f.fileno())
            scoring_s += time.perf_counter() - t_score
            new += len(lines)
            bar.update(len(lines))
            elapsed = max(time.perf_counter() - t0, 1e-9)
            bar.set_postfix(tok_per_s=f"{tokens / elapsed:.0f}", samples_per_s=f"{new / elapsed:.2f}")
    if new:
        log.info("scoring: %d samples in %.2f s (%.0f samples/s, generation excluded)", new, scoring_s, new / max(scoring_s, 1e-9))
    return new
