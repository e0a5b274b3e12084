"""DeepMath-103K to difficulty-stratified N-problem groups (verl parquet). See --help."""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.cli import check_config, run_cli
from recipe_bcr.data.io import DataError
from recipe_bcr.data.pipeline import build_groups

log = logging.getLogger("build_groups")
# every key's type (hydra_configs/build_groups.yaml); `n=3` is read as n=[3]
SPEC = {
    "source": "str",
    "split": "str",
    "out": "str",
    "n": "ints",
    "groups": "int",
    "val_groups": "int",
    "seed": "int",
    "decontaminate": "bool",
    "difficulty.method": "column|r1_length|rollouts",
    "difficulty.tokenizer": "str?",
    "difficulty.rollouts_file": "str?",
    "prompt_check.tokenizer": "str?",
    "prompt_check.max_tokens": "int",
    "progress": "bool",
}


@hydra.main(config_path="../hydra_configs", config_name="build_groups", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        c = check_config(OmegaConf.to_container(cfg, resolve=True), SPEC, "build_groups")
        manifest = build_groups(
            source=c["source"],
            output_dir=c["out"],
            n=c["n"],
            groups=c["groups"],
            val_groups=c["val_groups"],
            seed=c["seed"],
            difficulty_method=c["difficulty"]["method"],
            tokenizer=c["difficulty"]["tokenizer"],
            rollouts_file=c["difficulty"]["rollouts_file"],
            decontaminate_against=c["decontaminate_against"] if c["decontaminate"] else None,
            split=c["split"],
            progress=c["progress"],
            config=c,
            prompt_tokenizer=c["prompt_check"]["tokenizer"],
            max_prompt_tokens=c["prompt_check"]["max_tokens"],
        )
    except (DataError, OSError, ValueError) as e:  # bad data, a missing model/tokenizer, a bad option
        log.error("%s", e)
        sys.exit(2)
    c = manifest["cleaning"]
    log.info(
        "read %d rows, kept %d, dropped %d %s", manifest["input_rows"], c["kept"], c["dropped"], c["dropped_by_reason"]
    )
    for size, info in manifest["per_n"].items():
        q = info["quality"] or {}
        log.info(
            "n=%s: %d train / %d val groups, %d not selected; group-mean std %.3f vs random %.3f (ratio %.2f), "
            "position-difficulty corr %.3f",
            size,
            info["train_groups"],
            info["val_groups"],
            info["not_selected"],
            q.get("group_mean_std", float("nan")),
            q.get("random_group_mean_std", float("nan")),
            q.get("spread_ratio", float("nan")),
            q.get("position_difficulty_corr", float("nan")),
        )
    log.info("wrote %s", cfg.out)


if __name__ == "__main__":
    run_cli(main, "build_groups")
