"""Where DeepMath-shaped problems come from: the Hub, a local copy, or the bundled sample."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from recipe_bcr.data.io import DataError, Derive, read_table, require_columns, table_files

DEEPMATH_HUB_ID = "zwhe99/DeepMath-103K"
REQUIRED = ["question", "final_answer"]


def sample_path() -> Path:
    """The bundled DeepMath-schema stand-in (see recipe_bcr/resources/README.md)."""
    return Path(str(resources.files("recipe_bcr") / "resources" / "sample" / "deepmath_sample.parquet"))


def hub_files(hub_id: str, split: str) -> list[Path]:
    """The split's table files of a Hub dataset, from the local HF cache or downloaded into it.

    huggingface_hub decides how: it honours HTTPS_PROXY, HF_ENDPOINT and HF_HUB_OFFLINE, and
    falls back to a warm cache when the Hub cannot be reached. Any failure is one line that
    says how to bring a local copy.
    """
    from huggingface_hub import snapshot_download

    patterns = [f"data/{split}-*", f"data/{split}/*", f"{split}-*", f"{split}/*"]
    try:
        root = Path(snapshot_download(hub_id, repo_type="dataset", allow_patterns=patterns))
    except Exception as e:  # noqa: BLE001 - every Hub failure becomes the same actionable message
        reason = (str(e).strip().splitlines() or [""])[0]
        raise DataError(
            f"cannot get {hub_id!r} from the Hugging Face Hub ({type(e).__name__}: {reason}). Where the Hub is "
            f"reachable run `hf download {hub_id} --repo-type dataset --local-dir DIR` and use source=DIR "
            f"(or source=sample for the bundled stand-in)"
        ) from e
    files = [f for f in table_files(root) if any(f.relative_to(root).match(p) for p in patterns)]
    if not files:
        raise DataError(f"{hub_id}: the Hub snapshot {root} has no table files for split {split!r}")
    return files


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
        files = hub_files(source, split)  # then read like a local copy: streamed, shards checked
        df = read_table(files, columns, derive, derive_from)
    else:
        raise DataError(f"source {source!r} is not 'sample', an existing file or directory, or a Hub id (owner/name)")
    require_columns(df, REQUIRED, f"{source}")
    return df
