"""DeepMath sources as users have them: Hub (through huggingface_hub, proxies and offline caches
included), a sharded local copy, an HF cache folder with several revisions; streamed reading."""

import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from recipe_bcr.data import sources
from recipe_bcr.data.difficulty import r1_length_deriver
from recipe_bcr.data.io import DataError, read_table
from recipe_bcr.data.sources import load_problems

HUB_ID = "zwhe99/DeepMath-103K"
FIX = f"hf download {HUB_ID} --repo-type dataset --local-dir DIR"


@pytest.fixture(scope="module")
def substitute(shared):
    return pq.read_table(shared / "data/train/deepmath_schema_substitute.parquet")


def _shards(folder, table, total, rows_each):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(total):
        pq.write_table(table.slice(i * rows_each, rows_each), folder / f"train-{i:05d}-of-{total:05d}.parquet")


@pytest.fixture
def hf_cache(tmp_path, substitute):
    """hub/datasets--zwhe99--DeepMath-103K with an old revision (10 rows) and refs/main -> new (3 x 100 rows)."""
    repo = tmp_path / "hub" / "datasets--zwhe99--DeepMath-103K"
    _shards(repo / "snapshots/old1/data", substitute, 1, 10)
    _shards(repo / "snapshots/new2/data", substitute, 3, 100)
    (repo / "refs").mkdir()
    (repo / "refs/main").write_text("new2")
    return repo


def test_sharded_copy_reads_every_shard(tmp_path, substitute):
    _shards(tmp_path / "DeepMath/data", substitute, 4, 50)
    df = load_problems(str(tmp_path / "DeepMath"))
    assert len(df) == 200 and df["question"].tolist() == substitute["question"].to_pylist()[:200]


def test_a_missing_shard_is_refused_by_name(tmp_path, substitute):
    _shards(tmp_path / "DeepMath/data", substitute, 10, 20)
    for i in (3, 7):
        (tmp_path / f"DeepMath/data/train-{i:05d}-of-00010.parquet").unlink()
    with pytest.raises(
        DataError, match=r"2 of 10 shards missing: data/train-00003-of-00010.parquet, data/train-00007-of-00010.parquet"
    ):
        load_problems(str(tmp_path / "DeepMath"))


def test_two_shard_sets_in_one_folder_are_refused(tmp_path, substitute):
    _shards(tmp_path / "d", substitute, 2, 10)
    _shards(tmp_path / "d", substitute, 3, 10)
    with pytest.raises(DataError, match="mixes shard sets"):
        load_problems(str(tmp_path / "d"))


def test_hf_cache_folder_reads_the_revision_refs_main_names(hf_cache, substitute):
    df = load_problems(str(hf_cache))
    assert len(df) == 300 and all("/snapshots/new2/" in f for f in df["_file"])
    (hf_cache / "refs/main").unlink()
    with pytest.raises(DataError, match=r"without refs/main and with 2 revisions \['new2', 'old1'\]"):
        load_problems(str(hf_cache))


def _hub_load(env, cwd):
    code = f"from recipe_bcr.data.sources import load_problems; print('rows', len(load_problems({HUB_ID!r})))"
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "env",
    [
        {"HF_HUB_OFFLINE": "1"},
        {"HF_ENDPOINT": "http://127.0.0.1:9"},
        {"HTTPS_PROXY": "http://127.0.0.1:9", "HF_ENDPOINT": "https://huggingface.co"},
    ],
    ids=["offline", "endpoint_down", "proxy_down"],
)
def test_hub_id_with_a_warm_cache_works_offline_and_behind_a_dead_link(hf_cache, env, tmp_path):
    proc = _hub_load({"HF_HUB_CACHE": str(hf_cache.parent), **env}, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "rows 300" in proc.stdout


def test_hub_failure_is_one_line_naming_hf_download(tmp_path):
    proc = _hub_load({"HF_HUB_CACHE": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "1"}, tmp_path)
    assert proc.returncode != 0
    message = [line for line in proc.stderr.splitlines() if line.startswith("recipe_bcr.data.io.DataError")]
    assert len(message) == 1 and FIX in message[0] and "\n" not in message[0]


def test_hub_path_streams_like_a_local_file(hf_cache, substitute, monkeypatch, shared):
    """r1_length with a tokenizer is measured batch by batch (never on whole 103k-row columns)."""
    files = sorted((hf_cache / "snapshots/new2/data").glob("*.parquet"))
    big = hf_cache.parent / "big"
    big.mkdir()
    pq.write_table(substitute.slice(0, 2500), big / "train-00000-of-00001.parquet")
    monkeypatch.setattr(sources, "hub_files", lambda hub_id, split: [big / "train-00000-of-00001.parquet", *files])
    seen = []
    derive = r1_length_deriver(str(shared / "tokenizers/qwen3"))

    def spy(table):
        seen.append(table.num_rows)
        return derive(table)

    df = load_problems(HUB_ID, derive=spy, derive_from=["r1_solution_1", "r1_solution_2", "r1_solution_3"])
    assert len(df) == 2800 and max(seen) <= 1024 and sum(seen) == 2800
    assert "r1_mean_length" in df.columns
    assert len(read_table(files)) == 300


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_wrong_columns_are_named_not_reported_as_no_rows(tmp_path, suffix):
    """A table with rows but none of the columns asked for names the missing columns and the ones it has."""
    import pandas as pd

    df = pd.DataFrame({"problem": ["1+1?", "2+2?"], "solution": ["2", "4"]})
    path = tmp_path / f"other{suffix}"
    df.to_parquet(path) if suffix == ".parquet" else df.to_json(path, orient="records", lines=True)
    with pytest.raises(DataError) as e:
        load_problems(str(path), columns=["question", "final_answer", "difficulty"])
    msg = str(e.value)
    assert "missing column(s) ['question', 'final_answer']" in msg and "'problem'" in msg and "'solution'" in msg
    assert "no rows" not in msg
