"""Generate and score pending tasks into samples.jsonl, resumably, as samples finish."""

from __future__ import annotations

import gzip
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from recipe_bcr.data.eval_tasks import Task
from recipe_bcr.data.io import json_record
from recipe_bcr.engines.base import FAILED, Engine, Sampling, build_requests, drain
from recipe_bcr.eval.scoring import score_sample
from recipe_bcr.grading.verify import Verifier

SAMPLES = "samples.jsonl"
FAILED_FILE = "failed.jsonl"  # requests the engine aborted or failed (no model answer); retried on rerun
log = logging.getLogger(__name__)


def samples_path(run_dir: Path) -> Path:
    """A run folder's samples file: samples.jsonl, or samples.jsonl.gz where a kept copy was compressed."""
    plain = Path(run_dir) / SAMPLES
    packed = plain.with_name(SAMPLES + ".gz")
    return packed if packed.exists() and not plain.exists() else plain


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """Stream the records of a samples file, plain or gzip-compressed (complete lines only)."""
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as f:
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
    keep_token_ids: bool = True,
    progress: bool = True,
    fsync_every_s: float = 10.0,
) -> int:
    """Generate what samples.jsonl lacks; return the number of new samples.

    Every pending request is submitted at once (a continuous-batching engine keeps them all in
    flight); each sample is scored and appended (flushed) the moment it finishes, so a killed
    run loses only what was in flight. Aborted or errored requests are not model answers: they
    are not scored, go to failed.jsonl and are retried by the next run.
    """
    path = run_dir / SAMPLES
    done = done_keys(path)
    requests = build_requests(
        [t.messages for t in tasks], sampling, getattr(engine, "render_ids", None), lambda i, j: tasks[i].key(j) in done
    )
    new = tokens = 0
    scoring_s = 0.0
    reasons: Counter[str] = Counter()
    failed: list[dict[str, Any]] = []
    t0 = last_sync = time.perf_counter()
    if requests:
        engine.submit(requests, sampling)
    with path.open("a") as f, tqdm(total=len(requests), desc="eval", unit="sample", disable=not progress) as bar:
        try:
            for rid, gen in drain(engine):
                task, j = tasks[rid // sampling.k], rid % sampling.k
                reasons[gen.finish_reason] += 1
                bar.update(1)
                if gen.failed:
                    failed.append({"key": task.key(j), "finish_reason": gen.finish_reason, "error": gen.error})
                    continue
                t_score = time.perf_counter()
                record = score_sample(
                    task,
                    j,
                    gen,
                    verifier,
                    tokenizer,
                    thinking=thinking,
                    markers=markers,
                    seed=sampling.seed,
                    keep_token_ids=keep_token_ids,
                )
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                f.flush()
                now = time.perf_counter()
                scoring_s += now - t_score
                if now - last_sync > fsync_every_s:
                    os.fsync(f.fileno())
                    last_sync = now
                new += 1
                tokens += gen.num_tokens
                elapsed = max(now - t0, 1e-9)
                bar.set_postfix(
                    tok_per_s=f"{tokens / elapsed:.0f}", samples_per_s=f"{new / elapsed:.2f}", refresh=False
                )
        finally:
            f.flush()
            os.fsync(f.fileno())
            if failed:
                with (run_dir / FAILED_FILE).open("a") as ff:
                    ff.writelines(json.dumps(x) + "\n" for x in failed)
    if reasons:
        log.info("finish reasons: %s", ", ".join(f"{r} {c}" for r, c in sorted(reasons.items())))
    if failed:
        log.warning(
            "%d request(s) produced no model answer (%s): not scored, listed in %s; rerun to retry them",
            len(failed),
            ", ".join(f"{r} {c}" for r, c in sorted(reasons.items()) if r in FAILED),
            run_dir / FAILED_FILE,
        )
    if new:
        log.info(
            "scoring: %d samples in %.2f s (%.0f samples/s, generation excluded)",
            new,
            scoring_s,
            new / max(scoring_s, 1e-9),
        )
    return new
