"""`python -m recipe_bcr.eval`: evaluate a model at N = 1..5, or compare finished runs."""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from recipe_bcr.data.cli import ENGINE_SPEC, SAMPLING_SPEC, check_config, run_cli
from recipe_bcr.data.eval_tasks import build_tasks
from recipe_bcr.data.io import DataError
from recipe_bcr.engines import Sampling, make_engine
from recipe_bcr.engines.context import with_context
from recipe_bcr.eval.plots import write_plots
from recipe_bcr.eval.runner import SAMPLES, iter_records, run_tasks
from recipe_bcr.eval.summary import markdown_table, summarize, write_csv, write_json
from recipe_bcr.grading.verify import configure_default

log = logging.getLogger("recipe_bcr.eval")
CONFIG_NAME = "config.yaml"
SPEC = {
    "only": "strs?",
    "mode": "run|compare",
    "label": "str",
    "out": "str",
    "n": "ints",
    "n1_style": "group|single",
    "limit": "int?",
    "seed": "int",
    "keep_token_ids": "bool",
    "verify.timeout_s": "float",
    "verify.workers": "int",
    "markers": "strs",
    "compare.runs": "strs",
    "progress": "bool",
    **SAMPLING_SPEC,
    **ENGINE_SPEC,
}


def _default_out(mode: str, label: str) -> str:
    """eval.yaml's `out` when not given: runs/<label>, or runs/compare for mode=compare."""
    return "runs/compare" if mode == "compare" else f"runs/{label}"


if not OmegaConf.has_resolver("bcr_eval_out"):
    OmegaConf.register_new_resolver("bcr_eval_out", _default_out)
# settings that define which samples a run holds; a resumed run must not change them
RUN_IDENTITY = ("benchmarks", "only", "n", "n1_style", "limit", "seed", "sampling", "samples_per_benchmark", "model")


def _check_resume(run_dir: Path, cfg: DictConfig) -> None:
    saved_path = run_dir / CONFIG_NAME
    if not saved_path.exists():
        return
    saved = OmegaConf.to_container(OmegaConf.load(saved_path), resolve=True)
    current = OmegaConf.to_container(cfg, resolve=True)
    for key in RUN_IDENTITY:
        if saved.get(key) != current.get(key):
            raise DataError(
                f"{run_dir} holds a run with a different {key!r}; use another out=DIR (or delete it) "
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
        if (
            value
            and (str(value).startswith(("/", ".", "~")) or str(value).count("/") > 1)
            and not Path(value).expanduser().exists()
        ):
            raise DataError(
                f"{key}={value}: no such folder -> fix: `python -m recipe_bcr toy` if it is the toy model "
                f"(bcr_model@model=tiny_qwen3), else set {key} to a model folder or a hub id"
            )


def checked(cfg: DictConfig) -> DictConfig:
    """The config with every key of SPEC checked (a wrong type names its key; `n=3` is n=[3])."""
    return OmegaConf.create(check_config(OmegaConf.to_container(cfg, resolve=True), SPEC, "recipe_bcr.eval"))


def selected_benchmarks(cfg: DictConfig) -> dict[str, Any]:
    """The benchmarks `only` names (all when null); an unknown name is refused."""
    benchmarks = OmegaConf.to_container(cfg.benchmarks, resolve=True)
    if not cfg.only:
        return benchmarks
    unknown = sorted(set(cfg.only) - set(benchmarks))
    if unknown:
        raise DataError(
            f"only={list(cfg.only)}: unknown benchmark(s) {unknown}; configured: {sorted(benchmarks)} "
            f"(add one with +benchmarks.NAME={{path:FILE,question:COL,answer:COL}})"
        )
    return {name: benchmarks[name] for name in cfg.only}


def replayed_k(samples: str) -> dict[str, int]:
    """Samples per prompt of each benchmark in a saved run (its samples.jsonl, or the folder holding it)."""
    path = Path(samples)
    path = path / SAMPLES if path.is_dir() else path
    found: dict[str, int] = {}
    try:
        for rec in iter_records(path):
            if "benchmark" in rec and "sample" in rec:
                found[rec["benchmark"]] = max(found.get(rec["benchmark"], 0), int(rec["sample"]) + 1)
    except (OSError, ValueError, DataError):  # the replay engine names the file and line
        return {}
    return found


def samples_per_prompt(cfg: DictConfig, benchmarks: dict[str, Any]) -> dict[str, int]:
    """k of each benchmark: sampling.k for all when above 0; else samples_per_benchmark (1 where it names none),
    or on replay what the replayed run holds. One k for all would give AIME25's 30 problems a standard error of
    ~8 points at k=1, above the differences the paper reports (docs/evaluation.md)."""
    if int(cfg.sampling.k) > 0:
        return dict.fromkeys(benchmarks, int(cfg.sampling.k))
    if cfg.engine == "replay":
        saved = replayed_k(str(cfg.engine_options.samples))
        return {name: saved.get(name, 1) for name in benchmarks}
    own = cfg.get("samples_per_benchmark") or {}
    return {name: int(own.get(name, 1)) for name in benchmarks}


def evaluate(cfg: DictConfig) -> Path:
    cfg = checked(cfg)
    if cfg.engine != "replay":
        check_model_path(cfg)
    benchmarks = selected_benchmarks(cfg)  # before anything is written: a refused name leaves no run behind
    run_dir = Path(cfg.out)
    _check_resume(run_dir, cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, run_dir / CONFIG_NAME, resolve=True)
    tasks = build_tasks(benchmarks, list(cfg.n), cfg.seed, cfg.n1_style, cfg.limit)
    ks = samples_per_prompt(cfg, benchmarks)
    sampling = Sampling(**{**OmegaConf.to_container(cfg.sampling, resolve=True), "k": max(ks.values(), default=1)})
    options = {k: v for k, v in OmegaConf.to_container(cfg.engine_options, resolve=True).items() if v is not None}
    if cfg.engine != "replay":
        options.update(
            model=cfg.model.path, tokenizer=cfg.model.tokenizer, random_init=cfg.model.get("random_init", False)
        )
        options = with_context(cfg.engine, options, [t.messages for t in tasks], sampling)
    engine = make_engine(cfg.engine, options)
    verifier = configure_default(cfg.verify.timeout_s, cfg.verify.workers)
    tokenizer = _tokenizer(engine, cfg)
    new = 0
    try:
        for k in sorted(set(ks.values()), reverse=True):  # one pass per k: run_tasks numbers requests task x k
            new += run_tasks(
                [t for t in tasks if ks[t.benchmark] == k],
                engine,
                replace(sampling, k=k),
                run_dir,
                verifier,
                tokenizer,
                thinking=bool(cfg.model.thinking),
                markers=list(cfg.markers),
                keep_token_ids=cfg.keep_token_ids,
                progress=cfg.progress,
            )
    finally:
        if hasattr(engine, "close"):  # Ray replicas
            engine.close()
    log.info("%d new samples (%d tasks; samples per prompt: %s)", new, len(tasks), ks)
    summarise_runs([(cfg.label, run_dir)], run_dir)
    return run_dir


def compare(cfg: DictConfig) -> Path:
    cfg = checked(cfg)
    runs = []
    for d in cfg.compare.runs:
        path = Path(d)
        if not (path / "samples.jsonl").exists():
            raise DataError(f"{path}: not a finished run (no samples.jsonl)")
        saved = OmegaConf.load(path / CONFIG_NAME) if (path / CONFIG_NAME).exists() else None
        runs.append((str(saved.label) if saved is not None else path.name, path))
    if not runs:
        raise DataError("mode=compare needs compare.runs=[RUN_DIR,...]")
    out = Path(cfg.out)
    summarise_runs(runs, out)
    return out


@hydra.main(config_path="pkg://hydra_configs", config_name="eval", version_base="1.3")
def main(cfg: DictConfig) -> None:
    try:
        out = compare(cfg) if cfg.mode == "compare" else evaluate(cfg)
    except (
        DataError,
        OSError,
        KeyError,
        ValueError,
        ImportError,
        RuntimeError,
    ) as e:  # bad input, missing model, bad option, engine failure
        log.error("%s", e)
        sys.exit(2)
    log.info("wrote %s (summary.csv, summary.json, table.md, plots/)", out)
    print((out / "table.md").read_text())


if __name__ == "__main__":
    run_cli(main, "recipe_bcr.eval")
