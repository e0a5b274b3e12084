"""Hydra callbacks of the recipe."""

from __future__ import annotations

from typing import Any

from hydra.experimental.callback import Callback


class RayShutdown(Callback):
    """Shut Ray down after every job, so a sweep's next job starts its own cluster
    (with its own runtime env) instead of inheriting the previous job's actors."""

    def on_job_end(self, config: Any, job_return: Any, **kwargs: Any) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()
