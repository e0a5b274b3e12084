"""The grader outside verl: `trl_reward` has TRL's reward-function signature and scores what compute_score scores."""

import json

import pytest

from reward_fns.bcr import compute_score, make_trl_reward, trl_reward

GROUP = "### Problem 1\nAnswer 1: \\boxed{4}\n\n### Problem 2\nAnswer 2: \\boxed{x+1}\n\n### Problem 3\nAnswer 3: \\boxed{7}"


def _as_trl_calls_it(reward, completions, **columns):
    """GRPOTrainer calls each reward function with keywords: prompts, completions, completion_ids, trainer_state and
    every dataset column but the prompt, one value per completion."""
    n = len(completions)
    return reward(
        prompts=[[{"role": "user", "content": "..."}]] * n,
        completions=completions,
        completion_ids=[[1, 2]] * n,
        trainer_state=None,
        **columns,
    )


def test_scores_standard_and_conversational_completions_as_compute_score_does():
    golds = [["4", "1+x", "7"], ["4", "x+1", "8"], json.dumps(["5", "x + 1", "7"])]
    completions = [GROUP, [{"role": "assistant", "content": GROUP}], GROUP]
    got = _as_trl_calls_it(trl_reward, completions, solution=golds, n=[3, 3, 3])
    want = [compute_score("trl", GROUP, g, {"n": 3})["score"] for g in golds]
    assert got == want == [3.0, 2.0 * 2 / 3 + 1.0, 2.0 * 2 / 3 + 1.0]
    assert all(isinstance(x, float) for x in got)


def test_weights_and_thinking_are_the_factory_s():
    thinking = make_trl_reward(w_acc=1.0, w_fmt=0.0, thinking=True)
    after_think = "<think>let me see</think>\n" + GROUP
    inside_think = "<think>" + GROUP + "</think>\nno answer here"
    got = _as_trl_calls_it(thinking, [after_think, inside_think], solution=[["4", "x+1", "7"]] * 2)
    assert got == [1.0, 0.0]  # 1 x accuracy, format weighed 0; only the text after </think> counts


def test_bad_data_is_named_not_scored_zero():
    with pytest.raises(ValueError, match="ground_truth has 2 answers but the group has n=3"):
        _as_trl_calls_it(trl_reward, [GROUP], solution=[["4", "x+1"]], n=[3])
    with pytest.raises(ValueError, match="2 completions but 1 solutions"):
        _as_trl_calls_it(trl_reward, [GROUP, GROUP], solution=[["4", "x+1", "7"]])
