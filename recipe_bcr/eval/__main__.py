"""`python -m recipe_bcr.eval`: evaluate a model at N = 1..5, or compare finished runs."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.io import DataError
from recipe_bcr.engines import Sampling, make_engine
from recipe_bcr.engines.context import with_context
from recipe_bcr.eval.plots import write_plots
from recipe_bcr.eval.runner import run_tasks
from recipe_bcr.eval.summary import markdown_table, summarize, write_csv, write_json
from recipe_bcr.data.eval_tasks import build_tasks
from recipe_bcr.grading.verify import configure_default

log = logging.getLogger("recipe_bcr.eval")
CONFIG_NAME = "config.yaml"
# settings that define which samples a run holds; a resumed run must not change them
RUN_IDENTITY = ("benchmarks", "only", "n", "n1_style", "limit", "seed", "sampling", "model")


def _check_resume(run_dir: Path, cfg: DictConfig) -> None:
    saved_path = run_dir / CONFIG_NAME
    if not saved_path.exists():
        return
    saved = OmegaConf.to_container(OmegaConf.load(saved_path), resolve=True)
    current = OmegaConf.to_container(cfg, resolve=True)
    for key in RUN_IDENTITY:
        if saved.get(key) != current.get(key):
            raise DataError(
                f"{run_dir} holds a run with a different {key!r}; use another run_dir (or delete it) "
                "instead of mixing samples of two settings"
            )


def _tokenizer(engine: Any, cfg: DictConfig) -> Any:
    tok = getattr(engine, "tokenizer", None)
    if tok is not None:
        return tok
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(cfg.model.tokenizer or cfg.model.path)


def summarise_runs(runs: list[tuple[str, Path]], out: Path) -> list[dict[str, Any]]:
    rows = summarize(runs)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "summary.csv")
    write_json(rows, out / "summary.json")
    (out / "table.md").write_text(markdown_table(rows))
    write_plots(rows, out / "plots")
    return rows


def check_model_path(cfg: DictConfig) -> None:
    """A model or tokenizer named by a local path exists (a hub id, "namespace/name", is not
    checked): else transformers fails later with "Repo id must be in the form ...", no hint given."""
    for key in ("model.path", "model.tokenizer"):
        value = OmegaConf.select(cfg, key, default=None)
        if value and (str(value).startswith(("/", ".", "~")) or str(value).count("/") > 1) and not Path(value).expanduser().exists():
            raise DataError(f"{key}={value}: no such folder -> fix: `python -m recipe_bcr toy` if it is the toy model "
                            f"(bcr_model@model=tiny_qwen3), else set {key} to a model folder or a hub id")


def evaluate(cfg: DictConfig) -> Path:
    if cfg.engine != "replay":
        check_model_path(cfg)
    run_dir = Path(cfg.run_dir)
    _check_resume(run_dir, cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, run_dir / CONFIG_NAME, resolve=True)
    benchmarks = OmegaConf.to_container(cfg.benchmarks, resolve=True)
    if cfg.only:
        unknown = sorted(set(cfg.only) - set(benchmarks))
        if unknown:
            raise DataError(f"only={list(cfg.only)}: unknown benchmark(s) {unknown}; configured: {sorted(benchmarks)}")
        benchmarks = {name: benchmarks[name] for name in cfg.only}
    tasks = build_tasks(benchmarks, list(cfg.n), cfg.seed, cfg.n1_style, cfg.limit)
    sampling = Sampling(**OmegaConf.to_container(cfg.sampling, resolve=True))
    options = {k: v for k, v in OmegaConf.to_container(cfg.engine_options, resolve=True).items() if v is not None}
    if cfg.engine != "replay":
        options.update(model=cfg.model.path, tokenizer=cfg.model.tokenizer, random_init=cfg.model.get("random_init", False))
        options = with_context(cfg.engine, options, [t.messages for t in tasks], sampling)
    engine = make_engine(cfg.engine, options)
    verifier = configure_default(cfg.verify.timeout_s, cfg.verify.workers)
    try:
        new = run_tasks(
            tasks, engine, sampling, run_dir, verifier, _tokenizer(engine, cfg),
            thinking=bool(cfg.model.thinking), markers=list(cfg.markers),
            keep_token_ids=cfg.keep_token_ids, progress=cfg.progress,
        )
    finally:
        if hasattr(engine, "close"):  # Ray replicas
            engine.close()
    log.info("%d new samples (%d tasks x %d samples in the run)", new, len(tasks), sampling.k)
    summarise_runs([(cfg.label, run_dir)], run_dir)
    return run_dir


def compare(cfg: DictConfig) -> Path:
    runs = []
    for d in cfg.compare.runs:
        path = Path(d)
        if not (path / "samples.jsonl").exists():
            raise DataError(f"{path}: not a finished run (no samples.jsonl)")
        saved = OmegaConf.load(path / CONFIG_NAME) if (path / CONFIG_NAME).exists() else None
        runs.append((str(saved.label) if saved is not None else path.name, path))
    if not runs:
        raise DataError("mode=compare needs compare.runs=[RUN_DIR,...]")
    out = Path(cfg.compare.out_dir)
    summarise_runs(runs, out)
    return out


@hydra.main(config_path="pkg://hydra_configs", config_name="eval", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        out = compare(cfg) if cfg.mode == "compare" else evaluate(cfg)
    except (DataError, OSError, KeyError, ValueError, ImportError, RuntimeError) as e:  # bad input, missing model, bad option, engine failure
        log.error("%s", e)
        sys.exit(2)
    log.info("wrote %s (summary.csv, summary.json, table.md, plots/)", out)
    print((out / "table.md").read_text())


if __name__ == "__main__":
    main()
