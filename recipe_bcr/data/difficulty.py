"""Per-problem difficulty, from one of three sources (the paper uses rollout length).

  column     DeepMath's `difficulty` score;
  r1_length  mean length of the R1 solutions r1_solution_1..3, in tokens of the given
             tokenizer, or in characters when none is given (empty solutions are skipped;
             a problem with none has no difficulty);
  rollouts   mean response length over k sampled completions, read from the file that
             data_prep/estimate_difficulty.py writes (problem_id, lengths, mean_length).
Problems without a difficulty are reported by the caller, never silently kept or dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from recipe_bcr.data.io import DataError, read_table, require_columns

Method = Literal["column", "r1_length", "rollouts"]
R1_COLUMNS = ["r1_solution_1", "r1_solution_2", "r1_solution_3"]


def from_column(df: pd.DataFrame) -> np.ndarray:
    require_columns(df, ["difficulty"], "difficulty=column")
    return pd.to_numeric(df["difficulty"], errors="coerce").to_numpy(dtype=float)


R1_MEAN = "r1_mean_length"


def r1_length_deriver(tokenizer: str | None = None) -> Callable[[pa.Table], dict[str, pa.Array]]:
    """A per-chunk reader hook computing the mean R1 solution length (chars or tokens).

    Runs while the table streams in, so the ~45k characters of solutions per row are
    measured and dropped chunk by chunk instead of being held for 103k rows.
    """
    tok = None
    if tokenizer:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tokenizer)

    def lengths(col: pa.ChunkedArray) -> np.ndarray:
        if tok is None:
            return pc.fill_null(pc.utf8_length(col), 0).to_numpy(zero_copy_only=False).astype(float)
        texts = [t or "" for t in col.to_pylist()]
        ids = tok(texts, add_special_tokens=False)["input_ids"]
        return np.array([len(x) if t else 0 for x, t in zip(ids, texts)], dtype=float)

    def derive(table: pa.Table) -> dict[str, pa.Array]:
        missing = [c for c in R1_COLUMNS if c not in table.column_names]
        if missing:
            raise DataError(f"difficulty=r1_length needs columns {missing}")
        per = np.stack([lengths(table[c]) for c in R1_COLUMNS], axis=1)
        counts = (per > 0).sum(axis=1)
        mean = np.where(counts > 0, per.sum(axis=1) / np.maximum(counts, 1), np.nan)
        return {R1_MEAN: pa.array(mean, type=pa.float64())}

    return derive


def from_r1_length(df: pd.DataFrame) -> np.ndarray:
    require_columns(df, [R1_MEAN], "difficulty=r1_length (load with r1_length_deriver)")
    return df[R1_MEAN].to_numpy(dtype=float)


def from_rollouts(problem_ids: pd.Series, path: str | Path) -> np.ndarray:
    table = read_table(path)
    require_columns(table, ["problem_id", "mean_length"], str(path))
    lookup = dict(zip(table["problem_id"].astype(str), pd.to_numeric(table["mean_length"], errors="coerce")))
    return np.array([lookup.get(pid, np.nan) for pid in problem_ids.astype(str)], dtype=float)


def difficulty(df: pd.DataFrame, method: Method, *, rollouts_file: str | None = None) -> np.ndarray:
    """Difficulty per row (NaN where the source has none)."""
    if method == "column":
        return from_column(df)
    if method == "r1_length":
        return from_r1_length(df)
    if method == "rollouts":
        if not rollouts_file:
            raise DataError("difficulty=rollouts needs rollouts_file=... (written by data_prep/estimate_difficulty.py)")
        return from_rollouts(df["problem_id"], rollouts_file)
    raise DataError(f"unknown difficulty method {method!r}; choose column, r1_length or rollouts")
