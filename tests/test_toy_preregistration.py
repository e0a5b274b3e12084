"""The second miniature's pre-registration (hydra_configs/paper.yaml): every measured precondition has a
threshold, ranges judge both sides, and an output names the commit that registered its thresholds."""

from __future__ import annotations

import math

import pytest

from recipe_bcr.miniature.toy import preconditions as pre


def test_paper_yaml_registers_every_measured_precondition():
    cfg = pre.load_preregistration()
    assert set(cfg["preconditions"]["thresholds"]) == set(pre.REGIME_CHECKS)
    # the numbers, as registered
    th = cfg["preconditions"]["thresholds"]
    assert th["reachable_fit_n3"] == [0.02, 0.30] and th["any_fit_n3"] == [None, 0.50]
    assert th["acc_n1"] == [0.65, 0.85] and th["recheck_gain_long"][0] == 0.08
    assert th["filler_effect"] == [-0.02, 0.02] and th["length_cv_n1"][0] == 0.30
    assert cfg["grpo"]["rollouts"] == 8 and cfg["eval"]["problems"] >= 500 and len(cfg["seeds"]) >= 3
    assert len(cfg["ablations"]["budget_scales"]) >= cfg["findings"]["F4"]["min_budgets"] >= 5


def test_a_threshold_removed_or_malformed_is_refused(tmp_path, monkeypatch):
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(pre.config_path())
    del cfg.preconditions.thresholds["acc_n1"]
    cfg.preconditions.thresholds["acc_n1_typo"] = [0.6, 0.8]
    path = tmp_path / "paper.yaml"
    OmegaConf.save(cfg, path)
    monkeypatch.setattr(pre, "config_path", lambda name="paper": path)
    with pytest.raises(ValueError, match=r"missing \['acc_n1'\], unknown \['acc_n1_typo'\]"):
        pre.load_preregistration()
    monkeypatch.undo()
    with pytest.raises(ValueError, match="want \\[low, high\\]"):
        pre.load_preregistration(["preconditions.thresholds.acc_n1=[null,null]"])


@pytest.mark.parametrize(
    "value, bounds, ok",
    [
        (0.02, [0.02, 0.30], True),
        (0.019, [0.02, 0.30], False),
        (0.31, [0.02, 0.30], False),
        (0.9, [None, 0.5], False),
        (-5.0, [None, 0.5], True),
        (math.nan, [0.1, None], False),
    ],
)
def test_within_judges_both_sides_and_refuses_nan(value, bounds, ok):
    assert pre.within(value, bounds) is ok


def test_registration_is_the_content_with_the_commit_beside_it(tmp_path, monkeypatch):
    """A comment leaves the registration as it was, a threshold makes another one; the commit is named only while the
    file holds no uncommitted change."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "hydra_configs").mkdir(parents=True)
    cfg = repo / "hydra_configs" / "paper.yaml"
    text = pre.config_path().read_text()
    cfg.write_text(text)

    def run(*a):
        return subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True)

    run("init", "-q")
    run("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "register")
    head = run("rev-parse", "HEAD").stdout.strip()
    monkeypatch.setattr(pre, "config_path", lambda name="paper": cfg)
    first = pre.registration(repo)
    assert first["commit"] == head and len(first["id"]) == 16
    cfg.write_text("# a new comment\n" + text)
    assert pre.registration(repo) == {"id": first["id"], "commit": None}
    cfg.write_text(text.replace("train_steps: ", "train_steps: 1", 1))
    assert pre.registration(repo)["id"] != first["id"]
    assert pre.registration(tmp_path / "not-a-repo")["commit"] is None


def test_the_registered_arms_are_bcr_its_three_controls_and_the_ablations_at_every_seed():
    from recipe_bcr.miniature.paper.command import plan_arms

    cfg = pre.load_preregistration()
    runs = plan_arms(cfg, 270)
    by = {r.name: r for r in runs}
    assert len(by) == len(runs)
    for s in cfg["seeds"]:

        def arm(name):
            return by[f"{name}_s{s}"].n, by[f"{name}_s{s}"].budget, by[f"{name}_s{s}"].single

        assert arm("bcr_n3") == (3, 270, False) and arm("truncation_n1") == (1, 90, True)
        assert arm("n2") == (2, 180, False) and arm("baseline_n1") == (1, 384, True)
    budgets = sorted({r.budget for r in runs if r.group == "budget"} | {270})
    assert budgets == [189, 230, 270, 310, 351] and len(budgets) >= cfg["findings"]["F4"]["min_budgets"]
    for group in ("budget", "reward"):  # ablations at every seed too
        assert {r.seed for r in runs if r.group == group} == set(cfg["seeds"])
    rewards = sorted(r.reward for r in runs if r.group == "reward")
    assert rewards == sorted(cfg["ablations"]["reward"] * len(cfg["seeds"]))
