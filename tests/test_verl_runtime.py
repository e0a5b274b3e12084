"""bcr-recipe's verl runtime pieces against the real verl 0.9.1: registrations (including the two
verl-private hooks, which must fail loudly if verl moves them), the CPU platform, HF rollout helpers."""

import itertools

import pytest

pytestmark = pytest.mark.verl


@pytest.fixture(scope="module")
def registered():
    from recipe_bcr.verl_ext.plugin import worker_setup

    worker_setup()


def test_hf_rollout_is_registered_on_both_sides(registered):
    from verl.workers.rollout.base import get_rollout_class
    from verl.workers.rollout.replica import get_rollout_replica_class

    from recipe_bcr.verl_ext.hf_rollout import HFReplica, HFServerAdapter

    assert get_rollout_class("hf", "async") is HFServerAdapter  # private _ROLLOUT_REGISTRY hook
    assert get_rollout_replica_class("hf") is HFReplica


def test_sync_trainer_mode_builds_the_bcr_trainer(registered):
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    from recipe_bcr.verl_ext.trainer import BCRTrainer

    cls = get_trainer_cls("sync")  # private TRAINER_REGISTRY hook
    assert cls is BCRTrainer and issubclass(cls, PPOTrainerSync)


def test_rows_reach_the_update_in_one_order_however_they_arrived():
    """verl sends each rollout as its own request, so a step's rows arrive in an order set by timing; the trainer
    orders them by their tokens before the update, so the update's sums round alike in every run of a seed."""
    from recipe_bcr.verl_ext.trainer import canonical_order

    rows = [([5, 1], [7]), ([2, 9], [3, 3]), ([5, 1], [2, 8]), ([2, 9], [3]), ([2, 9, 4], [1])]
    for arrived in itertools.permutations(rows):
        order = canonical_order([p for p, _ in arrived], [r for _, r in arrived], [str(p) for p, _ in arrived])
        assert [arrived[i] for i in order] == sorted(rows)


def test_equal_rows_of_two_groups_of_one_prompt_reach_the_update_in_one_order():
    """A prompt drawn twice in a step makes two groups; a completion both groups sampled is the same tokens with
    different advantages. Their order follows the groups' completions, not arrival or the groups' random uids."""
    import random
    import uuid

    from recipe_bcr.verl_ext.trainer import canonical_order

    groups = {"a": [[7], [8]], "b": [[7], [9]]}  # both sampled [7]; group a's other row is [8], group b's [9]
    rows = [(g, r) for g, rs in groups.items() for r in rs]
    seen = set()
    for arrived in itertools.permutations(rows):
        uid = {g: str(uuid.uuid4()) for g in random.sample(sorted(groups), 2)}
        order = canonical_order([[5, 1]] * len(arrived), [r for _, r in arrived], [uid[g] for g, _ in arrived])
        seen.add(tuple((arrived[i][0], *arrived[i][1]) for i in order))
    assert seen == {(("a", 7), ("b", 7), ("a", 8), ("b", 9))}


def test_the_anchor_on_the_actor_refuses_a_batch_laid_out_unlike_verl_0_9_1s(registered):
    """It rewrites the update's old log-probs from jagged rows; another layout stops the step with what to change,
    instead of anchoring on misaligned tokens."""
    import torch
    from tensordict import TensorDict

    from recipe_bcr.verl_ext.engine_cpu import anchor_on_actor

    padded = TensorDict({"old_log_probs": torch.zeros(2, 3)}, batch_size=[2])
    with pytest.raises(RuntimeError, match="jagged nested tensor.*bcr.anchor_on_actor=false"):
        anchor_on_actor(lambda **kw: pytest.fail("loss computed"), {"log_probs": torch.zeros(6)}, padded)


def test_trainer_hook_refuses_an_unknown_sync_trainer(registered, monkeypatch):
    from verl.trainer.ppo.v1 import trainer_base

    from recipe_bcr.verl_ext.plugin import install_trainer

    class Other(trainer_base.PPOTrainer):
        def on_step_end(self):
            pass

        def on_sample_end(self):
            pass

    monkeypatch.setitem(trainer_base.TRAINER_REGISTRY, "sync", Other)
    with pytest.raises(RuntimeError, match="must be updated"):
        install_trainer()


def test_cpu_platform_keeps_the_cpu_device(registered):
    """Without an accelerator, verl runs on the recipe's CPU platform (with one, verl's own is chosen)."""
    import torch
    from omegaconf import OmegaConf
    from verl.plugin.platform import get_platform
    from verl.utils.device import auto_set_device, get_device_name, get_nccl_backend

    if torch.cuda.is_available():
        pytest.skip("an accelerator is present: verl's own platform is chosen, not the recipe's CPU platform")
    assert get_platform().device_name == "cpu" == get_device_name()
    assert get_nccl_backend() == "gloo"
    cfg = OmegaConf.create({"trainer": {"device": "cpu"}})
    auto_set_device(cfg)
    assert cfg.trainer.device == "cpu"


def test_sampling_key_applies_exactly_the_configured_settings():
    from recipe_bcr.verl_ext.hf_rollout import sampling_key

    k = sampling_key({"temperature": 0.6, "top_p": 0.9, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}, 48)
    assert (k.temperature, k.top_p, k.top_k, k.repetition_penalty, k.max_tokens, k.logprobs) == (
        0.6,
        0.9,
        0,
        1.0,
        48,
        True,
    )
    assert sampling_key({"top_k": 20, "max_tokens": 7}, 48).top_k == 20
    with pytest.raises(ValueError, match="presence_penalty"):
        sampling_key({"presence_penalty": 1.0}, 48)
    with pytest.raises(ValueError, match="ignore_eos"):
        sampling_key({"ignore_eos": True}, 48)
    sampling_key({"seed": 7}, 48)  # a request's own seed (the server seeds that row with it)
    for bad in ("7", 1.5, -1, True):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            sampling_key({"seed": bad}, 48)


def test_trim_completion_keeps_the_first_eos_like_vllm():
    from recipe_bcr.verl_ext.hf_rollout import trim_completion

    assert trim_completion([5, 6, 2, 0, 0], {2}) == [5, 6, 2]
    assert trim_completion([5, 6, 2, 9, 2], {2, 9}) == [5, 6, 2]
    assert trim_completion([5, 6, 7], {2}) == [5, 6, 7]


def test_toy_cli_names_a_bad_override(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "recipe_bcr", "toy", f"out={tmp_path}", "model.hiden_size=8"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "hiden_size" in proc.stderr and "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())  # nothing written
