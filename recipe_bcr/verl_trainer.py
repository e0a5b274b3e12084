"""verl's synchronous v1 trainer plus per-step BCR metrics (`trainer.v1.trainer_mode=bcr_sync`).

verl 0.9.1 keeps each completion's reward breakdown in the rollout's `extra_fields` but logs
only the scalar score during training. The least invasive supported hook is the v1 trainer
registry (`register_trainer`, the same mechanism the built-in modes use): this subclass lets
verl compute all of its own metrics, then reads the breakdowns of the step's non-padding
samples from TransferQueue and adds recipe_bcr.metrics.training_metrics under `bcr/`.
"""

from __future__ import annotations

import transfer_queue as tq
from verl.trainer.ppo.v1.trainer_base import register_trainer
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

from recipe_bcr.metrics import training_metrics


@register_trainer("bcr_sync")
class BCRTrainer(PPOTrainerSync):
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
