"""`make_engine`: an engine from its config block, in this process or as a Ray pool of replicas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipe_bcr.engines.base import Engine
from recipe_bcr.engines.ray_pool import RayPool
from recipe_bcr.engines.registry import build_engine


def make_engine(name: str, options: Mapping[str, Any]) -> Engine:
    r"""Build an inference engine by name from its config block, in this process or as a Ray pool.

    Args:
        name: `vllm` (the paper's), `transformers`, or `replay` (serves a saved run's generations again).
        options: the engine's settings, as `engine_options` in hydra_configs/engine_options/default.yaml plus
            `model` and `tokenizer` (a Hub id or a folder; replay: `samples`, a run folder). `replicas` > 1 starts
            that many data-parallel replicas on Ray (vllm, transformers; `ray_address`, `cpus_per_replica`,
            `gpus_per_replica`, `in_flight` size the pool).

    Returns:
        An `Engine`: `generate(prompts, sampling)` gives, per chat prompt, `sampling.k` `Generation`s (text,
        token ids, finish reason, token count); `submit` / `poll` stream them. vLLM and torch are imported only
        when such an engine is built.

    Raises:
        ValueError: an unknown engine name, or replicas for the replay engine.

    Example:
        >>> import json, tempfile
        >>> from recipe_bcr.engines import Sampling
        >>> prompt = [{"role": "user", "content": "What is 2 + 2?"}]
        >>> run = tempfile.mkdtemp()
        >>> record = {"prompt": prompt, "sample": 0, "completion": "\\boxed{4}", "finish_reason": "stop",
        ...           "generated_tokens": 5}
        >>> _ = open(f"{run}/samples.jsonl", "w").write(json.dumps(record) + "\n")
        >>> engine = make_engine("replay", {"samples": run})
        >>> [g.text for g in engine.generate([prompt], Sampling(k=1))[0]]
        ['\\boxed{4}']
    """
    options = dict(options)
    replicas = int(options.pop("replicas", 1) or 1)
    if replicas > 1:
        if name == "replay":
            raise ValueError("engine=replay runs in one process; drop engine_options.replicas")
        return RayPool(name, options, replicas)
    return build_engine(name, options)
