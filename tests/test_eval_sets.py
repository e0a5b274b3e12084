"""N-grouped evaluation sets from the bundled benchmarks and from a user's own file."""

import pandas as pd
import pytest
from omegaconf import OmegaConf

from recipe_bcr.data.eval_benchmarks import BenchmarkSpec, load_benchmark, normalize_answer
from recipe_bcr.data.eval_sets import build_eval_sets
from recipe_bcr.data.io import DataError

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
PAPER = OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs/benchmarks/paper.yaml"))
SIZES = {"AIME25": 30, "AMC23": 40, "MATH-500": 500, "Minerva": 272, "OlympiadBench": 675}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    return out, build_eval_sets(benchmarks=PAPER, output_dir=out, n=[1, 2, 3, 4, 5], seed=0, progress=False)


def test_every_problem_scored_once_at_every_n(built):
    out, manifest = built
    for name, size in SIZES.items():
        for n in range(1, 6):
            df = pd.read_parquet(out / f"{name}_n{n}.parquet")
            assert (df["data_source"] == name).all()
            scored_ids = [pid for info in df["extra_info"] for pid, s in zip(info["problem_ids"], info["scored"]) if s]
            assert len(scored_ids) == len(set(scored_ids)) == size
            assert all(len(info["problem_ids"]) == n for info in df["extra_info"])
            assert manifest["sets"][f"{name}/n{n}"]["scored_problems"] == size


def test_answers_normalised_at_load():
    specs = {name: BenchmarkSpec.from_config(name, cfg) for name, cfg in PAPER.items()}
    amc = load_benchmark(specs["AMC23"])
    assert amc[0].answers == ("27",)
    minerva = load_benchmark(specs["Minerva"])
    assert minerva[0].answers == ("1.6",)
    assert all(len(p.answers) >= 1 and "\\boxed" not in p.answers[0] for p in minerva)
    oly = load_benchmark(specs["OlympiadBench"])
    assert all("$" not in p.answers[0] for p in oly)


def test_n1_style_is_selectable(tmp_path):
    m = build_eval_sets(
        benchmarks={"AIME25": PAPER["AIME25"]}, output_dir=tmp_path, n=[1, 2], seed=0, n1_style="single", progress=False
    )
    n1 = pd.read_parquet(tmp_path / "AIME25_n1.parquet")
    assert [msg["role"] for msg in n1["prompt"][0]] == ["user"] and "\\boxed{}" in n1["prompt"][0][0]["content"]
    n2 = pd.read_parquet(tmp_path / "AIME25_n2.parquet")
    assert n2["prompt"][0][0]["role"] == "system" and m["n1_style"] == "single"


def test_any_benchmark_file_with_configurable_columns(tmp_path, shared):
    spec = {
        "path": str(shared / "data/benchmarks/justrl_verl_parquet/BRUMO25.test.parquet"),
        "question": "problem",
        "answer": "answer",
    }
    m = build_eval_sets(benchmarks={"BRUMO25": spec}, output_dir=tmp_path, n=[3], seed=1, progress=False)
    df = pd.read_parquet(tmp_path / "BRUMO25_n3.parquet")
    assert m["sets"]["BRUMO25/n3"]["scored_problems"] == 30 and len(df) == 10


@pytest.mark.parametrize(
    "value,expected", [(27.0, ("27",)), ("27.00", ("27",)), (["$x=1$", "2"], ("x=1", "2")), ("\\boxed{5}", ("5",))]
)
def test_normalize_answer(value, expected):
    assert normalize_answer(value, "here") == expected


@pytest.mark.parametrize("value", [None, float("nan"), "  ", []])
def test_missing_answers_name_the_row(value):
    with pytest.raises(DataError, match="row 9"):
        normalize_answer(value, "bench x row 9")


def test_bad_benchmark_config_writes_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(DataError, match="missing column"):
        build_eval_sets(
            benchmarks={"AIME25": PAPER["AIME25"], "BAD": {**PAPER["AIME25"], "answer": "nope"}},
            output_dir=out,
            n=[1],
            seed=0,
            progress=False,
        )
    assert not out.exists() or not any(out.iterdir())
