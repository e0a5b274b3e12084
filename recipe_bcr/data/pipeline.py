"""build_groups: load -> clean -> rate difficulty -> group per N -> verl parquet + manifest.

Every input row ends up in exactly one place per N, which the manifest records: a training
group, a validation group, dropped by cleaning (with its reason), without a difficulty, or
not selected (the data holds more problems than N x (groups + val_groups)). All outputs are
staged and renamed together, so a failed run leaves no output.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from recipe_bcr.data.clean import Dropped, clean, contamination_index, normalize_question
from recipe_bcr.data.difficulty import R1_COLUMNS, difficulty, r1_length_deriver
from recipe_bcr.data.eval_benchmarks import BenchmarkSpec, load_benchmark
from recipe_bcr.data.grouping import quality, stratified_groups
from recipe_bcr.data.io import DataError, Staging
from recipe_bcr.data.schema import SCHEMA, GroupRow, Problem, to_record
from recipe_bcr.data.sources import load_problems

logger = logging.getLogger(__name__)
BASE_COLUMNS = ["question", "final_answer", "difficulty", "topic"]
DATA_SOURCE = "deepmath_bcr"


def problem_id(question: str) -> str:
    """Stable id from the normalised question (the key of rollout-length files)."""
    return "dm-" + hashlib.sha1(normalize_question(question).encode()).hexdigest()[:16]


def content_hash(df: pd.DataFrame, columns: Iterable[str]) -> str:
    cols = [c for c in columns if c in df.columns]
    hashed = pd.util.hash_pandas_object(df[cols].astype(str), index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()


def _rows_by_reason(items: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, list[int]]]:
    """{reason: {file: [rows]}}: compact enough for 100k rows."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for reason, file, row in items:
        out[reason][file].append(int(row))
    return {r: dict(f) for r, f in out.items()}


def _group_rows(cols: dict[str, list[Any]], d: np.ndarray, groups: np.ndarray, split: str) -> list[dict[str, Any]]:
    rows = []
    for index, members in enumerate(groups):
        probs = [
            Problem(
                cols["problem_id"][i],
                str(cols["question"][i]).strip(),
                (str(cols["final_answer"][i]).strip(),),
                float(d[i]),
                cols["topic"][i] if isinstance(cols["topic"][i], str) else "",
            )
            for i in members
        ]
        rows.append(to_record(GroupRow(probs, split=split, index=index, data_source=DATA_SOURCE)))
    return rows


def prompt_token_report(rows: list[dict[str, Any]], tokenizer: Any, limit: int | None) -> dict[str, Any]:
    """Chat-template token length of every group prompt. verl drops prompts longer than
    data.max_prompt_length, so the groups over `limit` are listed by index (and logged)."""
    texts = [tokenizer.apply_chat_template(list(r["prompt"]), tokenize=False, add_generation_prompt=True) for r in rows]
    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []
    over = [i for i, n in enumerate(lengths) if limit and n > limit]
    return {
        "max": max(lengths, default=0),
        "mean": float(np.mean(lengths)) if lengths else 0.0,
        "limit": limit,
        "over_limit": over,
    }


def build_groups(
    *,
    source: str,
    output_dir: str | Path,
    n: list[int],
    groups: int,
    val_groups: int,
    seed: int,
    difficulty_method: str = "column",
    tokenizer: str | None = None,
    rollouts_file: str | None = None,
    decontaminate_against: Mapping[str, Mapping[str, Any]] | None = None,
    split: str = "train",
    progress: bool = True,
    config: Mapping[str, Any] | None = None,
    prompt_tokenizer: str | None = None,
    max_prompt_tokens: int | None = None,
) -> dict[str, Any]:
    """Build BCR's training data: difficulty-stratified groups of N problems in verl's parquet schema.

    Args:
        source: `sample` (the bundled DeepMath-shaped stand-in), a parquet/JSONL file or folder in DeepMath's
            layout, or a Hub id (`zwhe99/DeepMath-103K`).
        output_dir: where `train_n{N}.parquet`, `val_n{N}.parquet` and `manifest.json` go (all or nothing).
        n: group sizes, one train/val pair per N.
        groups, val_groups: training and validation groups per N (fewer when the data is short; reported).
        seed: every random step derives from it (same inputs and seed, identical files).
        difficulty_method: `column` (DeepMath's score), `r1_length` (mean R1 solution length; in tokens of
            `tokenizer` if given) or `rollouts` (`rollouts_file` from data_prep/estimate_difficulty.py).
        decontaminate_against: benchmark specs whose questions are dropped from the training data.
        split, progress, config: the Hub split, progress bars, and the settings recorded in the manifest.
        prompt_tokenizer, max_prompt_tokens: record each group's chat-template length and warn about long ones.

    Returns:
        The manifest (also written): input hash, every input row not used with its reason, per-N accounting and
        group quality.

    Raises:
        DataError: bad input (a missing file or column, no usable rows, a bad option), naming the file and row;
            nothing is written then.

    Example:
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> manifest = build_groups(source="sample", output_dir=out, n=[3], groups=20, val_groups=2, seed=0,
        ...                         progress=False)
        >>> manifest["per_n"]["3"]["train_groups"], manifest["per_n"]["3"]["val_groups"]
        (20, 2)
        >>> sorted(p.name for p in Path(out).iterdir())
        ['manifest.json', 'train_n3.parquet', 'val_n3.parquet']
    """
    if groups < 1 or val_groups < 0:
        raise DataError(f"groups must be >= 1 and val_groups >= 0 (got {groups}, {val_groups})")
    if not n or any(int(k) < 1 for k in n):
        raise DataError(f"n must be a non-empty list of group sizes >= 1, got {n}")
    out = Path(output_dir)
    derive = r1_length_deriver(tokenizer) if difficulty_method == "r1_length" else None
    with tqdm(total=1, desc="load", disable=not progress) as bar:
        df = load_problems(source, split, BASE_COLUMNS, derive, R1_COLUMNS if derive else None)
        bar.update()
    n_input = len(df)
    input_hash = content_hash(df, BASE_COLUMNS + ["r1_mean_length"])
    df["problem_id"] = [problem_id(str(q)) if isinstance(q, str) else "" for q in df["question"]]

    bench = {}
    for name, spec in (decontaminate_against or {}).items():
        bench[name] = [p.question for p in load_benchmark(BenchmarkSpec.from_config(name, spec))]
    kept, dropped = clean(df, contamination_index(bench.items()))
    d = difficulty(kept, difficulty_method, rollouts_file=rollouts_file)  # type: ignore[arg-type]
    rated = ~np.isnan(d)
    dropped += [Dropped(str(f), int(r), "no_difficulty") for f, r in zip(kept["_file"][~rated], kept["_row"][~rated])]
    kept, d = kept[rated].reset_index(drop=True), d[rated]
    if len(kept) == 0:
        raise DataError(f"{source}: no usable rows left after cleaning ({n_input} read); see the reasons above")

    drop_counts = pd.Series([x.reason.split(":")[0] for x in dropped]).value_counts().to_dict() if dropped else {}
    manifest: dict[str, Any] = {
        "source": source,
        "input_rows": n_input,
        "input_hash": input_hash,
        "seed": seed,
        "config": dict(config or {}),
        "cleaning": {
            "kept": len(kept),
            "dropped": len(dropped),
            "dropped_by_reason": drop_counts,
            "dropped_rows": _rows_by_reason((x.reason, x.file, x.row) for x in dropped),
        },
        "per_n": {},
    }
    tokenizer = None
    if prompt_tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(prompt_tokenizer)
    cols = {
        c: kept[c].tolist() if c in kept.columns else [""] * len(kept)
        for c in ("problem_id", "question", "final_answer", "topic")
    }
    files, file_rows = kept["_file"].to_numpy(), kept["_row"].to_numpy()
    with Staging() as stage:
        for size in tqdm([int(k) for k in n], desc="group sizes", disable=not progress):
            # validation is reserved first, so a small dataset still validates
            val = stratified_groups(d, size, val_groups, seed + 1000 + size) if val_groups else np.empty((0, size), int)
            rest = np.setdiff1d(np.arange(len(kept)), val.ravel())
            train_local = stratified_groups(d[rest], size, groups, seed + size)
            train = rest[train_local] if train_local.size else train_local
            used = np.zeros(len(kept), dtype=bool)
            used[train.ravel()] = True
            used[val.ravel()] = True
            unused = np.flatnonzero(~used)
            train_rows, val_rows = _group_rows(cols, d, train, "train"), _group_rows(cols, d, val, "val")
            stage.parquet(train_rows, SCHEMA, out / f"train_n{size}.parquet")
            stage.parquet(val_rows, SCHEMA, out / f"val_n{size}.parquet")
            prompt_tokens = None
            if tokenizer is not None:
                prompt_tokens = {
                    "train": prompt_token_report(train_rows, tokenizer, max_prompt_tokens),
                    "val": prompt_token_report(val_rows, tokenizer, max_prompt_tokens),
                }
                for split_name, rep in prompt_tokens.items():
                    if rep["over_limit"]:
                        logger.warning(
                            "n=%d %s: %d group prompts exceed %d tokens (max %d); verl would drop them: raise "
                            "bcr.prompt_length or rebuild with fewer long problems",
                            size,
                            split_name,
                            len(rep["over_limit"]),
                            max_prompt_tokens,
                            rep["max"],
                        )
            q = quality(d, train, seed) if len(train) else None
            if len(train) < groups:
                logger.warning(
                    "n=%d: only %d training groups (asked for %d): %d usable problems",
                    size,
                    len(train),
                    groups,
                    len(kept),
                )
            manifest["per_n"][str(size)] = {
                "train_groups": int(len(train)),
                "val_groups": int(len(val)),
                "requested_groups": groups,
                "requested_val_groups": val_groups,
                "problems_in_train": int(train.size),
                "problems_in_val": int(val.size),
                "not_selected": int(len(unused)),
                "not_selected_rows": _rows_by_reason(("not_selected", files[i], file_rows[i]) for i in unused).get(
                    "not_selected", {}
                ),
                "accounting": {
                    "input": n_input,
                    "train": int(train.size),
                    "val": int(val.size),
                    "dropped": len(dropped),
                    "not_selected": int(len(unused)),
                },
                "quality": asdict(q) if q else None,
                "prompt_tokens": prompt_tokens,
                "files": {"train": f"train_n{size}.parquet", "val": f"val_n{size}.parquet"},
            }
        stage.json(manifest, out / "manifest.json")
    return manifest
