"""Evaluation benchmarks as N-grouped prompts (verl parquet). See --help."""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.cli import check_config, run_cli
from recipe_bcr.data.eval_sets import build_eval_sets
from recipe_bcr.data.io import DataError

log = logging.getLogger("build_eval_sets")
SPEC = {"out": "str", "n": "ints", "seed": "int", "n1_style": "group|single", "progress": "bool"}  # `n=3` is [3]


@hydra.main(config_path="../hydra_configs", config_name="build_eval_sets", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        c = check_config(OmegaConf.to_container(cfg, resolve=True), SPEC, "build_eval_sets")
        manifest = build_eval_sets(
            benchmarks=c["benchmarks"],
            output_dir=c["out"],
            n=c["n"],
            seed=c["seed"],
            n1_style=c["n1_style"],
            progress=c["progress"],
            config=c,
        )
    except (DataError, OSError, ValueError) as e:  # bad data, a missing model/tokenizer, a bad option
        log.error("%s", e)
        sys.exit(2)
    for key, info in manifest["sets"].items():
        log.info(
            "%-18s %4d groups, %4d problems scored, %d filler slots",
            key,
            info["groups"],
            info["scored_problems"],
            info["filler_slots"],
        )
    log.info("wrote %s", cfg.out)


if __name__ == "__main__":
    run_cli(main, "build_eval_sets")
