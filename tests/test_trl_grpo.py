"""`trl_reward` inside TRL's own GRPOTrainer (trl from the test extra), not an imitation of it: the trainer calls a
reward function with keywords (prompts, completions, completion_ids, every dataset column but the prompt,
trainer_state, log_extra, log_metric; `GRPOTrainer._calculate_rewards`), and its scores must be compute_score's."""

import json

import pytest

from reward_fns.bcr import compute_score, trl_reward

pytestmark = pytest.mark.requires("trl")

GROUP = "### Problem 1\nAnswer 1: \\boxed{4}\n\n### Problem 2\nAnswer 2: \\boxed{x+1}\n\n### Problem 3\nAnswer 3: \\boxed{7}"
ROWS = [
    {
        "prompt": [{"role": "user", "content": f"Solve group {i}"}],
        "solution": json.dumps(["4", "x+1", str(7 + i)]),
        "n": 3,
    }
    for i in range(2)
]


@pytest.fixture(scope="module")
def trainer(toy, tmp_path_factory):
    """GRPOTrainer on the toy model (CPU), with trl_reward as its one reward function, after one training step."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("trl")),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=str(toy[1]), reward_funcs=[trl_reward], args=args, train_dataset=Dataset.from_list(ROWS)
    )
    trainer.train()
    return trainer


def _score(completion, prompt):
    """compute_score of a conversational completion against the solution of the row whose prompt it answers."""
    row = next(r for r in ROWS if r["prompt"] == prompt)
    return compute_score("trl", completion[-1]["content"], row["solution"], {"n": row["n"]})["score"]


def test_a_training_step_scores_each_completion_as_compute_score_does(trainer):
    """What the trainer logged for its step: each generated completion's reward is compute_score's."""
    logs = trainer._logs
    completions, prompts, rewards = list(logs["completion"]), list(logs["prompt"]), list(logs["rewards"]["bcr_reward"])
    assert len(completions) == len(rewards) == 2
    assert rewards == [_score(c, p) for c, p in zip(completions, prompts)]


def test_trls_reward_step_gives_compute_scores_on_known_completions(trainer):
    """TRL's own reward step on a fully right and a partly right group: the dataset's `solution` (a JSON list) and
    `n` columns reach trl_reward through TRL's keywords, and the scores are compute_score's (3 and 2 x 2/3 + 1)."""
    wrong_last = GROUP.replace("\\boxed{7}", "\\boxed{9}")
    completions = [[{"role": "assistant", "content": GROUP}], [{"role": "assistant", "content": wrong_last}]]
    rewards = trainer._calculate_rewards([ROWS[0]] * 2, [ROWS[0]["prompt"]] * 2, completions, [[1, 2]] * 2)
    assert rewards[:, 0].tolist() == pytest.approx([_score(c, ROWS[0]["prompt"]) for c in completions])
    assert rewards[:, 0].tolist() == pytest.approx([3.0, 2.0 * 2 / 3 + 1.0])
