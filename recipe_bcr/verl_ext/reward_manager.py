"""verl reward manager that gives the reward function the true response token count.

verl 0.9.1's naive manager decodes the response and calls `compute_score` without its
length, so a character estimate would be all the explicit-penalty ablation could use.
This subclass reads the valid response length from the attention mask (the same tokens
the policy is trained on) and the budget from the rollout config, and hands both over
in `extra_info` (copied, never mutating the batch). Select it with
  reward.reward_manager.source=importlib
  reward.reward_manager.name=BCRRewardManager
  reward.reward_manager.module.path=pkg://recipe_bcr.verl_ext.reward_manager
"""

from __future__ import annotations

import numpy as np
from verl import DataProto
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager


class BCRRewardManager(NaiveRewardManager):
    async def run_single(self, data: DataProto) -> dict:
        data = data[-1:]
        responses = data.batch["responses"]
        length = int(data.batch["attention_mask"][0, -responses.shape[-1] :].sum())
        extras = data.non_tensor_batch.get("extra_info")
        info = dict(extras[0]) if extras is not None and extras[0] is not None else {}
        info["response_length"] = length
        info["max_response_length"] = int(self.config.actor_rollout_ref.rollout.response_length)
        data.non_tensor_batch["extra_info"] = np.array([info], dtype=object)
        return await super().run_single(data)
