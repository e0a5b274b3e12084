"""The committed warm start (recipe_bcr/resources/toy_model): made with today's settings, used
without a build, and reproduced by its rebuild command (`python -m recipe_bcr toy --rebuild`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from recipe_bcr.data.prompt import build_messages
from recipe_bcr.toy import model as toy_model
from recipe_bcr.toy.model import SHIPPED, built_with, cache_key, ensure_model, load_specs
from recipe_bcr.toy.profile import profile
from recipe_bcr.toy.task import make_problem


def test_committed_model_is_built_with_the_current_settings():
    """Change hydra_configs/toy.yaml or the task and this fails until the model is rebuilt and
    committed (`python -m recipe_bcr toy --rebuild --ship`); otherwise every fresh machine would
    silently spend minutes building it."""
    task, mspec, _ = load_specs()
    assert built_with(SHIPPED) == cache_key(task, mspec)


def test_a_fresh_cache_gets_the_committed_model_without_a_build(tmp_path, monkeypatch):
    def no_build(*_, **__):
        raise AssertionError("built although the committed model has these settings")

    monkeypatch.setattr(toy_model, "build_model", no_build)
    task, mspec, _ = load_specs()
    path = ensure_model(tmp_path, task, mspec, progress=False)
    for f in SHIPPED.iterdir():
        assert (path / f.name).read_bytes() == f.read_bytes()
    other = load_specs(["model.sft_steps=3"])
    with pytest.raises(AssertionError, match="built although"):
        ensure_model(tmp_path / "other", other[0], other[1], progress=False)  # other settings: a build


def _behaviour(path: Path, task) -> dict[str, float]:
    """Greedy answers of one model to 48 single problems and 16 groups of 3."""
    from recipe_bcr.engines.base import Sampling, generate_all
    from recipe_bcr.engines.hf_engine import TransformersEngine
    from recipe_bcr.grading.verify import default_verifier
    from recipe_bcr.grading.reward import score_completion

    rng = random.Random(11)
    problems = [make_problem(rng, task, k) for k in range(96)]
    groups = [[p] for p in problems[:48]] + [problems[48 + 3 * i: 51 + 3 * i] for i in range(16)]
    engine = TransformersEngine(str(path), dtype="float32", batch_size=16)
    gens = generate_all(engine, [build_messages([p.question for p in g]) for g in groups],
                        Sampling(temperature=0.0, top_p=1.0, max_tokens=200))
    verifier = default_verifier()
    out = {}
    for n in (1, 3):
        recs = []
        for g, gen in zip(groups, gens):
            if len(g) == n:
                s = score_completion(gen[0].text, [p.answers[0] for p in g], verifier)
                recs.append({"n": n, "completion": gen[0].text, "problems": [{"correct": c} for c in s.correct],
                             "tokens": gen[0].num_tokens / n})
        prof = profile(recs, n)
        out[f"acc_n{n}"] = sum(p["correct"] for r in recs for p in r["problems"]) / (n * len(recs))
        out[f"steps_n{n}"] = prof["share_with_steps"]
        out[f"tokens_n{n}"] = sum(r["tokens"] for r in recs) / len(recs)
    return out


@pytest.mark.slow
def test_rebuild_behaves_like_the_committed_model(tmp_path):
    """The rebuild command's model (minutes on 2 cores) against the committed one: the same
    tokenizer, and greedy accuracy, share of written steps and tokens per problem at N=1 and N=3
    within sampling-free tolerances (float sums differ across CPUs, so weights need not match bit
    for bit)."""
    task, mspec, _ = load_specs()
    rebuilt = toy_model.build_model(tmp_path / "rebuilt", task, mspec, progress=False)
    assert (rebuilt / "tokenizer.json").read_bytes() == (SHIPPED / "tokenizer.json").read_bytes()
    assert built_with(rebuilt) == built_with(SHIPPED)
    new, old = _behaviour(rebuilt, task), _behaviour(SHIPPED, task)
    for n in (1, 3):
        assert new[f"acc_n{n}"] == pytest.approx(old[f"acc_n{n}"], abs=0.15), (new, old)
        assert new[f"steps_n{n}"] == pytest.approx(old[f"steps_n{n}"], abs=0.2), (new, old)
        assert new[f"tokens_n{n}"] == pytest.approx(old[f"tokens_n{n}"], rel=0.2), (new, old)
