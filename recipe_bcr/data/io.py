"""Table reading with errors that name the file, and all-or-nothing writes (temp + rename)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

TABLE_SUFFIXES = (".parquet", ".jsonl", ".json")


class DataError(ValueError):
    """Bad input data; the message names the file and, where known, the row."""


def _table_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in TABLE_SUFFIXES and p.is_file())
        if not files:
            raise DataError(f"{path}: directory holds no .parquet, .jsonl or .json files")
        return files
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.suffix not in TABLE_SUFFIXES:
        raise DataError(f"{path}: unsupported file type {path.suffix!r}; use .parquet, .jsonl or .json")
    return [path]


def _read_one(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".parquet":
            return pq.read_table(path).to_pandas()
        if path.suffix == ".jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        with path.open() as f:
            data = json.load(f)
        return pd.DataFrame(data if isinstance(data, list) else [data])
    except (pa.ArrowException, ValueError, OSError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: cannot be read as {path.suffix[1:]}: {e}") from e


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a parquet / JSONL / JSON file, or every such file of a directory, in order.

    Adds `_file` and `_row` (0-based row within that file) so errors and manifests can point
    at the exact input row.
    """
    frames = []
    for file in _table_files(Path(path)):
        df = _read_one(file)
        df["_file"] = str(file)
        df["_row"] = range(len(df))
        frames.append(df)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if out.empty:
        raise DataError(f"{path}: no rows")
    return out


def require_columns(df: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        present = sorted(c for c in df.columns if not c.startswith("_"))
        raise DataError(f"{where}: missing column(s) {missing}; present: {present}")


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path beside `target`; rename onto it only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_parquet(rows: list[dict[str, Any]], schema: pa.Schema, target: Path) -> None:
    table = pa.Table.from_pylist(rows, schema=schema)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)


def write_json(obj: Any, target: Path) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
