"""Hydra callbacks of the recipe."""

from __future__ import annotations

from typing import Any

from hydra.experimental.callback import Callback


def sweep_jobs(config: Any) -> list[list[str]]:
    """The override list of each job of a `-m` sweep, as Hydra's basic sweeper will launch them."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = OverridesParser.create().parse_overrides(list(config.hydra.overrides.task))
    return [job for batch in BasicSweeper.split_arguments(overrides, None) for job in batch]


class Preflight(Callback):
    """Check the composed config before verl starts Ray or any worker (recipe_bcr.verl_ext.preflight):
    a bad model path, missing data file, unusable GPU, attention setting, GPU count or batch split
    ends the job in one line instead of a worker's traceback or a silent wait on Ray's scheduler.
    A sweep (`-m`) has every job's data files checked before its first job starts."""

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        from hydra import compose

        from recipe_bcr.verl_ext.preflight import PreflightError, check_data

        jobs = [compose(config_name=config.hydra.job.config_name, overrides=job) for job in sweep_jobs(config)]
        try:
            print(f"[bcr preflight] sweep data: {check_data(jobs)}", flush=True)
        except PreflightError as e:
            raise SystemExit(f"[bcr preflight] {e}") from None

    def on_job_start(self, config: Any, **kwargs: Any) -> None:
        from recipe_bcr.verl_ext.preflight import PreflightError, preflight

        try:
            for line in preflight(config):
                print(f"[bcr preflight] {line}", flush=True)
        except PreflightError as e:
            raise SystemExit(f"[bcr preflight] {e}") from None


class RayShutdown(Callback):
    """Shut Ray down after every job, so a sweep's next job starts its own cluster
    (with its own runtime env) instead of inheriting the previous job's actors."""

    def on_job_end(self, config: Any, job_return: Any, **kwargs: Any) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()
