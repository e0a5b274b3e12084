"""Model paths checked before Ray starts (preflight.check_model_paths, check_hub_models): a local folder exists
and holds config.json; a hub id is in the cache or found on the Hub, or one line says the Hub is unreachable and
how to pass a local copy. No network in CI: the Hub's answer is injected."""

import pytest

from recipe_bcr.verl_ext import preflight
from recipe_bcr.verl_ext.checks import compose_recipe
from recipe_bcr.verl_ext.preflight import PreflightError, check_hub_models, check_model_paths, hub_status


def test_the_readmes_merge_target_missing_is_named_as_a_missing_folder(tmp_path, monkeypatch):
    """Before: `models/bcr-justrl-1.5b` (one '/') was taken for a hub id: five retries, then "couldn't connect to
    huggingface.co" inside a worker."""
    monkeypatch.chdir(tmp_path)
    cfg = compose_recipe(["bcr.model.path=models/bcr-justrl-1.5b"])
    asked = []
    with pytest.raises(PreflightError) as e:
        check_hub_models(cfg, status=lambda repo: asked.append(repo) or "missing")
    assert asked == ["models/bcr-justrl-1.5b"]
    assert str(e.value).startswith(
        f"bcr.model.path=models/bcr-justrl-1.5b: neither a folder here ({tmp_path}/models/bcr-justrl-1.5b) nor a model"
    )


def test_a_local_folder_must_hold_a_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "merged").mkdir(parents=True)
    cfg = compose_recipe(["bcr.model.path=models/merged"])
    with pytest.raises(PreflightError, match=r"bcr.model.path=models/merged: .*models/merged has no config.json"):
        check_model_paths(cfg)
    (tmp_path / "models" / "merged" / "config.json").write_text("{}")
    assert check_model_paths(cfg) == ["models/merged"]
    assert check_hub_models(cfg, status=lambda repo: pytest.fail(f"asked the Hub for {repo}")) == "local folders only"


def test_a_tokenizer_folder_must_hold_a_tokenizer(tmp_path):
    (tmp_path / "tok").mkdir()
    cfg = compose_recipe([f"bcr.model.tokenizer={tmp_path}/tok"])
    with pytest.raises(PreflightError, match="has no tokenizer_config.json or tokenizer.json"):
        check_model_paths(cfg)


def test_an_unreachable_hub_is_one_line_saying_how_to_pass_a_local_copy():
    cfg = compose_recipe([])
    with pytest.raises(PreflightError) as e:
        check_hub_models(cfg, status=lambda repo: "unreachable: ConnectError")
    message = str(e.value)
    assert message.startswith("bcr.model.path=hbx/JustRL-DeepSeek-1.5B: the Hugging Face Hub is unreachable")
    assert "huggingface-cli download hbx/JustRL-DeepSeek-1.5B --local-dir models/JustRL-DeepSeek-1.5B" in message
    assert "bcr.model.path=$PWD/models/JustRL-DeepSeek-1.5B" in message and "\n" not in message


def test_a_hub_id_that_resolves_passes_once_per_id():
    asked = []
    line = check_hub_models(compose_recipe([]), status=lambda repo: asked.append(repo))
    assert asked == ["hbx/JustRL-DeepSeek-1.5B"] and line == "hbx/JustRL-DeepSeek-1.5B found (cache or Hub)"


def test_hub_status_offline_and_not_cached_says_so(tmp_path, monkeypatch):
    """The real resolver, without network: HF_HUB_OFFLINE and an empty cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub_status("hbx/JustRL-DeepSeek-1.5B").startswith("unreachable: HF_HUB_OFFLINE")
    snapshot = tmp_path / "models--org--cached" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "models--org--cached" / "refs").mkdir()
    (tmp_path / "models--org--cached" / "refs" / "main").write_text("abc")
    assert hub_status("org/cached") is None


def test_the_preflight_asks_the_hub_after_the_cheap_checks(monkeypatch):
    order = []
    for name in ("check_model_paths", "check_device", "check_data", "check_schedule", "check_imports", "check_gpus"):
        monkeypatch.setattr(preflight, name, lambda *a, name=name: order.append(name) or [])
    for name in ("check_memory", "check_batch", "check_anchor", "check_resume"):
        monkeypatch.setattr(preflight, name, lambda *a, name=name: order.append(name) or "")
    monkeypatch.setattr(preflight, "hub_status", lambda repo: "unreachable: ConnectError")
    with pytest.raises(PreflightError, match="unreachable"):
        preflight.preflight(compose_recipe([]))
    assert order[-1] == "check_batch" and "check_resume" not in order  # nothing pruned for a run that stops
