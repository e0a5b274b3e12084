"""Where DeepMath-shaped problems come from: the Hub, a local copy, or the bundled sample."""

from __future__ import annotations

import os
import socket
from importlib import resources
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

from recipe_bcr.data.io import DataError, Derive, read_table, require_columns

DEEPMATH_HUB_ID = "zwhe99/DeepMath-103K"
REQUIRED = ["question", "final_answer"]


def sample_path() -> Path:
    """The bundled DeepMath-schema stand-in (see recipe_bcr/resources/README.md)."""
    return Path(str(resources.files("recipe_bcr") / "resources" / "sample" / "deepmath_sample.parquet"))


def _hub_reachable(timeout_s: float = 3.0) -> bool:
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("HF_DATASETS_OFFLINE") == "1":
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout_s).close()
        return True
    except OSError:
        return False


def _load_hub(hub_id: str, split: str, columns: list[str] | None, derive: Derive | None) -> pd.DataFrame:
    import datasets

    if not _hub_reachable():  # fail at once instead of after datasets' retries
        raise DataError(
            f"the Hugging Face Hub is not reachable, so {hub_id!r} cannot be downloaded. Point at a local "
            f"copy instead: source=/path/to/DeepMath-103K (a parquet/JSONL file or a directory of them, "
            f"e.g. a `huggingface-cli download {hub_id} --repo-type dataset` snapshot), or use the bundled "
            f"stand-in with source=sample"
        )
    try:
        ds = datasets.load_dataset(hub_id, split=split)
    except Exception as e:  # noqa: BLE001 - re-raised with what was asked for
        raise DataError(f"could not load {hub_id!r} (split {split!r}) from the Hugging Face Hub: {e}") from e
    table = ds.data.table
    extra = derive(table) if derive else {}
    table = table.select([c for c in (columns or table.column_names) if c in table.column_names])
    for name, arr in extra.items():
        table = table.append_column(name, arr)
    df = table.to_pandas()
    df["_file"] = f"hub:{hub_id}"
    df["_row"] = range(len(df))
    return df


def load_problems(
    source: str,
    split: str = "train",
    columns: list[str] | None = None,
    derive: Derive | None = None,
    derive_from: list[str] | None = None,
) -> pd.DataFrame:
    """Load problems from `sample`, a local file/directory, or a Hub dataset id."""
    if source == "sample":
        df = read_table(sample_path(), columns, derive, derive_from)
    elif Path(source).exists():
        df = read_table(source, columns, derive, derive_from)
    elif source.count("/") == 1 and not source.startswith((".", "/")):
        df = _load_hub(source, split, columns, derive)
    else:
        raise DataError(f"source {source!r} is not 'sample', an existing file or directory, or a Hub id (owner/name)")
    require_columns(df, REQUIRED, f"{source}")
    return df
