"""Samples per prompt per benchmark (recipe_bcr.eval: samples_per_benchmark), so that every benchmark's accuracy
has a standard error below the differences the paper reports; every sampling setting cited to the paper's
section or marked as ours. Before: `sampling.k: 1` for all, a standard error of ~8 points on AIME25's 30 problems."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

import recipe_bcr.eval.__main__ as eval_cli
from recipe_bcr.data.eval_benchmarks import BenchmarkSpec, load_benchmark

ROOT = Path(__file__).resolve().parents[1]


def _eval_cfg(*overrides):
    with initialize_config_module("hydra_configs", version_base="1.3"):
        return eval_cli.checked(compose("eval", overrides=list(overrides)))


def test_each_benchmark_gets_samples_enough_for_a_3_point_standard_error():
    cfg = _eval_cfg()
    benchmarks = eval_cli.selected_benchmarks(cfg)
    ks = eval_cli.samples_per_prompt(cfg, benchmarks)
    assert ks["AIME25"] >= 16 and ks["AMC23"] >= 8
    for name, spec in benchmarks.items():
        problems = len(load_benchmark(BenchmarkSpec.from_config(name, spec)))
        worst = 100 * math.sqrt(0.25 / (problems * ks[name]))  # at 50% accuracy
        assert worst <= 3.0, f"{name}: {problems} problems x k={ks[name]} gives {worst:.1f} points"


def test_sampling_k_sets_every_benchmark_and_replay_takes_the_saved_runs(tmp_path):
    cfg = _eval_cfg("sampling.k=2")
    assert set(eval_cli.samples_per_prompt(cfg, eval_cli.selected_benchmarks(cfg)).values()) == {2}
    saved = tmp_path / "samples.jsonl"
    saved.write_text(
        "".join(
            json.dumps({"benchmark": b, "sample": j}) + "\n" for b, k in (("AIME25", 4), ("AMC23", 1)) for j in range(k)
        )
    )
    cfg = _eval_cfg("engine=replay", f"engine_options.samples={tmp_path}", "only=[AIME25,AMC23,MATH-500]")
    assert eval_cli.samples_per_prompt(cfg, eval_cli.selected_benchmarks(cfg)) == {
        "AIME25": 4,
        "AMC23": 1,
        "MATH-500": 1,
    }


def test_every_sampling_setting_is_cited_or_marked_ours():
    text = (ROOT / "hydra_configs" / "eval.yaml").read_text()
    block = text[text.index("\nsampling:") :].split("\n\n")[0].split("\nsamples_per_benchmark")[0]
    settings = [line for line in block.splitlines()[1:] if re.match(r"^  \w+:", line)]
    assert len(settings) == 8
    for line in settings:
        assert re.search(r"# (paper, Sec\. 4\.1|ours)", line), line
    paper = (Path(os.environ.get("BCR_SHARED", ROOT.parent / "shared")) / "paper" / "bcr_paper.tex").read_text()
    assert re.findall(r"\\section\{([^}]*)\}", paper)[3] == "Experiments"  # Sec. 4
    setup = paper.split("\\section{Experiments}")[1].split("\\subsection{")[1]  # Sec. 4.1
    assert setup.startswith("Experimental Setup}")
    assert "temperature 0.6" in setup and "$p{=}0.9$" in setup and "32,768 tokens" in setup


@pytest.mark.slow
def test_a_run_draws_each_benchmarks_own_k(tmp_path, shared):
    env = {**os.environ, "BCR_SHARED": str(shared), "PYTHONUNBUFFERED": "1"}
    args = [
        "bcr_model@model=tiny_random_qwen3",
        "engine=transformers",
        "only=[AIME25,MATH-500]",
        "limit=2",
        "n=[1]",
        "sampling.max_tokens=2",
        "samples_per_benchmark.AIME25=3",
        f"out={tmp_path / 'run'}",
        "progress=false",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "recipe_bcr.eval", *args], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    drawn = {(r["benchmark"], r["group"], r["sample"]) for r in records}
    assert {(b, j) for b, _, j in drawn} == {("AIME25", 0), ("AIME25", 1), ("AIME25", 2), ("MATH-500", 0)}
    assert len(records) == 2 * 3 + 2 * 1
