"""after_import: the Ray setup hook's registrations run when verl's modules are imported, not before."""

import subprocess
import sys

import pytest

from recipe_bcr.verl_ext.after_import import after_import


@pytest.fixture
def probe_module(tmp_path, monkeypatch):
    """A fresh importable module `bcr_probe_<test>` that sets VALUE = 7."""
    name = f"bcr_probe_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text("VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_runs_once_right_after_the_module_code(probe_module):
    seen = []
    after_import(probe_module, lambda: seen.append(sys.modules[probe_module].VALUE))
    assert seen == []  # nothing imported yet
    module = __import__(probe_module)
    assert seen == [7] and module.VALUE == 7
    sys.modules.pop(probe_module)
    __import__(probe_module)  # imported again: the registration is not repeated
    assert seen == [7]


def test_runs_at_once_when_already_imported(probe_module):
    __import__(probe_module)
    seen = []
    after_import(probe_module, lambda: seen.append(1))
    assert seen == [1]


def test_a_failing_registration_fails_the_import_loudly(probe_module):
    def broken():
        raise RuntimeError("verl moved the hook")

    after_import(probe_module, broken)
    for _ in range(2):  # a caught failure and a retry: the module never loads unregistered
        with pytest.raises(RuntimeError, match="verl moved the hook"):
            __import__(probe_module)
        assert probe_module not in sys.modules


@pytest.mark.verl
def test_worker_hook_imports_no_verl_until_a_worker_does():
    """Most of verl's actors never import its trainer or rollout: the hook leaves them torch-free, and a
    worker that imports them gets every registration (the BCR trainer, the HF rollout, the CPU platform)."""
    code = """
import sys
from recipe_bcr.verl_ext.plugin import worker_setup
worker_setup()
print(sorted(m for m in ("torch", "verl", "vllm") if m in sys.modules))
from verl.trainer.ppo.v1 import get_trainer_cls
from verl.workers.rollout.base import get_rollout_class
from verl.workers.rollout.replica import get_rollout_replica_class
from verl.plugin.platform import get_platform
print(get_trainer_cls("sync").__name__, get_rollout_class("hf", "async").__name__,
      get_rollout_replica_class("hf").__name__, get_platform().device_name)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "[]"
    assert lines[-1].split()[:3] == ["BCRTrainer", "HFServerAdapter", "HFReplica"]
    import torch

    if not torch.cuda.is_available():
        assert lines[-1].split()[3] == "cpu"
