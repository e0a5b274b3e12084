"""Evaluation benchmarks as N-grouped prompts (verl parquet). See --help."""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.eval_sets import build_eval_sets
from recipe_bcr.data.io import DataError

log = logging.getLogger("build_eval_sets")


@hydra.main(config_path="../hydra_configs", config_name="build_eval_sets", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        manifest = build_eval_sets(
            benchmarks=OmegaConf.to_container(cfg.benchmarks, resolve=True),
            output_dir=cfg.output_dir,
            n=list(cfg.n),
            seed=cfg.seed,
            n1_style=cfg.n1_style,
            progress=cfg.progress,
            config=OmegaConf.to_container(cfg, resolve=True),
        )
    except (DataError, OSError, ValueError) as e:  # bad data, a missing model/tokenizer, a bad option
        log.error("%s", e)
        sys.exit(2)
    for key, info in manifest["sets"].items():
        log.info("%-18s %4d groups, %4d problems scored, %d filler slots", key, info["groups"], info["scored_problems"], info["filler_slots"])
    log.info("wrote %s", cfg.output_dir)


if __name__ == "__main__":
    main()
