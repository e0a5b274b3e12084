"""The in-process agent loop's pieces (recipe_bcr/verl_ext/agent_loop.py); that a training run through it repeats
verl's own agent loop step for step is tests/test_train_e2e.py's."""

import asyncio

from omegaconf import OmegaConf

from recipe_bcr.verl_ext.agent_loop import LocalActor, reward_in_process


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
