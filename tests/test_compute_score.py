import json

import numpy as np
import pytest

from recipe_bcr.grading.reward import BREAKDOWN_KEYS
from reward_fns.bcr import compute_score, parse_ground_truth

TEXT = "### Problem 1\nAnswer1: \\boxed{2}\n### Problem 2\nAnswer2: \\boxed{5}"


@pytest.mark.parametrize("gt", [["2", "5"], np.array(["2", "5"], dtype=object), json.dumps(["2", "5"]), ("2", "5")])
def test_ground_truth_forms(gt):
    out = compute_score("bcr", TEXT, gt, {"n": 2, "index": 0})
    assert out["score"] == 3.0 and set(out) == set(BREAKDOWN_KEYS)
    assert all(isinstance(v, float) for v in out.values())


def test_per_problem_gold_list_is_any_of():
    golds = parse_ground_truth([["1", "2"], np.array(["5"])], {"n": 2})
    assert golds == [["1", "2"], "5"]
    assert compute_score("bcr", TEXT, [["1", "2"], ["5"]])["acc"] == 1.0


def test_plain_string_gold_is_one_problem():
    assert compute_score("math", "so \\boxed{42}", "42")["acc"] == 1.0


def test_length_mismatch_names_the_sample():
    with pytest.raises(ValueError, match=r"index=17.*2 answers but the group has n=3"):
        compute_score("bcr", TEXT, ["2", "5"], {"n": 3, "index": 17, "split": "train"})


@pytest.mark.parametrize("n", ["three", 2.5, 0, [2]])
def test_bad_group_size_names_the_sample(n):
    with pytest.raises(ValueError, match=r"index=4.*extra_info.n must be a positive whole number"):
        compute_score("bcr", TEXT, ["2", "5"], {"n": n, "index": 4})


def test_group_size_may_come_as_text_or_numpy():
    assert compute_score("bcr", TEXT, ["2", "5"], {"n": "2"})["score"] == 3.0
    assert compute_score("bcr", TEXT, ["2", "5"], {"n": np.int64(2)})["score"] == 3.0


@pytest.mark.parametrize("gt", [[], ["2", ""], [[]]])
def test_bad_ground_truth_is_an_error(gt):
    with pytest.raises(ValueError):
        compute_score("bcr", TEXT, gt, {"index": 3})


@pytest.mark.parametrize("gt", ["[-2, 7]", "[0,1)", "[broken"])
def test_bracketed_single_gold_is_not_mistaken_for_a_json_list(gt):
    assert parse_ground_truth(gt, None) == [gt]


def test_json_numbers_are_answers_when_n_says_so():
    assert parse_ground_truth("[12, 3]", {"n": 2}) == ["12", "3"]
    assert parse_ground_truth("[12, 3]", {"n": 1}) == ["[12, 3]"]


def test_alternatives_from_extra_info():
    info = {"n": 2, "gold_alternatives": [[], np.array(["5.0", "five"])]}
    assert parse_ground_truth(["2", "5"], info) == ["2", ["5", "5.0", "five"]]


@pytest.mark.parametrize("solution", [None, b"\xff\xfe", 12345, "", "\\boxed{"])
def test_odd_solutions_score_zero_without_raising(solution):
    out = compute_score("bcr", solution, ["2", "5"])
    assert out["score"] == 0.0 and set(out) == set(BREAKDOWN_KEYS)


def test_weights_come_from_reward_kwargs():
    out = compute_score("bcr", TEXT, ["2", "7"], w_acc=1.0, w_fmt=0.5)
    assert out["score"] == pytest.approx(1.0 * 0.5 + 0.5)


def test_length_penalty_uses_given_token_length_and_refuses_without_it():
    info = {"response_length": 1280, "max_response_length": 5120}
    out = compute_score("bcr", TEXT, ["2", "5"], info, w_len=1.0)
    assert out["len_penalty"] == pytest.approx(-0.25) and out["score"] == pytest.approx(3.0 - 0.25)
    with pytest.raises(ValueError, match="true token|token length"):
        compute_score("bcr", TEXT, ["2", "5"], {}, w_len=1.0)
