"""Choose the BCR token budget from a base model's probe lengths (paper, Alg. 3). See --help."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
import numpy as np
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.budget import calibrate
from recipe_bcr.data.clean import clean
from recipe_bcr.data.cli import ENGINE_SPEC, SAMPLING_SPEC, check_config, run_cli
from recipe_bcr.data.io import DataError, Staging, read_table
from recipe_bcr.data.prompt import build_messages
from recipe_bcr.data.sources import load_problems
from recipe_bcr.engines import Sampling, make_engine
from recipe_bcr.engines.context import with_context
from recipe_bcr.eval.probe import probe_lengths

log = logging.getLogger("calibrate_budget")
SPEC = {
    "n": "int",
    "compression": "float",
    "round_to": "int",
    "out": "str?",
    "lengths_file": "str?",
    "probe.source": "str",
    "probe.size": "int",
    "progress": "bool",
    **SAMPLING_SPEC,
    **ENGINE_SPEC,
}


def recorded_lengths(path: str) -> list[float]:
    table = read_table(path)
    if "mean_length" in table.columns:
        return [float(x) for x in table["mean_length"].dropna()]
    if "lengths" in table.columns:
        return [float(x) for xs in table["lengths"] for x in np.asarray(xs).ravel()]
    raise DataError(f"{path}: needs a mean_length or lengths column")


@hydra.main(config_path="../hydra_configs", config_name="calibrate_budget", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        check_config(OmegaConf.to_container(cfg, resolve=True), SPEC, "calibrate_budget")
        if cfg.lengths_file:
            lengths = recorded_lengths(cfg.lengths_file)
            truncated = 0
        else:
            kept, _ = clean(load_problems(cfg.probe.source, columns=["question", "final_answer"]))
            questions = [str(q).strip() for q in kept["question"][: int(cfg.probe.size)]]
            options = {
                "model": cfg.model.path,
                "tokenizer": cfg.model.tokenizer,
                "random_init": cfg.model.get("random_init", False),
            }
            options.update(OmegaConf.to_container(cfg.engine_options, resolve=True))
            sampling = Sampling(**OmegaConf.to_container(cfg.sampling))
            options = with_context(
                cfg.engine, options, [build_messages([q], style="single") for q in questions], sampling
            )
            engine = make_engine(cfg.engine, options)
            results = probe_lengths(engine, questions, sampling, progress=cfg.progress)
            lengths = [float(x) for r in results for x in r.lengths]
            truncated = sum(r.truncated for r in results)
        l_avg, raw, cap = calibrate(lengths, cfg.n, cfg.compression, cfg.round_to)
    except (
        DataError,
        OSError,
        ValueError,
        RuntimeError,
    ) as e:  # bad data, a missing model/tokenizer, a bad option, engine failure
        log.error("%s", e)
        sys.exit(2)
    log.info(
        "probe: %d lengths, L_avg = %.1f tokens (%d hit max_tokens, so L_avg is a lower bound)",
        len(lengths),
        l_avg,
        truncated,
    )
    log.info(
        "N x L_avg x lambda = %d x %.1f x %.2f = %.0f -> practical cap %d", cfg.n, l_avg, cfg.compression, raw, cap
    )
    if cfg.out:
        with Staging() as stage:
            stage.json(
                {
                    "n": cfg.n,
                    "budget": cap,
                    "l_avg": l_avg,
                    "raw": raw,
                    "compression": cfg.compression,
                    "round_to": cfg.round_to,
                    "lengths": len(lengths),
                    "truncated": truncated,
                    "override": f"bcr.n={cfg.n} bcr.budget={cap}",
                },
                Path(cfg.out) / "budget.json",
            )
        log.info("wrote %s", Path(cfg.out) / "budget.json")
    print(f"bcr.n={cfg.n} bcr.budget={cap}")


if __name__ == "__main__":
    run_cli(main, "calibrate_budget")
