"""verl's TransferQueue agent loop with its per-row Ray calls taken out, for one-node CPU runs.

verl 0.9.1 runs every rollout as its own agent loop: it builds the loop with Hydra, and after generation sends the row
through Ray to a reward worker, pickled as a one-row DataProto. A step's 128 rows finish together (the HF server
generates the whole dispatch as one batch), so that work queues after the last token, and on two cores it was about as
long as the generation (benchmarks/step_profile.md). This worker builds each agent loop once and calls verl's own reward
worker code in its own process: the same `RewardLoopWorker.compute_score` on the same one-row DataProto, awaited
instead of sent. Rows, rewards and everything written to TransferQueue are verl's (tests/test_agent_loop.py; a
training run repeats the stock worker's exactly, tests/test_train_e2e.py). With the HF rollout each request also names
its row's place in the dispatch (`hf_rollout.ROW_PLACE`), so that a run repeats however the requests arrive. Select it with
  actor_rollout_ref.rollout.agent.agent_loop_manager_class=recipe_bcr.verl_ext.agent_loop.InProcessAgentLoopManager
(the CPU preset does). A reward model, which verl serves behind the reward workers, keeps verl's path.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import hydra
import ray
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry
from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopManagerTQ, AgentLoopWorkerTQ
from verl.utils.rollout_trace import rollout_trace_attr

from recipe_bcr.verl_ext.hf_rollout import ROW_PLACE


class LocalActor:
    """An object called through an actor handle's `handle.method.remote(...)` shape, in this process: `.remote`
    returns the method's coroutine, which verl's caller awaits as it would an ObjectRef. The arguments are copied, as
    Ray's pickling would copy them, so that what the callee changes stays its own (verl's naive reward manager writes
    into the row's `extra_info`, which here is the prompt's own dict, shared by its rollouts)."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> SimpleNamespace:
        method = getattr(self._target, name)
        return SimpleNamespace(remote=lambda *args, **kwargs: method(*copy.deepcopy(args), **copy.deepcopy(kwargs)))


def reward_in_process(config: Any) -> bool:
    """Whether the reward can be computed where the rollout is post-processed: a rule or custom function can; a reward
    model is served behind verl's reward workers and stays there."""
    return not bool(config.reward.reward_model.enable)


class InProcessAgentLoopWorker(AgentLoopWorkerTQ.__ray_actor_class__):  # type: ignore[name-defined,misc]
    def __init__(
        self, config: Any, llm_client: Any, teacher_client: Any = None, reward_loop_worker_handles: Any = None
    ):
        super().__init__(config, llm_client, teacher_client, reward_loop_worker_handles)
        if reward_loop_worker_handles is not None and reward_in_process(config):
            self.reward_loop_worker_handles = [LocalActor(RewardLoopWorker(config))]
            print("bcr-recipe agent loop: agent loops built once, rewards computed in this process", flush=True)
        self._agent_loops: dict[str, Any] = {}
        self._places: dict[str, int] = {}  # uid -> the prompt's position in the dispatch being generated
        self._send_places = config.actor_rollout_ref.rollout.name == "hf"

    async def generate_sequences(self, batch: Any) -> None:
        """verl's dispatch, remembering each prompt's position in it, which its rows' requests carry to the HF
        server (`ROW_PLACE`) so that the server numbers a prompt's rows by place, not by arrival. With several agent loop
        workers a position is the prompt's in its worker's share, and arrival orders a prompt's rows across shares."""
        self._places = {str(uid): i for i, uid in enumerate(batch["uid"])}
        return await super().generate_sequences(batch)

    def _agent_loop(self, agent_name: str) -> Any:
        """The agent loop `agent_name`, built once: verl builds one per row with the same arguments, and a
        single-turn loop keeps nothing between runs. Other loops (tools, multi-turn state) are built per row."""
        loop = self._agent_loops.get(agent_name)
        if loop is None:
            loop = hydra.utils.instantiate(
                config=_agent_loop_registry[agent_name],
                trainer_config=DictConfigWrap(config=self.config),
                server_manager=self.llm_client,
                tokenizer=self.tokenizer,
                processor=self.processor,
                hf_model_type=self.hf_model_type,
                dataset_cls=self.dataset_cls,
                data_config=DictConfigWrap(self.config.data),
                tools=ToolListWrap(self.tools),
            )
            if isinstance(loop, SingleTurnAgentLoop):
                self._agent_loops[agent_name] = loop
        return loop

    async def _run_agent_loop(
        self, sampling_params: dict, trajectory: dict, *, agent_name: str, trace: bool = True, **kwargs: Any
    ):  # type: ignore[no-untyped-def]
        with rollout_trace_attr(
            step=trajectory["step"],
            sample_index=trajectory["sample_index"],
            rollout_n=trajectory["rollout_n"],
            validate=trajectory["validate"],
            name="agent_loop",
            trace=trace,
        ):
            if agent_name not in _agent_loop_registry:
                raise KeyError(f"Agent loop {agent_name} not registered; registered: {sorted(_agent_loop_registry)}")
            place = self._places.get(str(kwargs.get("uid"))) if self._send_places else None
            if place is not None:
                sampling_params = {**sampling_params, ROW_PLACE: (place, int(kwargs["session_id"]))}
            output = await self._agent_loop(agent_name).run(sampling_params, **kwargs)
            return await self._agent_loop_postprocess(output, trajectory["validate"], **kwargs)


class InProcessAgentLoopManager(AgentLoopManagerTQ):
    """verl's TransferQueue agent loop manager, starting `InProcessAgentLoopWorker`s."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.agent_loop_workers_class = ray.remote(InProcessAgentLoopWorker)
