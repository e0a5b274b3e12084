"""build_groups on the real stand-in data: schema, accounting, determinism, bad input."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recipe_bcr.data.io import DataError
from recipe_bcr.data.pipeline import build_groups, problem_id
from recipe_bcr.data.prompt import group_system_prompt

REPO = Path(__file__).resolve().parents[1]


def _build(out, **kw):
    args = dict(source="sample", output_dir=out, n=[3, 4], groups=600, val_groups=20, seed=5, progress=False)
    args.update(kw)
    return build_groups(**args)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("groups")
    return out, _build(out)


def test_outputs_and_schema(built):
    out, manifest = built
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "train_n3.parquet",
        "train_n4.parquet",
        "val_n3.parquet",
        "val_n4.parquet",
    ]
    df = pd.read_parquet(out / "train_n3.parquet")
    assert len(df) == 600 and manifest["per_n"]["3"]["train_groups"] == 600
    row = df.iloc[0]
    assert row["data_source"] == "deepmath_bcr" and row["ability"] == "math"
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["prompt"][0]["content"] == group_system_prompt(3)
    assert row["prompt"][1]["content"].count("### Problem") == 3
    info = row["extra_info"]
    assert info["n"] == 3 and len(info["problem_ids"]) == 3 and len(info["difficulties"]) == 3
    assert len(row["reward_model"]["ground_truth"]) == 3 and info["split"] == "train"
    val = pd.read_parquet(out / "val_n3.parquet")
    train_ids = {p for ids in df["extra_info"].map(lambda e: e["problem_ids"]) for p in ids}
    val_ids = {p for ids in val["extra_info"].map(lambda e: e["problem_ids"]) for p in ids}
    assert len(val) == 20 and not train_ids & val_ids


def test_every_input_row_is_accounted_for(built, shared):
    _, manifest = built
    n_input = len(pd.read_parquet(shared / "data/train/deepmath_schema_substitute.parquet"))
    assert manifest["input_rows"] == n_input
    listed_dropped = sum(
        len(rows) for by_file in manifest["cleaning"]["dropped_rows"].values() for rows in by_file.values()
    )
    assert listed_dropped == manifest["cleaning"]["dropped"]
    for info in manifest["per_n"].values():
        acc = info["accounting"]
        assert acc["train"] + acc["val"] + acc["dropped"] + acc["not_selected"] == n_input
        listed = sum(len(r) for r in info["not_selected_rows"].values())
        assert listed == acc["not_selected"]


def test_duplicates_and_contamination_are_reported(built):
    _, manifest = built
    reasons = manifest["cleaning"]["dropped_by_reason"]
    assert reasons.get("duplicate_of", 0) > 0


def _benchmark_problem(file: str, line: int, column: str = "problem") -> str:
    """A problem as the bundled benchmark file (the one the build's config names) holds it."""
    return json.loads((REPO / "recipe_bcr/resources/benchmarks" / file).read_text().splitlines()[line])[column]


def _problem_ids(out: Path) -> set[str]:
    """Every problem in a group of the build in `out`, train and validation."""
    frames = [pd.read_parquet(part) for part in out.glob("*.parquet")]
    return {p for df in frames for info in df["extra_info"] for p in info["problem_ids"]}


def test_benchmark_problems_planted_in_the_training_data_are_dropped(tmp_path, shared):
    """Decontamination against the benchmarks build_groups is configured with (the stand-in data has
    its overlaps removed, so they are planted here): an AIME25 problem as written, a MATH-500 one
    re-spaced, upper-cased and without its `$`, and an OlympiadBench one without its leading newline
    are dropped as `contaminated:<benchmark>`; an AMC23 problem with one number changed is kept.
    Every other row ends as it does in the same build without decontamination, and the planted
    problems, which that build puts in its groups, are in no group."""
    from omegaconf import OmegaConf

    benchmarks = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))
    near_miss = _benchmark_problem("amc23.jsonl", 1)
    assert "4y^2" in near_miss
    df = pd.read_parquet(shared / "data/train/deepmath_schema_substitute.parquet").head(300)
    df.loc[5, "question"] = _benchmark_problem("aime25.jsonl", 0)
    df.loc[9, "question"] = "  " + _benchmark_problem("math500.jsonl", 2).replace("$", "").replace(" ", "\n  ").upper()
    df.loc[12, "question"] = _benchmark_problem("olympiadbench.jsonl", 2, "question").strip()
    df.loc[14, "question"] = near_miss.replace("4y^2", "5y^2")
    planted = {problem_id(q) for q in df.loc[[5, 9, 12], "question"]}
    src = _parquet(tmp_path / "in.parquet", df)
    # n=3 with more groups than the rows allow: every kept row is in a group (or one of the last two left over)
    kw = dict(source=src, n=[3], groups=200, val_groups=5)
    plain = _build(tmp_path / "plain", **kw)
    assert planted <= _problem_ids(tmp_path / "plain")
    manifest = _build(tmp_path / "out", decontaminate_against=benchmarks, **kw)
    rows = manifest["cleaning"]["dropped_rows"]
    contaminated = {reason: by_file for reason, by_file in rows.items() if reason.startswith("contaminated:")}
    assert contaminated == {
        "contaminated:AIME25": {src: [5]},
        "contaminated:MATH-500": {src: [9]},
        "contaminated:OlympiadBench": {src: [12]},
    }
    assert {r: f for r, f in rows.items() if r not in contaminated} == plain["cleaning"]["dropped_rows"]
    assert manifest["cleaning"]["kept"] == plain["cleaning"]["kept"] - 3
    acc = manifest["per_n"]["3"]["accounting"]
    assert acc["train"] + acc["val"] + acc["dropped"] + acc["not_selected"] == len(df)
    assert not planted & _problem_ids(tmp_path / "out")
    assert all(14 not in listed for by_file in rows.values() for listed in by_file.values())  # the near miss


def test_group_quality_better_than_random(built):
    _, manifest = built
    for info in manifest["per_n"].values():
        assert info["quality"]["spread_ratio"] < 0.6
        assert abs(info["quality"]["position_difficulty_corr"]) < 0.1


def test_deterministic(built, tmp_path):
    out, _ = built
    _build(tmp_path)
    for name in ("train_n3.parquet", "val_n4.parquet"):
        a = hashlib.sha256((out / name).read_bytes()).hexdigest()
        b = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        assert a == b


def test_verl_dataset_loads_with_real_tokenizer(built, shared):
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out, _ = built
    tok = AutoTokenizer.from_pretrained(str(shared / "tokenizers/qwen3"))
    cfg = OmegaConf.create(
        {"max_prompt_length": 2048, "filter_overlong_prompts": True, "cache_dir": str(out / "cache")}
    )
    ds = RLHFDataset(str(out / "val_n3.parquet"), tok, cfg)
    assert len(ds) == 20  # nothing filtered as overlong
    item = ds[0]
    assert item["extra_info"]["n"] == 3 and item["data_source"] == "deepmath_bcr"
    assert len(item["reward_model"]["ground_truth"]) == 3


def _parquet(path, df):
    df.to_parquet(path)
    return str(path)


@pytest.mark.parametrize(
    "frame,match",
    [
        (pd.DataFrame({"question": ["a"], "answer": ["1"]}), r"missing column\(s\) \['final_answer'\]"),
        (
            pd.DataFrame({"question": ["q1", "q2"], "final_answer": [np.nan, None], "difficulty": [1.0, 2.0]}),
            "no usable rows",
        ),
        (pd.DataFrame({"question": [], "final_answer": []}), "no rows"),
    ],
)
def test_bad_inputs_write_nothing(tmp_path, frame, match):
    src = _parquet(tmp_path / "in.parquet", frame)
    out = tmp_path / "out"
    with pytest.raises(DataError, match=match):
        _build(out, source=src)
    assert not out.exists() or not any(out.iterdir())


def test_corrupt_parquet_names_the_file(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DataError, match="broken.parquet"):
        _build(tmp_path / "out", source=str(bad))
    assert not (tmp_path / "out").exists()


def test_nan_answers_are_dropped_with_reason(tmp_path, shared):
    df = pd.read_parquet(shared / "data/train/deepmath_schema_substitute.parquet").head(300)
    df.loc[[3, 7], "final_answer"] = np.nan
    df.loc[11, "final_answer"] = "We prove this by induction. QED"
    src = _parquet(tmp_path / "in.parquet", df)
    manifest = _build(tmp_path / "out", source=src, groups=50, val_groups=5)
    rows = manifest["cleaning"]["dropped_rows"]
    assert sorted(rows["empty_answer"][src]) == [3, 7]
    assert rows["unverifiable_answer"][src] == [11]


def test_hub_offline_fails_fast_with_a_fix(tmp_path, monkeypatch):
    """Offline, the Hub id fails at once with the command that fixes it: no connection is tried
    (a retrying download would hang the step for minutes)."""
    import socket

    connects = []
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: connects.append(address))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="hf download zwhe99/DeepMath-103K --repo-type dataset --local-dir DIR"):
        _build(tmp_path / "out", source="zwhe99/DeepMath-103K")
    assert connects == []


def test_difficulty_from_r1_length_in_tokens_and_chars(tmp_path, shared):
    df = pd.read_parquet(shared / "data/train/deepmath_schema_substitute.parquet").head(120).copy()
    rng = np.random.default_rng(0)
    for k in (1, 2, 3):
        df[f"r1_solution_{k}"] = ["step " * int(x) for x in rng.integers(10, 400, len(df))]
    df.loc[5, ["r1_solution_1", "r1_solution_2", "r1_solution_3"]] = ""
    src = _parquet(tmp_path / "in.parquet", df)
    chars = _build(tmp_path / "c", source=src, n=[3], groups=30, val_groups=2, difficulty_method="r1_length")
    toks = _build(
        tmp_path / "t",
        source=src,
        n=[3],
        groups=30,
        val_groups=2,
        difficulty_method="r1_length",
        tokenizer=str(shared / "tokenizers/qwen3"),
    )
    assert chars["cleaning"]["dropped_rows"]["no_difficulty"][src] == [5]
    assert toks["cleaning"]["dropped_rows"]["no_difficulty"][src] == [5]
    d_chars = np.concatenate(
        pd.read_parquet(tmp_path / "c/train_n3.parquet")["extra_info"].map(lambda e: e["difficulties"]).to_list()
    )
    d_toks = np.concatenate(
        pd.read_parquet(tmp_path / "t/train_n3.parquet")["extra_info"].map(lambda e: e["difficulties"]).to_list()
    )
    assert d_chars.mean() > 3 * d_toks.mean() > 0  # "step " is 5 characters and about 1 token


def test_difficulty_from_rollouts_file(tmp_path, shared):
    df = pd.read_parquet(shared / "data/train/deepmath_schema_substitute.parquet").head(60)
    src = _parquet(tmp_path / "in.parquet", df)
    ids = [problem_id(q) for q in df["question"]]
    lengths = pd.DataFrame({"problem_id": ids[:50], "mean_length": np.arange(50, dtype=float) * 10})
    roll = _parquet(tmp_path / "roll.parquet", lengths)
    m = _build(
        tmp_path / "out", source=src, n=[3], groups=10, val_groups=1, difficulty_method="rollouts", rollouts_file=roll
    )
    assert m["cleaning"]["dropped_by_reason"]["no_difficulty"] >= 1
    assert m["per_n"]["3"]["train_groups"] == 10


def test_cli_composes_with_hydra_and_prints_help(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    help_out = subprocess.run(
        [sys.executable, "data_prep/build_groups.py", "--help"], cwd=REPO, capture_output=True, text=True, env=env
    ).stdout
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(REPO / "hydra_configs/build_groups.yaml")
    for key in [k for k in cfg if k not in ("defaults", "hydra", "difficulty", "prompt_check")] + [
        "decontaminate_against"
    ]:
        assert f"{key}=" in help_out, f"option {key} has no help text"
    for key in cfg.difficulty:
        assert f"difficulty.{key}=" in help_out
    for key in cfg.prompt_check:
        assert f"prompt_check.{key}=" in help_out
    out = tmp_path / "cli"
    proc = subprocess.run(
        [
            sys.executable,
            "data_prep/build_groups.py",
            "source=sample",
            f"out={out}",
            "n=[2]",
            "groups=40",
            "val_groups=4",
            "progress=false",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((out / "manifest.json").read_text())["per_n"]["2"]["train_groups"] == 40
    bad = subprocess.run(
        [sys.executable, "data_prep/build_groups.py", "source=/nonexistent/file.parquet", f"out={tmp_path / 'x'}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2 and "nonexistent" in bad.stderr + bad.stdout
    no_tok = subprocess.run(
        [
            sys.executable,
            "data_prep/build_groups.py",
            "source=sample",
            f"out={tmp_path / 'y'}",
            "n=[2]",
            "groups=5",
            "val_groups=1",
            "difficulty.method=r1_length",
            "difficulty.tokenizer=/no/such/tokenizer",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
    )
    out = no_tok.stderr + no_tok.stdout
    assert no_tok.returncode == 2 and "/no/such/tokenizer" in out and "Traceback" not in out
    assert not (tmp_path / "y" / "manifest.json").exists()


def test_prompt_lengths_are_reported_against_the_limit(tmp_path, shared):
    m = _build(
        tmp_path / "p",
        n=[3],
        groups=300,
        val_groups=5,
        prompt_tokenizer=str(shared / "tokenizers/qwen3"),
        max_prompt_tokens=600,
    )
    rep = m["per_n"]["3"]["prompt_tokens"]["train"]
    assert rep["max"] > 600 and rep["over_limit"] and rep["limit"] == 600
    df = pd.read_parquet(tmp_path / "p" / "train_n3.parquet")
    assert len(df) == 300  # reported, never dropped
