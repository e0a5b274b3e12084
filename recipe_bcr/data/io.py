"""Table reading with errors that name the file, and all-or-nothing writes (temp + rename)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

TABLE_SUFFIXES = (".parquet", ".jsonl", ".json")


class DataError(ValueError):
    """Bad input data; the message names the file and, where known, the row."""


def json_record(line: str, path: Path, line_no: int) -> dict[str, Any]:
    """One JSON-lines record; a corrupt line is a DataError naming the file and the line."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise DataError(f"{path} line {line_no}: not a JSON record ({e.msg} at column {e.colno})") from e
    if not isinstance(record, dict):
        raise DataError(f"{path} line {line_no}: expected a JSON object, got {type(record).__name__}")
    return record


SHARD = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<total>\d{5})$")  # train-00003-of-00010.parquet


def hf_cache_snapshot(path: Path) -> Path | None:
    """For a Hugging Face cache folder (datasets--owner--name, models--...), the snapshot of the
    revision refs/main points to (the only one, if there are no refs); None for other folders."""
    snapshots = path / "snapshots"
    if not (path.name.startswith(("datasets--", "models--")) and snapshots.is_dir()):
        return None
    ref = path / "refs" / "main"
    if ref.is_file():
        revision = ref.read_text().strip()
        if not (snapshots / revision).is_dir():
            raise DataError(f"{path}: refs/main names revision {revision}, but snapshots/{revision} is missing")
        return snapshots / revision
    revisions = sorted(p.name for p in snapshots.iterdir() if p.is_dir())
    if len(revisions) != 1:
        raise DataError(
            f"{path}: a Hugging Face cache folder without refs/main and with {len(revisions)} revisions "
            f"{revisions}; point source at one of them (snapshots/<revision>)"
        )
    return snapshots / revisions[0]


def check_shards(files: list[Path], root: Path) -> None:
    """Refuse a sharded table (NAME-0000k-of-0000n) with shards missing or from two shard sets."""
    sets: dict[tuple[Path, str, str], dict[int, set[int]]] = {}
    for f in files:
        m = SHARD.match(f.name[: -len(f.suffix)])
        if m:
            sets.setdefault((f.parent, m["stem"], f.suffix), {}).setdefault(int(m["total"]), set()).add(int(m["index"]))
    for (parent, stem, suffix), totals in sets.items():
        where = parent.relative_to(root) if parent != root else Path(".")
        if len(totals) > 1:
            raise DataError(
                f"{root}: {where / stem}-*{suffix} mixes shard sets of {sorted(totals)} files (two downloads or "
                f"revisions in one folder); keep one set"
            )
        ((total, present),) = totals.items()
        missing = [str(where / f"{stem}-{i:05d}-of-{total:05d}{suffix}") for i in range(total) if i not in present]
        if missing:
            raise DataError(
                f"{root}: {len(missing)} of {total} shards missing: {', '.join(missing)}; the copy is incomplete "
                f"(re-run the download, e.g. `hf download ... --repo-type dataset --local-dir {root}`)"
            )


def table_files(path: Path) -> list[Path]:
    """The table files a source path stands for: the file itself, or every table file under a
    directory (hidden folders such as `.cache/` skipped; an HF cache folder read at one revision),
    refusing incomplete shard sets."""
    if path.is_dir():
        root = hf_cache_snapshot(path) or path
        files = sorted(
            p
            for p in root.rglob("*")
            if p.suffix in TABLE_SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )
        if not files:
            raise DataError(f"{path}: directory holds no .parquet, .jsonl or .json files")
        check_shards(files, root)
        return files
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.suffix not in TABLE_SUFFIXES:
        raise DataError(f"{path}: unsupported file type {path.suffix!r}; use .parquet, .jsonl or .json")
    return [path]


Derive = Callable[[pa.Table], dict[str, pa.Array]]


def _parquet(path: Path, columns: list[str] | None, derive: Derive | None, derive_from: list[str]) -> pd.DataFrame:
    """Stream row groups so that long text columns (R1 solutions) never sit in memory whole."""
    pf = pq.ParquetFile(path, pre_buffer=False)
    names = pf.schema_arrow.names
    wanted = [c for c in (columns or names) if c in names]
    source_cols = list(dict.fromkeys(wanted + [c for c in derive_from if c in names]))
    if not source_cols:  # none of the columns asked for: keep the row count, so the caller names what is missing
        return pd.DataFrame(index=pd.RangeIndex(pf.metadata.num_rows))
    parts = []
    for batch in pf.iter_batches(columns=source_cols, batch_size=1024):
        table = pa.Table.from_batches([batch])
        extra = derive(table) if derive else {}
        table = table.select(wanted)
        for name, arr in extra.items():
            table = table.append_column(name, arr)
        parts.append(table)
    if not parts:
        return pd.DataFrame(columns=wanted)
    return pa.concat_tables(parts).to_pandas()


def _json_lines(path: Path, columns: list[str] | None, derive: Derive | None) -> pd.DataFrame:
    chunks = []
    with pd.read_json(path, lines=True, dtype=False, chunksize=20_000) as reader:
        for chunk in reader:
            table = pa.Table.from_pandas(chunk, preserve_index=False)
            extra = derive(table) if derive else {}
            keep = [c for c in (columns or chunk.columns) if c in chunk.columns]
            chunk = chunk[keep].copy()
            for name, arr in extra.items():
                chunk[name] = arr.to_numpy(zero_copy_only=False)
            chunks.append(chunk)
    return pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame()


def _read_one(path: Path, columns: list[str] | None, derive: Derive | None, derive_from: list[str]) -> pd.DataFrame:
    try:
        if path.suffix == ".parquet":
            return _parquet(path, columns, derive, derive_from)
        if path.suffix == ".jsonl":
            return _json_lines(path, columns, derive)
        with path.open() as f:
            data = json.load(f)
        df = pd.DataFrame(data if isinstance(data, list) else [data])
        extra = derive(pa.Table.from_pandas(df, preserve_index=False)) if derive else {}
        df = df[[c for c in (columns or df.columns) if c in df.columns]].copy()
        for name, arr in extra.items():
            df[name] = arr.to_numpy(zero_copy_only=False)
        return df
    except (pa.ArrowException, ValueError, OSError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: cannot be read as {path.suffix[1:]}: {e}") from e


def read_table(
    path: str | os.PathLike[str] | Sequence[Path],
    columns: list[str] | None = None,
    derive: Derive | None = None,
    derive_from: list[str] | None = None,
) -> pd.DataFrame:
    """Read a parquet / JSONL / JSON file, every such file of a directory (table_files), or a
    list of files, in order.

    `columns` limits what is kept; `derive` computes extra columns from each chunk (reading
    `derive_from` too) before the chunk's text is let go. Adds `_file` and `_row` (0-based
    row within that file) so errors and manifests can point at the exact input row.
    """
    frames = []
    files = table_files(Path(path)) if isinstance(path, (str, os.PathLike)) else list(path)
    for file in files:
        df = _read_one(file, columns, derive, derive_from or [])
        df["_file"] = str(file)
        df["_row"] = np.arange(len(df))
        frames.append(df)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(out) == 0:
        raise DataError(f"{path}: no rows")
    if columns is not None:  # what the files hold beyond the columns kept, for require_columns' message
        out.attrs["file_columns"] = sorted({name for file in files for name in _column_names(file)})
    return out


def _column_names(path: Path) -> list[str]:
    """A table file's column names, read from its schema or first record only."""
    if path.suffix == ".parquet":
        return list(pq.read_schema(path).names)
    with path.open() as f:
        if path.suffix == ".jsonl":
            first = next((line for line in f if line.strip()), "{}")
            return list(json.loads(first))
        data = json.load(f)
    return list((data[0] if isinstance(data, list) and data else data) or {})


def require_columns(df: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        present = df.attrs.get("file_columns") or sorted(c for c in df.columns if not c.startswith("_"))
        raise DataError(f"{where}: missing column(s) {missing}; present: {present}")


class Staging:
    """Write several outputs to temp files; rename them all into place only on success."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []

    def _temp(self, target: Path) -> Path:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        os.chmod(tmp, 0o644)
        self._pending.append((Path(tmp), target))
        return Path(tmp)

    def parquet(self, rows: list[dict[str, Any]], schema: pa.Schema, target: Path) -> None:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), self._temp(target))

    def json(self, obj: Any, target: Path) -> None:
        self._temp(target).write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default) + "\n")

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            for tmp, target in self._pending:
                os.replace(tmp, target)
        for tmp, _ in self._pending:
            if tmp.exists():
                tmp.unlink()


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
