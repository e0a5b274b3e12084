"""The in-process agent loop's pieces (recipe_bcr/verl_ext/agent_loop.py); that a training run through it repeats
verl's own agent loop step for step is tests/test_train_e2e.py's."""

import asyncio

from omegaconf import OmegaConf

from recipe_bcr.verl_ext.agent_loop import InProcessAgentLoopWorker, LocalActor, reward_in_process
from recipe_bcr.verl_ext.hf_rollout import ROW_PLACE


class Scorer:
    async def compute_score(self, row: dict) -> dict:
        row["extra_info"]["num_turns"] = 2  # verl's naive reward manager writes into the row it was given
        return {"reward_score": float(len(row["extra_info"]))}


def test_a_local_call_is_awaited_like_an_actors_and_its_arguments_are_the_callees_own():
    shared = {"index": 3}  # one prompt's extra_info, shared by its rollouts
    handle = LocalActor(Scorer())
    first = asyncio.run(handle.compute_score.remote({"extra_info": shared}))
    second = asyncio.run(handle.compute_score.remote(row={"extra_info": shared}))
    assert first == second == {"reward_score": 2.0}
    assert shared == {"index": 3}  # as across Ray, where the callee gets a copy


def test_a_reward_model_keeps_verls_reward_workers():
    config = OmegaConf.create({"reward": {"reward_model": {"enable": False}}})
    assert reward_in_process(config)
    config.reward.reward_model.enable = True
    assert not reward_in_process(config)


class RecordingLoop:
    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def run(self, sampling_params: dict, **kwargs) -> dict:
        self.sent.append(sampling_params)
        return {}


def _worker(rollout: str, monkeypatch) -> tuple[InProcessAgentLoopWorker, RecordingLoop]:
    async def dispatched(self, batch) -> None:  # verl's own spawns the agent loops; here only the positions matter
        return None

    monkeypatch.setattr(InProcessAgentLoopWorker.__mro__[1], "generate_sequences", dispatched)
    worker = InProcessAgentLoopWorker.__new__(InProcessAgentLoopWorker)
    loop = RecordingLoop()
    worker._agent_loops, worker._places, worker._send_places = {"single_turn_agent": loop}, {}, rollout == "hf"

    async def postprocess(output, validate, **kwargs):
        return output

    worker._agent_loop_postprocess = postprocess
    return worker, loop


def _run(worker: InProcessAgentLoopWorker, uid: str, session: int) -> None:
    trajectory = {"step": 1, "sample_index": 0, "rollout_n": 0, "validate": False}
    asyncio.run(
        worker._run_agent_loop(
            {"temperature": 1.0}, trajectory, agent_name="single_turn_agent", trace=False, uid=uid, session_id=session
        )
    )


def test_each_hf_request_names_its_prompts_position_in_the_dispatch_and_its_session(monkeypatch):
    """The HF server numbers a prompt's rows by these places, not by arrival (a prompt drawn twice in a step must give
    each of its groups the same draws in every run); the caller's sampling parameters stay as they were."""
    import numpy as np
    from verl.utils import tensordict_utils as tu

    worker, loop = _worker("hf", monkeypatch)
    batch = tu.get_tensordict({"input_ids": np.zeros((3, 2)), "uid": np.array(["u7", "u2", "u5"], dtype=object)})
    asyncio.run(worker.generate_sequences(batch))
    _run(worker, "u5", 1)
    _run(worker, "u7", 0)
    assert [s[ROW_PLACE] for s in loop.sent] == [(2, 1), (0, 0)]
    assert all(s["temperature"] == 1.0 and len(s) == 2 for s in loop.sent)


def test_other_rollouts_get_verls_sampling_parameters_unchanged(monkeypatch):
    worker, loop = _worker("vllm", monkeypatch)
    batch = {"uid": ["u7"]}
    asyncio.run(worker.generate_sequences(batch))
    _run(worker, "u7", 0)
    assert loop.sent == [{"temperature": 1.0}]
