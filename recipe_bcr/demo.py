"""`python -m recipe_bcr demo`: the recipe end to end on bundled data, offline, on CPU.

1. build_groups on the bundled DeepMath-schema sample (N=3) -> verl parquet + manifest;
2. build_eval_sets for N = 1..3 on two bundled benchmarks;
3. score sample N=3 completions (right, wrong, malformed, hacking attempts) with the reward;
4. evaluate through the real harness with the replay engine on completions written from
   the real MATH-500 solutions -> samples.jsonl, summary, table.md and plots.
Training itself needs GPUs: see the README's runbook.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from omegaconf import OmegaConf

from recipe_bcr.benchmarks import BUNDLED, resolve_path
from recipe_bcr.data.eval_sets import build_eval_sets
from recipe_bcr.data.pipeline import build_groups
from recipe_bcr.engines.base import Sampling
from recipe_bcr.engines.replay import ReplayEngine
from recipe_bcr.eval.__main__ import summarise_runs
from recipe_bcr.eval.runner import run_tasks
from recipe_bcr.eval.tasks import build_tasks
from recipe_bcr.verify import default_verifier
from reward_fns.bcr import compute_score


def _paper_benchmarks() -> dict:
    from importlib import resources

    path = Path(str(resources.files("hydra_configs") / "benchmarks" / "paper.yaml"))
    return OmegaConf.to_container(OmegaConf.load(path))


def _sample_completions(golds: list[str]) -> list[tuple[str, str]]:
    a, b, c = golds
    return [
        ("all right, in format", f"### Problem 1\n...\nAnswer1: \\boxed{{{a}}}\n### Problem 2\n...\nAnswer2: \\boxed{{{b}}}\n### Problem 3\n...\nAnswer3: \\boxed{{{c}}}"),
        ("one wrong", f"### Problem 1\nAnswer1: \\boxed{{{a}}}\n### Problem 2\nAnswer2: \\boxed{{-12345}}\n### Problem 3\nAnswer3: \\boxed{{{c}}}"),
        ("right but no sections", f"Answer1: \\boxed{{{a}}} Answer2: \\boxed{{{b}}} Answer3: \\boxed{{{c}}}"),
        ("truncated after problem 1", f"### Problem 1\nAnswer1: \\boxed{{{a}}}\n### Problem 2\nLet me think about this carefully, wait"),
        ("template copied", "### Problem 1\nAnswer1: \\boxed{...}\n### Problem 2\nAnswer2: \\boxed{...}\n### Problem 3\nAnswer3: \\boxed{...}"),
        ("box spam", "".join(f"\\boxed{{{k}}}" for k in range(500))),
    ]


def _write_replay_source(tasks: list, out: Path, rng: random.Random, tokenizer) -> None:
    """Completions written from the real MATH-500 solutions (1 in 4 answers wrong), with token
    ids from the demo tokenizer, as an engine would have returned them."""
    sols = {}
    path = resolve_path(f"{BUNDLED}benchmarks/math500.jsonl")
    for line in path.read_text().splitlines():
        row = json.loads(line)
        sols[row["problem"].strip()] = row["solution"]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "samples.jsonl").open("w") as f:
        for t in tasks:
            parts = []
            for i, p in enumerate(t.problems, start=1):
                answer = p.answers[0] if rng.random() < 0.75 else "-1"
                parts.append(f"### Problem {i}\n{sols[p.question]}\nAnswer{i}: \\boxed{{{answer}}}\n")
            text = "\n".join(parts)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            f.write(json.dumps({"prompt": t.messages, "sample": 0, "completion": text, "token_ids": ids,
                                "generated_tokens": len(ids), "finish_reason": "stop"}) + "\n")


def run_demo(out: str) -> int:
    root = Path(out)
    paper = _paper_benchmarks()
    print(f"[1/4] build_groups on the bundled sample -> {root / 'data'}")
    m = build_groups(source="sample", output_dir=root / "data", n=[3], groups=300, val_groups=20, seed=42, progress=False)
    q = m["per_n"]["3"]["quality"]
    print(f"      {m['input_rows']} rows read, {m['cleaning']['dropped']} dropped {m['cleaning']['dropped_by_reason']}; "
          f"{m['per_n']['3']['train_groups']} train / {m['per_n']['3']['val_groups']} val groups; "
          f"group-mean spread vs random {q['spread_ratio']:.2f}, position-difficulty corr {q['position_difficulty_corr']:+.3f}")
    print(f"[2/4] build_eval_sets N=1..3 (AIME25, AMC23) -> {root / 'eval_sets'}")
    e = build_eval_sets(benchmarks={k: paper[k] for k in ("AIME25", "AMC23")}, output_dir=root / "eval_sets", n=[1, 2, 3], seed=0, progress=False)
    print(f"      {len(e['sets'])} files; every problem scored once at every N")
    print("[3/4] reward on sample N=3 completions (score = 2 x acc + 1 x fmt)")
    golds = ["12", "\\frac{3}{4}", "1728"]
    for name, text in _sample_completions(golds):
        r = compute_score("demo", text, golds, {"n": 3})
        print(f"      {name:28s} score {r['score']:.2f}  acc {r['acc']:.2f}  fmt {r['fmt']:.0f}  answered {r['answered']:.2f}")
    print(f"[4/4] evaluation harness, replay engine, MATH-500 (first 30 problems) at N=1..3 -> {root / 'eval_run'}")
    tasks = build_tasks({"MATH-500": paper["MATH-500"]}, [1, 2, 3], seed=0, limit=30)
    tokenizer = _demo_tokenizer()
    _write_replay_source(tasks, root / "replay_source", random.Random(0), tokenizer)
    run_dir = root / "eval_run"
    run_tasks(tasks, ReplayEngine(str(root / "replay_source")), Sampling(k=1), _fresh(run_dir), default_verifier(),
              tokenizer, thinking=False, markers=["wait", "alternatively"], progress=False)
    summarise_runs([("demo-replay", run_dir)], run_dir)
    print("      (tokens from an offline byte-level demo tokenizer: one token per byte)")
    print((run_dir / "table.md").read_text())
    print(f"plots: {sorted(p.name for p in (run_dir / 'plots').iterdir())}")
    return 0


def _fresh(path: Path) -> Path:
    if (path / "samples.jsonl").exists():
        (path / "samples.jsonl").unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _demo_tokenizer():
    """A byte-level tokenizer built offline (no merges: one token per byte), so the demo needs no
    download; real runs use the model's own tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok)
