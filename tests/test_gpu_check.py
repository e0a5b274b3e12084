"""`python -m recipe_bcr gpu-check`: its own stages and wiring. The stages' commands are recorded
instead of run (GRPO training, merge and evaluation are proven by test_train_e2e.py and the eval
tests): which stages run for `--runtimes`, which are skipped and why, what each command gets, the
verdicts and the exit code, and that the real tools accept the recorded commands."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipe_bcr.miniature import gpu_check
from recipe_bcr.verl_ext import checks

VLLM_MISSING = "vllm is not installed (GPU: pip install -e '.[gpu]'; CPU: bash .ci/setup)"


def _value(cmd, prefix):
    return next(a.split("=", 1)[1] for a in cmd if a.startswith(prefix))


class Stages:
    """Stands in for demo.run_stage: records each command and writes the files its tool writes."""

    def __init__(self, probs_diff=1e-5, fail=()):
        self.cmds, self.probs_diff, self.fail = [], probs_diff, fail

    def __call__(self, cmd, log, what):
        self.cmds.append(cmd)
        if any(f in what for f in self.fail):
            raise RuntimeError(f"{what} failed (exit 1); full log: {log}")
        if "verl.trainer.main_ppo" in cmd:
            metrics = Path(_value(cmd, "+ray_kwargs.ray_init.runtime_env.env_vars.VERL_FILE_LOGGER_PATH="))
            metrics.parent.mkdir(parents=True, exist_ok=True)
            steps = int(_value(cmd, "trainer.total_training_steps="))
            metrics.write_text(
                "".join(
                    json.dumps(
                        {
                            "step": s,
                            "data": {
                                "training/global_step": s,
                                "training/rollout_probs_diff_max": self.probs_diff,
                                "timing_s/step": 4.0,
                                "critic/score/mean": 0.5,
                            },
                        }
                    )
                    + "\n"
                    for s in range(1, steps + 1)
                )
            )
        elif "verl.model_merger" in cmd:
            Path(cmd[cmd.index("--target_dir") + 1]).mkdir(parents=True)
        else:  # recipe_bcr.eval
            run = Path(_value(cmd, "out="))
            run.mkdir(parents=True)
            with (run / "summary.csv").open("w") as f:
                csv.writer(f).writerows([["n", "acc"], [1, 0.7], [2, 0.5]])

    def tools(self):
        return [c[2] if c[1] == "-m" else c[0] for c in self.cmds]


@pytest.fixture
def stages(monkeypatch, tmp_path):
    monkeypatch.setenv("BCR_CACHE", str(tmp_path / "cache"))
    rec = Stages()
    monkeypatch.setattr(gpu_check, "run_stage", rec)
    return rec


def _machine(monkeypatch, vllm: str | None):
    found = {checks.runtime_name(d, r): (vllm if r == "vllm" else None) for d in ("gpu", "cpu") for r in ("vllm", "hf")}
    monkeypatch.setattr(checks, "runtimes", lambda: found)


def test_runtimes_hf_runs_only_the_hf_stages(stages, monkeypatch, tmp_path, capsys):
    _machine(monkeypatch, vllm=None)
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "gpu", 3, ("hf",)) == 0
    assert stages.tools() == ["verl.trainer.main_ppo", "verl.model_merger", "recipe_bcr.eval"]
    train, merge, evaluate = stages.cmds
    assert {"bcr_device=gpu", "bcr_runtime=hf", "bcr.gpus=1"} <= set(train)
    assert merge[merge.index("--local_dir") + 1] == str(
        tmp_path / "g" / "train_hf" / "checkpoints" / "global_step_3" / "actor"
    )
    assert "engine=transformers" in evaluate and f"model.path={tmp_path / 'g' / 'train_hf' / 'hf_model'}" in evaluate
    out = capsys.readouterr().out
    assert "3 ok, 0 failed, 3 skipped" in out
    assert "[skip] GRPO, bcr_device=gpu bcr_runtime=vllm: not asked (--runtimes hf)" in out
    assert "[skip] evaluation, engine=vllm: not asked (--runtimes hf)" in out
    assert "[skip] engines agree (greedy, same model): needs both evaluations" in out


def test_without_vllm_the_vllm_stages_are_skipped_not_run_and_the_run_says_so(stages, monkeypatch, tmp_path, capsys):
    _machine(monkeypatch, vllm=VLLM_MISSING)
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "gpu", 2) == 1
    assert not any("bcr_runtime=vllm" in c or "engine=vllm" in c for c in stages.cmds)
    out = capsys.readouterr().out
    assert f"[skip] GRPO, bcr_device=gpu bcr_runtime=vllm: cannot run here: {VLLM_MISSING}" in out
    assert "[ok] GRPO, bcr_device=gpu bcr_runtime=hf" in out
    assert "asked for vllm, which cannot run here; `--runtimes hf` checks what this machine can" in out


def test_both_runtimes_merge_the_vllm_checkpoint_and_compare_the_engines(stages, monkeypatch, tmp_path, capsys):
    _machine(monkeypatch, vllm=None)
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "cpu", 1) == 0
    assert stages.tools() == ["verl.trainer.main_ppo"] * 2 + ["verl.model_merger"] + ["recipe_bcr.eval"] * 2
    assert "bcr_runtime=vllm" in stages.cmds[0] and "bcr_device=cpu" in stages.cmds[0]
    assert str(tmp_path / "g" / "train_vllm" / "checkpoints") in " ".join(stages.cmds[2])
    assert "[ok] engines agree (greedy, same model): largest accuracy gap 0.000" in capsys.readouterr().out


def test_a_rollout_gap_over_the_limit_or_a_failed_stage_fails_the_check(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("BCR_CACHE", str(tmp_path / "cache"))
    _machine(monkeypatch, vllm=None)
    monkeypatch.setattr(gpu_check, "run_stage", Stages(probs_diff=gpu_check.PROBS_DIFF_LIMIT["gpu"] * 2))
    assert gpu_check.run_gpu_check(str(tmp_path / "a"), "gpu", 1, ("hf",)) == 1
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if "[FAIL] GRPO, bcr_device=gpu bcr_runtime=hf" in ln]
    assert line.endswith(f"probs_diff_max limit {gpu_check.PROBS_DIFF_LIMIT['gpu']} ({gpu_check.LIMIT_NOTE})")
    assert "toy limit" in gpu_check.LIMIT_NOTE
    monkeypatch.setattr(gpu_check, "run_stage", Stages(fail=("training",)))
    assert gpu_check.run_gpu_check(str(tmp_path / "b"), "gpu", 1, ("hf",)) == 1
    out = capsys.readouterr().out
    assert "[skip] merge: no training stage ran" in out and "[ok] evaluation, engine=transformers" in out


def test_a_rerun_into_the_same_folder_starts_afresh(stages, monkeypatch, tmp_path):
    """The stand-in's folders, like verl's checkpoints and the evaluation's run, must not exist yet: a
    leftover checkpoint would be resumed, a leftover evaluation of another model refused."""
    _machine(monkeypatch, vllm=None)
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "gpu", 1, ("hf",)) == 0
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "gpu", 1, ("hf",)) == 0


def test_cli_rejects_an_unknown_runtime():
    proc = subprocess.run(
        [sys.executable, "-m", "recipe_bcr", "gpu-check", "--runtimes", "sglang"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "invalid choice: 'sglang'" in proc.stderr


@pytest.mark.verl
def test_recorded_commands_are_accepted_by_the_real_tools(stages, monkeypatch, tmp_path):
    """The `--device cpu --runtimes hf` commands, as recorded, composed by the real tools: main_ppo's
    config (+recipe=bcr_toy with the check's device, runtime and batch overrides) passes verl's own
    validate_config, and the eval CLI accepts every override. Running them proves nothing more than
    test_train_e2e.py (GRPO through the HF rollout on the CPU, the metrics read here), the paper smoke
    and the demo (merge, evaluation of a merged model) already do."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    _machine(monkeypatch, vllm=None)
    assert gpu_check.run_gpu_check(str(tmp_path / "g"), "cpu", 1, ("hf",)) == 0
    train, merge, evaluate = stages.cmds
    overrides = train[train.index("verl.trainer.main_ppo") + 1 :]
    with initialize_config_module("verl.trainer.config", version_base=None):
        cfg = compose("ppo_trainer", overrides=overrides)
    OmegaConf.resolve(cfg)
    validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    assert cfg.trainer.device == "cpu" and cfg.actor_rollout_ref.rollout.name == "hf"
    assert cfg.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu == 4 and cfg.trainer.total_training_steps == 1
    assert merge[1:4] == ["-m", "verl.model_merger", "merge"]  # the paper smoke and the demo run this form
    proc = subprocess.run([*evaluate, "--cfg", "job"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "engine: transformers" in proc.stdout and "max_tokens: 72" in proc.stdout
