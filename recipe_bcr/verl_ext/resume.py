"""What a run will resume from, read from verl 0.9.1's checkpoint layout before anything starts.

verl writes `<default_local_dir>/global_step_<N>/actor/` (FSDP shards `model_world_size_<W>_rank_<r>.pt` and
`fsdp_config.json` with the world size), then `<default_local_dir>/latest_checkpointed_iteration.txt` holding N;
with `trainer.resume_mode=auto` it resumes from that N (verl.utils.checkpoint.checkpoint_manager:
find_latest_ckpt_path), a relative `default_local_dir` taken from the working directory. Three things it leaves
to the user: the shards load only on the world size that saved them (a restart on another `bcr.gpus=auto`
count fails at load, after the models and vLLM have started); the list of checkpoints to prune lives in each
process's memory, so every restart leaves `max_actor_ckpt_to_keep` old ones behind for good; and nothing says
whether a run resumed or started fresh.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRACKER = "latest_checkpointed_iteration.txt"  # verl's get_checkpoint_tracker_filename
STEP = re.compile(r"global_step_(\d+)$")
SHARD = re.compile(r"model_world_size_(\d+)_rank_\d+\.pt$")


def checkpoint_dir(cfg: Any) -> Path:
    """trainer.default_local_dir as verl reads it: relative to the working directory (hydra.job.chdir=false)."""
    return Path(str(cfg.trainer.default_local_dir)).expanduser().absolute()


def latest_step(folder: Path) -> int | None:
    """The step verl's resume_mode=auto loads: the tracker's N, if global_step_N exists (as verl checks)."""
    tracker = folder / TRACKER
    if not tracker.is_file():
        return None
    step = int(tracker.read_text().strip())
    return step if (folder / f"global_step_{step}").is_dir() else None


def saved_steps(folder: Path) -> list[int]:
    """The global_step_N folders, oldest first."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if p.is_dir() and (m := STEP.match(p.name)))


def saved_world_size(actor: Path) -> int | None:
    """The world size an actor checkpoint was saved on: fsdp_config.json, else its shards' names."""
    import json

    config = actor / "fsdp_config.json"
    if config.is_file():
        size = json.loads(config.read_text()).get("world_size")
        if size:
            return int(size)
    sizes = {int(m.group(1)) for p in actor.glob("model_world_size_*") if (m := SHARD.match(p.name))}
    return sizes.pop() if len(sizes) == 1 else None


def stale_steps(folder: Path, keep: Any) -> list[int]:
    """Steps older than the newest `keep` at or before the latest (later ones are verl's to overwrite)."""
    latest = latest_step(folder)
    if latest is None or not isinstance(keep, int) or keep <= 0:
        return []
    done = [s for s in saved_steps(folder) if s <= latest]
    return done[:-keep]


@dataclass(frozen=True)
class Resume:
    folder: Path
    step: int | None  # None: starting fresh
    world_size: int | None  # what the step was saved on
    pruned: tuple[int, ...] = ()

    def line(self) -> str:
        if self.step is None:
            return f"starting fresh in {self.folder}"
        world = f"world size {self.world_size}" if self.world_size else "world size unknown"
        pruned = (
            f"; pruned {', '.join(f'global_step_{s}' for s in self.pruned)} (trainer.max_actor_ckpt_to_keep)"
            if self.pruned
            else ""
        )
        return f"resuming from global_step_{self.step} ({world}) in {self.folder}{pruned}"


def plan(cfg: Any) -> Resume:
    """Where the run will start (no side effects)."""
    folder = checkpoint_dir(cfg)
    mode = str(cfg.trainer.resume_mode)
    if mode == "disable":
        return Resume(folder, None, None)
    if mode == "resume_path":
        path = Path(str(cfg.trainer.resume_from_path)).expanduser().absolute()
        m = STEP.match(path.name)
        return Resume(path.parent, int(m.group(1)) if m else None, saved_world_size(path / "actor"))
    step = latest_step(folder)
    world = saved_world_size(folder / f"global_step_{step}" / "actor") if step is not None else None
    return Resume(folder, step, world)


def prune(folder: Path, keep: Any) -> tuple[int, ...]:
    """Delete the stale steps (stale_steps); returns them."""
    stale = stale_steps(folder, keep)
    for step in stale:
        shutil.rmtree(folder / f"global_step_{step}")
    return tuple(stale)


def checkpoint_gb(model: str) -> float:
    """GB of one actor checkpoint, by arithmetic: the FSDP shards hold fp32 weights (4 bytes a parameter) and
    Adam's two fp32 moments (8), summed over the ranks (verl also writes the HF config and tokenizer: small)."""
    from recipe_bcr.verl_ext.memory import MODELS

    return MODELS[model].params * 12 / 1e9
