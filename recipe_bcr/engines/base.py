"""The engine interface: chat prompts in, k generations per prompt out, with the engine's
own token ids and finish reasons (token counts are never re-derived from text).

Engines are streaming: `submit` hands over every request at once (so a continuous-batching
engine keeps them all in flight), `poll` returns the ones that finished since the last call.
`generate` (all prompts in, all generations out) is built on the two for callers that want
whole results, such as the difficulty and budget probes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Messages = list[dict[str, str]]
# what a finished sample can say: end of sequence, max_tokens hit, cut by the engine's repetition
# detector (all three are model output), or no model output at all (the engine aborted or failed)
FINISH_REASONS = ("stop", "length", "repetition", "abort", "error")
FAILED = frozenset({"abort", "error"})


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; the defaults are the paper's evaluation settings. top_k = 0, min_p = 0
    and repetition_penalty = 1 mean off, and both engines apply exactly these (no model defaults)."""

    temperature: float = 0.6
    top_p: float = 0.9
    max_tokens: int = 32768
    k: int = 1  # samples per prompt, sample j uses seed + j
    seed: int = 0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0


@dataclass(frozen=True)
class Generation:
    text: str
    token_ids: tuple[int, ...] | None  # None only when replaying a run saved without ids
    finish_reason: str  # one of FINISH_REASONS
    num_tokens: int
    error: str | None = None  # why a failed request produced no answer

    @classmethod
    def from_ids(cls, text: str, token_ids: Sequence[int], finish_reason: str) -> Generation:
        return cls(text, tuple(token_ids), finish_reason, len(token_ids))

    @property
    def failed(self) -> bool:
        """True when this is not a model answer (aborted or errored request): never score it."""
        return self.finish_reason in FAILED


@dataclass(frozen=True)
class Request:
    """One sample of one prompt. `prompt_ids` are the chat-rendered token ids (rendered once,
    by the caller, so every engine and replica sees the same ids); replay keys on `messages`."""

    id: int
    messages: Messages
    prompt_ids: tuple[int, ...] | None
    sample: int  # sample index j; its seed is sampling.seed + j


class Engine(Protocol):
    def submit(self, requests: Sequence[Request], sampling: Sampling) -> None:
        """Queue requests; a continuous-batching engine starts on all of them."""
        ...

    def poll(self) -> list[tuple[int, Generation]]:
        """(request id, generation) for requests finished since the last call; blocks until at
        least one finishes while any is unfinished."""
        ...

    def unfinished(self) -> int:
        """Requests submitted but not yet returned by `poll`."""
        ...

    def generate(self, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
        """k generations for each prompt, in prompt order."""
        ...


def build_requests(
    prompts: Sequence[Messages], sampling: Sampling, render: Any = None, skip: Any = None
) -> list[Request]:
    """k requests per prompt, id = prompt index * k + j; `skip(i, j)` leaves out samples that
    already exist; `render(messages) -> ids` renders each prompt that has a request, once."""
    out = []
    for i, messages in enumerate(prompts):
        wanted = [j for j in range(sampling.k) if skip is None or not skip(i, j)]
        if wanted:
            ids = tuple(render(messages)) if render is not None else None
            out += [Request(i * sampling.k + j, messages, ids, j) for j in wanted]
    return out


def drain(engine: Engine) -> Iterator[tuple[int, Generation]]:
    """Every finished request, as it finishes, until none is left."""
    while engine.unfinished():
        yield from engine.poll()


def generate_all(engine: Engine, prompts: Sequence[Messages], sampling: Sampling) -> list[list[Generation]]:
    """`Engine.generate` on top of submit/poll."""
    requests = build_requests(prompts, sampling, getattr(engine, "render_ids", None))
    engine.submit(requests, sampling)
    results: list[list[Generation | None]] = [[None] * sampling.k for _ in prompts]
    failed = []
    for rid, gen in drain(engine):
        results[rid // sampling.k][rid % sampling.k] = gen
        if gen.failed:
            failed.append(f"prompt #{rid // sampling.k} sample {rid % sampling.k}: {gen.finish_reason} ({gen.error})")
    if failed:  # a failed request has no length and no answer; measuring it as one would be wrong
        raise RuntimeError(f"{len(failed)} request(s) failed in the engine: " + "; ".join(failed[:5]))
    return [[g for g in row if g is not None] for row in results]


def units(requests: Sequence[Request], size: int) -> list[list[Request]]:
    """Requests cut into units of at most `size` that share a sample index, in request order.

    A batched engine (transformers) generates one unit per pass, so a sample depends only on
    its unit; the Ray pool dispatches the same units whole, so any number of replicas gives
    the records one engine gives.
    """
    by_sample: dict[int, list[Request]] = {}
    for r in requests:
        by_sample.setdefault(r.sample, []).append(r)
    return [rs[i : i + size] for _, rs in sorted(by_sample.items()) for i in range(0, len(rs), size)]
