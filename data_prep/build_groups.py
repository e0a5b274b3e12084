"""DeepMath-103K to difficulty-stratified N-problem groups (verl parquet). See --help."""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.io import DataError
from recipe_bcr.data.pipeline import build_groups

log = logging.getLogger("build_groups")


@hydra.main(config_path="../hydra_configs", config_name="build_groups", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        manifest = build_groups(
            source=cfg.source,
            output_dir=cfg.output_dir,
            n=list(cfg.n),
            groups=cfg.groups,
            val_groups=cfg.val_groups,
            seed=cfg.seed,
            difficulty_method=cfg.difficulty.method,
            tokenizer=cfg.difficulty.tokenizer,
            rollouts_file=cfg.difficulty.rollouts_file,
            decontaminate_against=OmegaConf.to_container(cfg.decontaminate_against) if cfg.decontaminate else None,
            split=cfg.split,
            progress=cfg.progress,
            config=OmegaConf.to_container(cfg, resolve=True),
            prompt_tokenizer=cfg.prompt_check.tokenizer,
            max_prompt_tokens=cfg.prompt_check.max_tokens,
        )
    except (DataError, OSError, ValueError) as e:  # bad data, a missing model/tokenizer, a bad option
        log.error("%s", e)
        sys.exit(2)
    c = manifest["cleaning"]
    log.info("read %d rows, kept %d, dropped %d %s", manifest["input_rows"], c["kept"], c["dropped"], c["dropped_by_reason"])
    for size, info in manifest["per_n"].items():
        q = info["quality"] or {}
        log.info(
            "n=%s: %d train / %d val groups, %d not selected; group-mean std %.3f vs random %.3f (ratio %.2f), "
            "position-difficulty corr %.3f",
            size, info["train_groups"], info["val_groups"], info["not_selected"],
            q.get("group_mean_std", float("nan")), q.get("random_group_mean_std", float("nan")),
            q.get("spread_ratio", float("nan")), q.get("position_difficulty_corr", float("nan")),
        )
    log.info("wrote %s", cfg.output_dir)


if __name__ == "__main__":
    main()
