"""Resume that tells and protects (recipe_bcr.verl_ext.resume, preflight.check_resume), on fake checkpoint folders
laid out as verl 0.9.1 writes them: global_step_N/actor/{model,optim,extra_state}_world_size_W_rank_R.pt and
fsdp_config.json, then latest_checkpointed_iteration.txt."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from recipe_bcr.verl_ext import memory, resume
from recipe_bcr.verl_ext.checks import compose_recipe
from recipe_bcr.verl_ext.preflight import PreflightError, check_resume, check_schedule

ROOT = Path(__file__).resolve().parents[1]


def save(folder: Path, step: int, world: int, config: bool = True, tracker: bool = True) -> None:
    """What verl's FSDP checkpoint manager and trainer write for one save."""
    actor = folder / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    for rank in range(world):
        for kind in ("model", "optim", "extra_state"):
            (actor / f"{kind}_world_size_{world}_rank_{rank}.pt").write_bytes(b"")
    if config:
        (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world}))
    (folder / f"global_step_{step}" / "data.pt").write_bytes(b"")
    if tracker:
        (folder / "latest_checkpointed_iteration.txt").write_text(str(step))


def run(folder: Path, *overrides: str):
    return compose_recipe(["bcr.gpus=8", f"trainer.default_local_dir={folder}", *overrides])


def test_an_empty_folder_starts_fresh_and_says_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = check_resume(compose_recipe(["bcr.gpus=8"]))  # the recipe's relative default_local_dir
    assert line.startswith(f"starting fresh in {tmp_path}/checkpoints/bcr/bcr_justrl-deepseek-1.5b_n3_b5120")


def test_a_saved_run_says_its_step_and_world_size(tmp_path):
    save(tmp_path, 100, 8)
    save(tmp_path, 200, 8)
    line = check_resume(run(tmp_path))
    assert line.startswith(f"resuming from global_step_200 (world size 8) in {tmp_path}")
    size = resume.checkpoint_gb("justrl-deepseek-1.5b")
    assert f"~{size:.0f} GB a checkpoint" in line and round(size) == 21


def test_a_checkpoint_of_another_world_size_is_refused_naming_the_gpus_that_fit(tmp_path):
    save(tmp_path, 300, 4)
    with pytest.raises(PreflightError) as e:
        check_resume(run(tmp_path))
    assert f"global_step_300 in {tmp_path} was saved on 4 GPU(s), this run has 8" in str(e.value)
    assert "-> fix: bcr.gpus=4" in str(e.value) and "trainer.resume_mode=disable" in str(e.value)
    with pytest.raises(PreflightError, match="bcr.gpus=2"):  # 2 nodes: per node
        check_resume(run(tmp_path, "trainer.nnodes=2"))
    assert check_resume(run(tmp_path, "bcr.gpus=4")).startswith("resuming from global_step_300 (world size 4)")
    assert check_resume(run(tmp_path, "trainer.resume_mode=disable")).startswith("starting fresh")


def test_world_size_from_the_shards_when_fsdp_config_is_missing(tmp_path):
    save(tmp_path, 5, 2, config=False)
    assert resume.saved_world_size(tmp_path / "global_step_5" / "actor") == 2


def test_stale_checkpoints_beyond_the_kept_ones_are_pruned_at_start(tmp_path):
    """verl keeps its list of saved checkpoints in memory: each restart leaves the older ones on disk for good."""
    for step in (100, 200, 300, 400):
        save(tmp_path, step, 8)
    save(tmp_path, 500, 8, tracker=False)  # a save cut short: the tracker still says 400; verl overwrites it
    line = check_resume(run(tmp_path))
    assert "pruned global_step_100, global_step_200 (trainer.max_actor_ckpt_to_keep)" in line
    assert resume.saved_steps(tmp_path) == [300, 400, 500]
    assert "pruned" not in check_resume(run(tmp_path))  # nothing left to prune
    check_resume(run(tmp_path, "trainer.max_actor_ckpt_to_keep=null"))  # keep every checkpoint
    assert resume.saved_steps(tmp_path) == [300, 400, 500]


def test_a_refused_resume_prunes_nothing(tmp_path):
    for step in (100, 200, 300):
        save(tmp_path, step, 4)
    with pytest.raises(PreflightError):
        check_resume(run(tmp_path))
    assert resume.saved_steps(tmp_path) == [100, 200, 300]


def test_the_tracker_naming_a_missing_folder_starts_fresh_as_verl_does(tmp_path):
    save(tmp_path, 100, 8)
    (tmp_path / "latest_checkpointed_iteration.txt").write_text("900")
    assert check_resume(run(tmp_path)).startswith("starting fresh")


def test_checkpoint_sizes_in_the_config_and_docs_come_from_the_code():
    text = (ROOT / "hydra_configs" / "recipe" / "bcr.yaml").read_text() + (ROOT / "docs" / "gpu.md").read_text()
    for model in memory.MODELS:
        assert f"~{resume.checkpoint_gb(model):.0f} GB" in text
    assert "~18 GB" not in text


def test_the_lr_schedule_is_printed_from_the_config_and_the_data(tmp_path):
    import pandas as pd

    pd.DataFrame({"x": range(3001)}).to_parquet(tmp_path / "train_n3.parquet")
    line = check_schedule(compose_recipe([f"bcr.data_dir={tmp_path}"]))
    assert line.startswith("lr 5e-06, cosine to 0, no warmup, over 1125 steps (3001 groups // 8 x 3 epochs")
    assert "over 10 steps (trainer.total_training_steps)" in check_schedule(
        compose_recipe(["trainer.total_training_steps=10", "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio=0.1"])
    ).replace("1 warmup step(s), ", "")


def test_the_training_order_is_seeded():
    """verl's sampler is seeded from data.seed only when it is set (verl/trainer/ppo/utils.py: create_rl_sampler)."""
    from verl.trainer.ppo.utils import create_rl_sampler

    data = compose_recipe([]).data
    assert isinstance(data.seed, int)
    assert list(create_rl_sampler(data, list(range(50)))) == list(create_rl_sampler(data, list(range(50))))


def _merge_lines(doc: Path, section: str) -> str:
    text = doc.read_text(encoding="utf-8")
    block = text[text.index(section) :].split("```bash\n")[1].split("```")[0].replace("\\\n", " ")
    keep = [ln for ln in block.splitlines() if ln.startswith("CKPT=") or "verl.model_merger merge" in ln]
    return "\n".join(keep)


@pytest.mark.parametrize(
    "doc, section",
    [
        (ROOT / "docs" / "gpu.md", "## One node, 8 GPUs"),
        (ROOT / "docs" / "gpu.md", "## Two nodes, 8 GPUs each"),
        (ROOT / "README.md", "## Train on GPUs"),
    ],
)
def test_the_merge_command_reads_the_latest_step_from_verls_tracker(tmp_path, doc, section):
    """Before: `global_step_1125`, which exists only if no group was lost in building the data."""
    lines = _merge_lines(doc, section)
    assert "latest_checkpointed_iteration.txt" in lines and "global_step_1125" not in lines
    script = lines.replace("python -m verl.model_merger merge", "echo").replace("/shared/", f"{tmp_path}/shared/")
    ckpt = subprocess.run(["bash", "-c", script.splitlines()[0] + '\necho "$CKPT"'], capture_output=True, text=True)
    save(tmp_path / ckpt.stdout.strip(), 1113, 8)  # an absolute CKPT replaces tmp_path
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ))
    local = out.stdout.split("--local_dir ")[1].split()[0]
    assert local.endswith("global_step_1113/actor") and (tmp_path / local).is_dir()
