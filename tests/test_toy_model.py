"""The committed warm start (recipe_bcr/miniature/resources/toy_model): made with today's settings, used
without a build, and reproduced by its rebuild command (`python -m recipe_bcr toy --rebuild`)."""

from __future__ import annotations

import json
import shutil

import pytest

from recipe_bcr.miniature.toy import model as toy_model
from recipe_bcr.miniature.toy.model import (
    SHIPPED,
    built_with,
    cache_key,
    ensure_model,
    load_specs,
    save_model,
    warm_start,
)


def test_committed_model_is_built_with_the_current_settings():
    """Change hydra_configs/toy.yaml or the task and this fails until the model is rebuilt and
    committed (`python -m recipe_bcr toy --rebuild --ship`); otherwise every fresh machine would
    silently spend minutes building it."""
    task, mspec, _ = load_specs()
    assert built_with(SHIPPED) == cache_key(task, mspec)


def test_a_fresh_cache_gets_the_committed_model_without_a_build(tmp_path, monkeypatch):
    def no_build(*_, **__):
        raise AssertionError("built although the committed model has these settings")

    monkeypatch.setattr(toy_model, "build_model", no_build)
    task, mspec, _ = load_specs()
    path = ensure_model(tmp_path, task, mspec, progress=False)
    for f in SHIPPED.iterdir():
        assert (path / f.name).read_bytes() == f.read_bytes()
    other = load_specs(["model.sft_steps=3"])
    with pytest.raises(AssertionError, match="built although"):
        ensure_model(tmp_path / "other", other[0], other[1], progress=False)  # other settings: a build


def test_a_committed_base_without_weights_is_built_not_copied(tmp_path, monkeypatch):
    """The superseded bases keep their tokenizer and settings key but not their weights (resources/README.md): such a
    folder matches the key yet is built, never copied half."""
    built = []
    monkeypatch.setattr(toy_model, "build_model", lambda path, *a, **k: built.append(path))
    task, mspec, _ = load_specs()
    shipped = tmp_path / "shipped"
    shutil.copytree(SHIPPED, shipped)
    (shipped / "model.safetensors").unlink()
    path = ensure_model(tmp_path / "cache", task, mspec, progress=False, shipped=shipped)
    assert built == [path] and not path.exists()


# Pre-registered before the losses were recorded: a rebuild's step losses may differ from the recorded ones by
# float rounding (here they are equal bit for bit with 1 or 2 threads); a change to the corpus, tokenizer, prompt
# rendering, batching, masking, initialisation, optimizer or schedule moves them by far more.
CHECKED_STEPS = 64  # one pass over the 800 supervised examples (50 steps of 16) and into the next
LOSS_RTOL = 1e-2


@pytest.mark.slow
def test_rebuild_reproduces_the_recorded_warm_start(tmp_path):
    """The rebuild command's first CHECKED_STEPS supervised steps (the full run's schedule) reproduce the
    losses recorded beside the committed model, and its folder matches the committed one file for file except
    the weights (the whole 800-step rebuild took 2-4 min; its steps after these run the same loop). The
    recorded losses come from the build that wrote them, `python -m recipe_bcr toy --rebuild` (see
    recipe_bcr/resources/README.md for the model committed before losses were recorded)."""
    task, mspec, _ = load_specs()
    recorded = json.loads((SHIPPED / "toy_spec.json").read_text())["sft_losses"]
    assert len(recorded) == mspec.sft_steps
    model, tokenizer, losses = warm_start(task, mspec, progress=False, steps=CHECKED_STEPS)
    assert losses == pytest.approx(recorded[:CHECKED_STEPS], rel=LOSS_RTOL)
    saved = save_model(tmp_path / "prefix", model, tokenizer, losses, task, mspec)
    assert built_with(saved) == built_with(SHIPPED)
    for name in (
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
    ):
        assert (saved / name).read_bytes() == (SHIPPED / name).read_bytes(), name


def test_a_build_change_the_settings_key_misses_fails_the_check(monkeypatch):
    """The check above can fail where the settings key cannot: one more word at the end of every supervised
    trace moves the first 8 steps' losses up to ~8%, well past the tolerance."""
    task, mspec, _ = load_specs()
    recorded = json.loads((SHIPPED / "toy_spec.json").read_text())["sft_losses"]
    target = toy_model.target_completion
    monkeypatch.setattr(toy_model, "target_completion", lambda *a: target(*a) + " Done.")
    _, _, losses = warm_start(task, mspec, progress=False, steps=8)
    assert losses != pytest.approx(recorded[:8], rel=LOSS_RTOL)


@pytest.mark.parametrize("steps", [0, 801])
def test_a_prefix_outside_the_run_is_refused(steps):
    task, mspec, _ = load_specs()
    with pytest.raises(ValueError, match="between 1 and model.sft_steps=800"):
        warm_start(task, mspec, progress=False, steps=steps)


@pytest.mark.parametrize("device", ["cuda:99", "tpu", "cudafoo", "cuda:"])
def test_a_device_this_machine_lacks_is_refused_before_training(device):
    task, mspec, _ = load_specs()
    with pytest.raises(ValueError, match=f"device={device}: no such device here"):
        warm_start(task, mspec, progress=False, steps=1, device=device)


def test_the_toy_command_names_a_bad_device_and_exits_2(tmp_path, capsys, monkeypatch):
    from recipe_bcr.miniature.toy_command import run_toy

    monkeypatch.setenv("BCR_CACHE", str(tmp_path / "cache"))
    assert run_toy(str(tmp_path / "data"), ["device=tpu", "model.sft_steps=3"], rebuild=True) == 2
    assert "device=tpu: no such device here" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()  # nothing written


def test_an_interrupted_warm_start_resumes_where_it_stopped(tmp_path):
    """A CPU build of a larger toy takes hours: one stopped after its last saved state and run again ends with the
    losses and weights of one that ran through (the state holds model, optimizer and schedule; the batch order is a
    function of the step)."""
    import torch

    task, mspec, _ = load_specs(["model.groups_per_n=20"])
    through, _, through_losses = warm_start(task, mspec, progress=False, steps=6)
    state = tmp_path / "state.pt"
    _, _, first = warm_start(task, mspec, progress=False, steps=4, checkpoint=state, every=2)
    assert len(first) == 4 and state.exists()
    saved = torch.load(state, weights_only=False)
    torch.save(saved | {"losses": [-1.0] * 4}, state)  # marks the first 4 steps: a retrained run would overwrite them
    resumed, _, losses = warm_start(task, mspec, progress=False, steps=6, checkpoint=state, every=2)
    assert losses == [-1.0] * 4 + through_losses[4:]
    for (name, a), b in zip(through.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), name


def test_a_saved_state_of_other_settings_is_not_resumed(tmp_path):
    task, mspec, _ = load_specs(["model.groups_per_n=20"])
    state = tmp_path / "state.pt"
    warm_start(task, mspec, progress=False, steps=2, checkpoint=state, every=2)
    other = load_specs(["model.groups_per_n=20", "model.sft_lr=1e-3"])
    _, _, losses = warm_start(*other[:2], progress=False, steps=2, checkpoint=state, every=2)
    _, _, fresh = warm_start(*other[:2], progress=False, steps=2)
    assert losses == fresh and len(losses) == 2
