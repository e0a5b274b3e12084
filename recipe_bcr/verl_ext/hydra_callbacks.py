"""Hydra callbacks of the recipe."""

from __future__ import annotations

from typing import Any

from hydra.experimental.callback import Callback


class Preflight(Callback):
    """Check the composed config before verl starts Ray or any worker (recipe_bcr.verl_ext.preflight):
    a bad model path, attention setting or GPU count ends the job in one line instead of a
    worker's traceback or a silent wait on Ray's scheduler."""

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
