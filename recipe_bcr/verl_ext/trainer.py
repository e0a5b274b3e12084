"""verl's synchronous v1 trainer plus the per-step `bcr/*` metrics.

verl 0.9.1 compares `trainer.v1.trainer_mode` with the literal "sync": any other name takes
its asynchronous paths (async replay buffer, gen_batch_size 1, TransferQueue state in every
checkpoint). So the recipe keeps `trainer_mode: sync`, and `plugin.install_trainer` makes
that name resolve to this subclass of verl's `PPOTrainerSync`. It changes seven things:
- after verl computes its metrics, it adds `recipe_bcr.grading.metrics.training_metrics` over the
  step's reward breakdowns (read from TransferQueue's `extra_fields`);
- on a CPU-only machine, the hybrid worker is `engine_cpu.CPUActorRolloutRefWorker`;
- `bcr.replay_poll_s`, where a preset sets it (bcr_device=cpu), is how often the replay buffer
  checks whether the step's rollouts are done. verl hard-codes 2 s and no config key reaches it,
  so a rollout that takes 0.3 s still costs 2 s of `timing_s/gen`; absent, verl's 2 s stays;
- on a CPU-only machine with the HF rollout, its server starts before the training workers, not
  after them (`hf_rollout.prestart_servers`);
- a step's rows reach the update in an order fixed by their tokens and their groups' (`canonical_order`),
  not by when each rollout finished: verl sends every rollout as its own request, so arrival order varies
  with timing, and the update's sums over rows round differently in another order (two runs of one seed
  drifted 2% in gradient norm by step 15 on identical samples);
- with `bcr.anchor_on_actor` (the CPU preset; preflight checks that the update is on-policy), the update
  takes its PPO anchor from its own forward, not from the rollout's log-probs (`engine_cpu.anchor_on_actor`);
- with the HF rollout on one server, each dispatch of rollouts is announced to it first, so that it batches the
  whole dispatch (`hf_rollout.announce_steps`).
"""

from __future__ import annotations

from collections import defaultdict

import ray
import transfer_queue as tq
from omegaconf import OmegaConf
from verl.trainer.ppo.utils import Role
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.utils.device import get_device_name

from recipe_bcr.grading.metrics import training_metrics

_HYBRID_ROLES = (Role.ActorRollout, Role.ActorRolloutRef, Role.Actor, Role.RefPolicy)


def canonical_order(prompts: list[list[int]], responses: list[list[int]], groups: list[str]) -> list[int]:
    """Row indices sorted by (prompt tokens, response tokens, the sorted responses of the row's GRPO group): the
    same rows give the same order however they arrived. Equal tokens in two groups of one prompt (a prompt drawn
    twice in a step) can carry different advantages, so the group's responses, not its random uid, tell them
    apart; rows equal in all three are interchangeable, and among them the first seen goes first."""
    members: dict[str, list[list[int]]] = defaultdict(list)
    for g, r in zip(groups, responses):
        members[g].append(r)
    signature = {g: sorted(rs) for g, rs in members.items()}
    return sorted(range(len(prompts)), key=lambda i: (prompts[i], responses[i], signature[groups[i]]))


class BCRTrainer(PPOTrainerSync):
    def _setup(self) -> None:
        from recipe_bcr.verl_ext.hf_rollout import prestart_servers

        prestart_servers(self.config)
        super()._setup()

    def fit(self, agent_loop_manager):  # type: ignore[no-untyped-def]
        from recipe_bcr.verl_ext.hf_rollout import announce_steps

        return super().fit(announce_steps(agent_loop_manager, self.config))

    def on_train_begin(self) -> None:
        super().on_train_begin()
        rb = self.replay_buffer
        print(
            f"bcr-recipe trainer: {type(self).__name__} mode={self.trainer_mode} "
            f"replay_buffer={type(rb).__name__} gen_batch_size={getattr(rb, 'gen_batch_size', None)} "
            f"rollout={self.config.actor_rollout_ref.rollout.name} device={get_device_name()} "
            f"poll_s={getattr(rb, 'poll_interval', None)}",
            flush=True,
        )

    def _build_replay_buffer(self):  # type: ignore[no-untyped-def]
        buffer = super()._build_replay_buffer()
        poll_s = OmegaConf.select(self.config, "bcr.replay_poll_s", default=None)
        if poll_s is not None:
            if not hasattr(buffer, "poll_interval"):
                raise RuntimeError(
                    f"verl's replay buffer {type(buffer).__name__} has no poll_interval: bcr.replay_poll_s "
                    "(recipe_bcr/verl_ext/trainer.py) must be updated for this verl version"
                )
            buffer.poll_interval = float(poll_s)
        return buffer

    def _balance_batch(self, batch, metrics, logging_prefix="global_seqlen", keep_minibatch=False):  # type: ignore[no-untyped-def]
        fields = ["prompts", "responses"]
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        prompts = [t.tolist() for t in data["prompts"].unbind(0)]
        responses = [t.tolist() for t in data["responses"].unbind(0)]
        groups = [key.rsplit("_", 2)[0] for key in batch.keys]  # verl's keys: {uid}_{session}_{output}
        batch.reorder(canonical_order(prompts, responses, groups))
        return super()._balance_batch(batch, metrics, logging_prefix, keep_minibatch)

    def _update_actor(self, batch, metrics):  # type: ignore[no-untyped-def]
        if OmegaConf.select(self.config, "bcr.anchor_on_actor", default=False):
            from recipe_bcr.verl_ext.engine_cpu import ANCHOR_FLAG

            batch.extra_info[ANCHOR_FLAG] = True
        return super()._update_actor(batch, metrics)

    def _init_resource_pool_mgr(self) -> None:
        super()._init_resource_pool_mgr()
        if get_device_name() == "cpu":
            from recipe_bcr.verl_ext.engine_cpu import CPUActorRolloutRefWorker

            for role in _HYBRID_ROLES:
                if role in self.role_worker_mapping:
                    self.role_worker_mapping[role] = ray.remote(CPUActorRolloutRefWorker)

    def _compute_metrics(self, batch, metrics, timing_raw, global_steps, epoch):  # type: ignore[no-untyped-def]
        super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
        fields = data.pop("extra_fields").tolist()
        infos = [
            f.get("reward_extra_info", {})
            for f, tag in zip(fields, batch.tags)
            if isinstance(f, dict) and not tag.get("is_padding", False)
        ]
        metrics.update(training_metrics(infos))
