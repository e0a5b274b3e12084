"""Data-parallel engine replicas on a Ray cluster (one node or many), behind the Engine interface.

Plain Ray actors, one engine each (vLLM with `tensor_parallel_size` GPUs of one node, which
vLLM then drives with its own multiprocessing workers; or transformers). Chosen over Ray
Data's LLM processor because the run folder must be written as samples finish, in one
process, resumably; actors give exactly that with nothing beyond what verl brings.

The driver keeps a queue of units (engines/base.units) and tops every replica up to
`in_flight` requests; results stream back as they finish, so the fastest replica takes the
most work and no replica idles while work is left. A replica that dies fails the run
(its records so far are on disk; the rerun resumes).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recipe_bcr.engines.base import Generation, Messages, Request, Sampling, generate_all, units
from recipe_bcr.engines.registry import build_engine
from recipe_bcr.engines.render import ChatRenderer

log = logging.getLogger(__name__)


class _Replica:
    """One engine inside a Ray actor."""

    def __init__(self, name: str, options: Mapping[str, Any], threads: int | None) -> None:
        if threads:
            import torch

            torch.set_num_threads(threads)  # as many threads as CPUs reserved, whatever the node has
        self.engine = build_engine(name, options)

    def ready(self) -> bool:
        return True

    def submit(self, requests: list[Request], sampling: Sampling) -> None:
        self.engine.submit(requests, sampling)

    def poll(self) -> list[tuple[int, Generation]]:
        return self.engine.poll()


class RayPool:
    def __init__(self, name: str, options: Mapping[str, Any], replicas: int) -> None:
        """`options` are the engine's, plus the pool's: ray_address (null: RAY_ADDRESS or a local
        Ray), cpus_per_replica, gpus_per_replica (null: tensor_parallel_size for vLLM, 0 for
        transformers) and in_flight (requests each replica holds; null: 1024 vLLM, 2 batches HF)."""
        import ray

        options = dict(options)
        ray_address = options.pop("ray_address", None)
        cpus_per_replica = float(options.pop("cpus_per_replica", None) or 1)
        gpus_per_replica = options.pop("gpus_per_replica", None)
        in_flight = options.pop("in_flight", None)
        for key in ("model", "tokenizer"):  # replicas may run elsewhere (other cwd, other node)
            if options.get(key) and Path(options[key]).exists():
                options[key] = str(Path(options[key]).resolve())
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:  # workers of a local Ray inherit this environment (PYTHONPATH, HF_*)
            ray.init(address=ray_address or os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
        if gpus_per_replica is None:
            gpus_per_replica = float(options.get("tensor_parallel_size", 1)) if name == "vllm" else 0.0
        gpus_per_replica = float(gpus_per_replica)
        self.unit = int(options.get("batch_size", 8)) if name == "transformers" else 256
        self.in_flight = in_flight or (2 * self.unit if name == "transformers" else 1024)
        actor = ray.remote(num_cpus=cpus_per_replica, num_gpus=gpus_per_replica)(_Replica)
        threads = max(1, int(cpus_per_replica)) if gpus_per_replica == 0 else None
        self.replicas = [actor.remote(name, options, threads) for _ in range(replicas)]
        try:
            ray.get([r.ready.remote() for r in self.replicas])
        except Exception as e:  # noqa: BLE001 - a replica that cannot start: say which resources were asked
            raise RuntimeError(
                f"{replicas} {name} replica(s) with {cpus_per_replica} CPU and {gpus_per_replica} GPU each could "
                f"not start on the Ray cluster ({ray.cluster_resources()}): {e}"
            ) from e
        log.info("%d %s replicas on Ray (%s CPU, %s GPU each)", replicas, name, cpus_per_replica, gpus_per_replica)
        self._ray = ray
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(options.get("tokenizer") or options["model"])
        self.render_ids = ChatRenderer(tokenizer, options.get("chat_template_kwargs"))
        self.tokenizer = tokenizer
        self._queue: deque[tuple[list[Request], Sampling]] = deque()
        self._load = [0] * replicas  # requests submitted to each replica and not yet returned
        self.served = [0] * replicas  # requests each replica has finished
        self._polls: dict[Any, int] = {}  # outstanding poll ref -> replica

    def submit(self, requests: Sequence[Request], sampling: Sampling) -> None:
        rendered = [
            r if r.prompt_ids is not None else Request(r.id, r.messages, tuple(self.render_ids(r.messages)), r.sample)
            for r in requests
        ]
        self._queue.extend((unit, sampling) for unit in units(rendered, self.unit))

    def unfinished(self) -> int:
        return sum(len(u) for u, _ in self._queue) + sum(self._load)

    def _dispatch(self) -> None:
        """Next unit to the least-loaded replica, while it has room (an idle one always has)."""
        while self._queue:
            i = min(range(len(self.replicas)), key=self._load.__getitem__)
            unit, sampling = self._queue[0]
            if self._load[i] and self._load[i] + len(unit) > self.in_flight:
                break
            self._queue.popleft()
            self.replicas[i].submit.remote(unit, sampling)  # actor calls run in order: before its next poll
            self._load[i] += len(unit)
        for i, replica in enumerate(self.replicas):
            if self._load[i] and i not in self._polls.values():
                self._polls[replica.poll.remote()] = i

    def poll(self) -> list[tuple[int, Generation]]:
        self._dispatch()
        if not self._polls:
            return []
        ready, _ = self._ray.wait(list(self._polls), num_returns=1)
        out: list[tuple[int, Generation]] = []
        for ref in ready:
            i = self._polls.pop(ref)
            finished = self._ray.get(ref)  # a dead replica raises here: the run stops, records kept
            self._load[i] -= len(finished)
            self.served[i] += len(finished)
            out.extend(finished)
        self._dispatch()
        return out

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        return generate_all(self, prompts, sampling)

    def close(self) -> None:
        if any(self.served):
            log.info("requests finished per replica: %s", self.served)
        for r in self.replicas:
            self._ray.kill(r)
        self.replicas = []
        if self._owns_ray:
            self._ray.shutdown()
