"""Bad command-line input costs no rerun: a wrong key, type or old spelling is one line naming the fix, and
nothing is written before the input is checked. One spelling (`out=DIR`) for the output folder everywhere."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

import recipe_bcr.eval.__main__ as eval_cli
from recipe_bcr.__main__ import main as recipe_main
from recipe_bcr.__main__ import yaml_keys_help
from recipe_bcr.data.cli import ConfigError, check_config, refuse_renamed
from recipe_bcr.data.io import DataError

REPO = Path(__file__).resolve().parents[1]


def _eval_cfg(*overrides):
    with initialize_config_module("hydra_configs", version_base="1.3"):
        return compose("eval", overrides=list(overrides))


def _data_prep(script, *args, cwd):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, str(REPO / "data_prep" / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_eval_refuses_an_unknown_benchmark_before_writing_so_the_corrected_rerun_works(tmp_path):
    out = tmp_path / "run"
    cfg = _eval_cfg("engine=replay", "only=[AIME24]", f"out={out}")
    with pytest.raises(DataError, match=r"unknown benchmark\(s\) \['AIME24'\].*AIME25"):
        eval_cli.evaluate(cfg)
    assert not out.exists()
    eval_cli._check_resume(out, _eval_cfg("engine=replay", "only=[AIME25]", f"out={out}"))  # not "other settings"


@pytest.mark.parametrize(
    "override,message",
    [
        ("sampling.k=two", "sampling.k='two' (str): expected an integer, e.g. sampling.k=3"),
        ("sampling.temperature=hot", "sampling.temperature='hot' (str): expected a number"),
        ("n=[1,x]", "n=[1, 'x'] (list): expected a list of integers"),
        ("mode=train", "mode='train' (str): expected one of run, compare"),
        ("limit=[3]", "limit=[3] (list): expected an integer or null"),
    ],
)
def test_eval_wrong_type_names_the_key_and_writes_nothing(tmp_path, override, message):
    out = tmp_path / "run"
    with pytest.raises(ConfigError) as e:
        eval_cli.evaluate(_eval_cfg("engine=replay", override, f"out={out}"))
    assert message in str(e.value) and "\n" not in str(e.value)
    assert not out.exists()


def test_eval_reads_one_n_as_a_list_and_defaults_out_by_mode():
    assert list(eval_cli.checked(_eval_cfg("n=3")).n) == [3]
    assert _eval_cfg("label=m").out == "runs/m"
    assert _eval_cfg("mode=compare").out == "runs/compare"
    assert _eval_cfg("out=elsewhere", "mode=compare").out == "elsewhere"


def test_build_groups_reads_a_scalar_n_as_one_group_size(tmp_path):
    """`n=3` where a list is expected was a raw TypeError; a Hydra user means n=[3]."""
    proc = _data_prep(
        "build_groups.py",
        "source=sample",
        f"out={tmp_path / 'g'}",
        "n=3",
        "groups=5",
        "val_groups=1",
        "progress=false",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(json.loads((tmp_path / "g" / "manifest.json").read_text())["per_n"]) == ["3"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["n=[three]"], "build_groups: n=['three'] (list): expected a list of integers, e.g. n=[3,4,5]"),
        (["groups=many"], "build_groups: groups='many' (str): expected an integer, e.g. groups=3"),
        (["difficulty.method=length"], "difficulty.method='length' (str): expected one of column, r1_length, rollouts"),
        (["output_dir=somewhere"], "`output_dir=somewhere` is now spelled `out=somewhere`"),
    ],
)
def test_build_groups_bad_option_is_one_line_and_writes_nothing(tmp_path, args, message):
    proc = _data_prep("build_groups.py", "source=sample", f"out={tmp_path / 'g'}", *args, cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 2 and message in text and "Traceback" not in text, text[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_check_config_converts_only_what_the_command_means():
    cfg = {"n": 4, "s": {"t": 1}, "names": "AIME25", "opt": None}
    spec = {"n": "ints", "s.t": "float", "names": "strs?", "opt": "int?", "absent": "int"}
    assert check_config(cfg, spec, "x") == {"n": [4], "s": {"t": 1.0}, "names": ["AIME25"], "opt": None}
    with pytest.raises(ConfigError, match=r"^x: flag=1 \(int\): expected true or false, e.g. flag=true$"):
        check_config({"flag": 1}, {"flag": "bool"}, "x")
    with pytest.raises(ConfigError, match="expected an integer, e.g."):
        check_config({"k": True}, {"k": "int"}, "x")  # a bool is no integer


@pytest.mark.parametrize(
    "argv,new",
    [
        (["run_dir=runs/a"], "`out=runs/a`"),
        (["compare.out_dir=c"], "`out=c`"),
        (["+output=f.parquet"], "`out=f.parquet`"),
        (["--out", "d"], "`out=d`"),
        (["--out=d"], "`out=d`"),
    ],
)
def test_old_output_spellings_name_the_new_one(argv, new):
    with pytest.raises(ConfigError, match=new.replace("[", r"\[")):
        refuse_renamed(argv, "cmd")
    refuse_renamed(["out=d", "model.output_dir_x=1"], "cmd")  # the new spelling and other keys pass


@pytest.mark.parametrize("command", ["demo", "paper", "toy", "gpu-check"])
def test_recipe_commands_refuse_the_old_out_flag(command, capsys):
    assert recipe_main([command, "--out", "x"]) == 2
    assert "`--out x` is now spelled `out=x`" in capsys.readouterr().err


def test_help_lists_every_entry_point(capsys):
    with pytest.raises(SystemExit) as e:
        recipe_main(["--help"])
    text = capsys.readouterr().out
    assert e.value.code == 0
    for entry in [
        "doctor",
        "demo",
        "paper",
        "toy",
        "gpu-check",
        "python -m recipe_bcr.eval",
        "python -m verl.trainer.main_ppo +recipe=bcr",
        "toy --preconditions out=DIR",
        *(f"python -m data_prep.{p.stem}" for p in (REPO / "data_prep").glob("[!_]*.py")),
    ]:
        assert entry in text, entry


def test_paper_help_lists_every_key_of_the_config_paper_runs(capsys):
    """`paper` runs hydra_configs/paper_v3.yaml (the third miniature) by default; its help lists each key with its
    default, and the command's own keys."""
    from omegaconf import OmegaConf

    from recipe_bcr.miniature.paper.command import COMMAND_KEYS

    with pytest.raises(SystemExit):
        recipe_main(["paper", "--help"])
    text = capsys.readouterr().out

    def leaves(node, prefix=""):
        for k, v in node.items():
            yield from leaves(v, f"{prefix}{k}.") if isinstance(v, dict) else [f"{prefix}{k}"]

    def listed(key):  # a flow mapping (`sampling: {temperature: 1.0, ...}`) is listed whole, under its own key
        parts = key.split(".")
        return any(f"  {'.'.join(parts[:i])}=" in text for i in range(1, len(parts) + 1))

    keys = list(leaves(OmegaConf.to_container(OmegaConf.load(REPO / "hydra_configs" / "paper_v3.yaml"))))
    assert keys and [k for k in keys if not listed(k)] == []
    assert [k for k in COMMAND_KEYS if f"  {k} " not in text] == []
    assert "  train_steps=100 " in yaml_keys_help("paper")  # the default, beside the key


def test_toy_preconditions_is_reachable_from_the_recipe_command(monkeypatch):
    from recipe_bcr.miniature import toy_command as toy

    seen = []
    monkeypatch.setattr(toy, "run_preconditions", lambda out, overrides: seen.append((out, overrides)) or 0)
    assert recipe_main(["toy", "--preconditions", "out=pre", "preconditions.problems=8"]) == 0
    assert recipe_main(["toy", "--preconditions"]) == 0
    assert seen == [("pre", ["preconditions.problems=8"]), ("toy_preconditions", [])]


def test_demo_and_gpu_check_take_only_out(monkeypatch):
    from recipe_bcr.miniature import demo

    seen = []
    monkeypatch.setattr(demo, "run_demo", lambda out, rollout: seen.append((out, rollout)) or 0)
    assert recipe_main(["demo", "out=d", "--rollout", "vllm"]) == 0 and recipe_main(["demo"]) == 0
    assert seen == [("d", "vllm"), ("demo_out", None)]
    with pytest.raises(SystemExit):
        recipe_main(["demo", "steps=3"])
