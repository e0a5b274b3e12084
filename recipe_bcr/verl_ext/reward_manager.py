"""verl reward manager that gives the reward function the true response token count.

verl 0.9.1's naive manager decodes the response and calls `compute_score` without its
length, so a character estimate would be all the explicit-penalty ablation could use.
This subclass reads the valid response length from the attention mask (the same tokens
the policy is trained on) and the budget from the rollout config, and hands both over
in `extra_info` (copied, never mutating the batch). A row with its own `extra_info.token_cap` is scored as if the
rollout had stopped there: the response is cut to that many tokens and that is its budget (an oracle-allocation
control whose budget follows each problem, where verl's rollout has one response length for all). Select it with
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
        # verl scores a trajectory's last row; one row is not sliced (a slice indexes every tensor: ~1 ms a row) but
        # taken as a new batch over the same tensors, so that what is set below stays out of the caller's
        if len(data) > 1:
            data = data[-1:]
        else:
            data = DataProto(data.batch.clone(recurse=False), dict(data.non_tensor_batch), data.meta_info)
        width = data.batch["responses"].shape[-1]
        length = int(data.batch["attention_mask"][0, -width:].sum())
        extras = data.non_tensor_batch.get("extra_info")
        info = dict(extras[0]) if extras is not None and extras[0] is not None else {}
        budget = int(self.config.actor_rollout_ref.rollout.response_length)
        cap = info.get("token_cap")
        if cap is not None and cap == cap:  # parquet nulls may arrive as NaN
            budget = min(budget, int(cap))
            if length > budget:
                mask = data.batch["attention_mask"].clone()
                mask[0, mask.shape[-1] - width + budget :] = 0
                data.batch["attention_mask"] = mask
                length = budget
        info["response_length"] = length
        info["max_response_length"] = budget
        data.non_tensor_batch["extra_info"] = np.array([info], dtype=object)
        return await super().run_single(data)
