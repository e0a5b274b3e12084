"""The README's first quick-start command: `python -m recipe_bcr demo out=DIR` runs the whole
pipeline (data, GRPO through the stock verl entry point, merge, evaluation) and writes its contract:
the base, the paper command's committed BCR model and its own live steps side by side, sampled as the paper
command evaluates, with a closing sentence that says its own sampling and problem count."""

import csv
import json
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from recipe_bcr.miniature.demo import closing_sentence, sampling_words


@pytest.mark.verl
@pytest.mark.slow
def test_demo_trains_merges_and_evaluates(tmp_path):
    out = tmp_path / "d"
    proc = subprocess.run(
        [sys.executable, "-m", "recipe_bcr", "demo", f"out={out}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (out / "data" / "train_n3.parquet").exists() and (out / "data" / "manifest.json").exists()
    from recipe_bcr.miniature.demo import _cfg
    from recipe_bcr.miniature.toy.model import provenance

    cfg, made = _cfg(), provenance()
    run, ev, steps = made["run"], made["paper_config"]["eval"], int(cfg["train_steps"])
    rows = [json.loads(line) for line in (out / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, steps + 1))
    for r in rows:
        assert {"critic/score/mean", "critic/advantages/max", "actor/grad_norm", "bcr/acc", "bcr/fmt"} <= set(r)
    assert (out / "train" / "checkpoints" / f"global_step_{steps}" / "actor").is_dir()
    # the live steps train as the committed model's paper run did: its N, budget and reward
    assert f"bcr.n={run['n']} bcr.budget={run['budget']} bcr_reward@bcr.reward={run['reward']}" in proc.stdout
    rollout = "hf" if "bcr_runtime=hf" in cfg["train_overrides"] else "vllm"
    assert f"rollout={rollout} device=cpu" in (out / "train" / "train.log").read_text()
    assert (out / "train" / "hf_model" / "config.json").exists()
    assert list((out / "train" / "hf_model").glob("*.safetensors"))
    for label in ("base", "paper_bcr", "demo_bcr"):  # each evaluated as the paper command evaluates
        saved = OmegaConf.load(out / f"eval_{label}" / "config.yaml")
        assert saved.engine == cfg["eval_engine"]
        assert (saved.sampling.temperature, saved.sampling.top_p, saved.sampling.seed) == (
            ev["temperature"],
            ev["top_p"],
            ev["seed"],
        )
        assert saved.sampling.k == cfg["eval_samples"]
    with (out / "compare" / "summary.csv").open() as f:
        summary = list(csv.DictReader(f))
    # the base, the paper's BCR model and the demo's side by side at N = 1..3, as a table and plots
    labels = ("base", "demo_bcr", "paper_bcr")
    assert sorted({(r["label"], int(r["n"])) for r in summary if r["benchmark"] == "Toy"}) == [
        (label, n) for label in labels for n in (1, 2, 3)
    ]
    table = (out / "compare" / "table.md").read_text()
    assert all(f"| {label} | {n} |" in table for label in labels for n in (1, 3))
    for plot in ("accuracy_vs_n.png", "tokens_per_problem_vs_n.png"):
        assert (out / "compare" / "plots" / plot).stat().st_size > 10_000
    assert not (tmp_path / "outputs").exists()
    assert "report" in proc.stdout and f"step {steps:>3}:" in proc.stdout and "paper_bcr per problem" in proc.stdout
    last = proc.stdout.strip().splitlines()[-2]  # the closing sentence, before the "done in" line
    words = sampling_words(int(cfg["eval_problems"]), int(cfg["eval_samples"]), ev)
    assert last.startswith(f"At N=1 on {words}: the BCR model the paper command trained") and last.count("%") == 4


def test_closing_sentence_reads_the_table_at_n1_and_says_its_sampling(tmp_path):
    rows = [("base", 1, 0.95, 80.0), ("paper_bcr", 1, 1.0, 60.0), ("demo_bcr", 1, 0.9, 78.0), ("base", 2, 0.1, 10.0)]
    (tmp_path / "summary.csv").write_text(
        "label,benchmark,n,acc,tokens_per_problem\n" + "".join(f"{a},Toy,{n},{acc},{t}\n" for a, n, acc, t in rows)
    )
    words = sampling_words(30, 2, {"temperature": 1.0, "top_p": 0.9})
    assert words == "30 toy problems x 2 samples, temperature 1.0, top-p 0.9 (the paper command's evaluation sampling)"
    sentence = closing_sentence(
        tmp_path / "summary.csv",
        {"base": "b", "paper_bcr": "40 steps", "demo_bcr": "4 live steps"},
        words,
        "The report is elsewhere.",
    )
    assert sentence.startswith(f"At N=1 on {words}: ")
    assert "(40 steps) writes 60 tokens a problem at 100% accuracy, the warm-started base 80 at 95% (-25% tokens)" in (
        sentence
    )
    assert sentence.endswith("4 live steps 78 at 90%. The report is elsewhere.")
