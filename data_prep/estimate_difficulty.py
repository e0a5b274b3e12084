"""Per-problem difficulty from k base-model rollouts (the paper's proxy). See --help."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
import pyarrow as pa
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.clean import clean
from recipe_bcr.data.cli import ENGINE_SPEC, SAMPLING_SPEC, check_config, run_cli
from recipe_bcr.data.io import DataError, Staging
from recipe_bcr.data.pipeline import problem_id
from recipe_bcr.data.prompt import build_messages
from recipe_bcr.data.sources import load_problems
from recipe_bcr.engines import Sampling, make_engine
from recipe_bcr.engines.context import with_context
from recipe_bcr.eval.probe import probe_lengths

log = logging.getLogger("estimate_difficulty")
OUT_FILE = "rollout_lengths.parquet"
SPEC = {
    "source": "str",
    "split": "str",
    "out": "str",
    "limit": "int?",
    "chunk_size": "int",
    "progress": "bool",
    **SAMPLING_SPEC,
    **ENGINE_SPEC,
}
SCHEMA = pa.schema(
    [
        ("problem_id", pa.string()),
        ("question", pa.string()),
        ("lengths", pa.list_(pa.int64())),
        ("mean_length", pa.float64()),
        ("truncated", pa.int64()),
    ]
)


@hydra.main(config_path="../hydra_configs", config_name="estimate_difficulty", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        check_config(OmegaConf.to_container(cfg, resolve=True), SPEC, "estimate_difficulty")
        df = load_problems(cfg.source, cfg.split, ["question", "final_answer"])
    except DataError as e:
        log.error("%s", e)
        sys.exit(2)
    kept, dropped = clean(df)
    if dropped:
        log.info(
            "skipping %d rows that build_groups would drop (%s)",
            len(dropped),
            sorted({d.reason.split(":")[0] for d in dropped}),
        )
    questions = [str(q).strip() for q in kept["question"]]
    if cfg.limit:
        questions = questions[: int(cfg.limit)]
    options = {
        "model": cfg.model.path,
        "tokenizer": cfg.model.tokenizer,
        "random_init": cfg.model.get("random_init", False),
    }
    options.update(OmegaConf.to_container(cfg.engine_options, resolve=True))
    sampling = Sampling(**OmegaConf.to_container(cfg.sampling, resolve=True))
    try:
        options = with_context(cfg.engine, options, [build_messages([q], style="single") for q in questions], sampling)
        engine = make_engine(cfg.engine, options)
    except (
        OSError,
        ValueError,
        ImportError,
        RuntimeError,
    ) as e:  # a missing model/tokenizer, an unknown engine, no vLLM, no fit
        log.error("cannot start engine %r for model %r: %s", cfg.engine, cfg.model.path, e)
        sys.exit(2)
    results = probe_lengths(engine, questions, sampling, chunk=cfg.chunk_size, progress=cfg.progress)
    rows = [
        {
            "problem_id": problem_id(q),
            "question": q,
            "lengths": r.lengths,
            "mean_length": sum(r.lengths) / len(r.lengths),
            "truncated": r.truncated,
        }
        for q, r in zip(questions, results)
    ]
    target = Path(cfg.out) / OUT_FILE
    with Staging() as stage:
        stage.parquet(rows, SCHEMA, target)
    truncated = sum(r.truncated for r in results)
    log.info("wrote %s: %d problems x %d rollouts (%d hit max_tokens)", target, len(rows), sampling.k, truncated)


if __name__ == "__main__":
    run_cli(main, "estimate_difficulty")
