"""Every recipe command the README and docs/ show is spelled as the commands read it today: its keys exist, their
types check, no old spelling (`output_dir=`, `--out DIR`, ...). Composed in process with Hydra's compose API,
as the command would compose it; what it then runs (models, the Hub) is the business of the end-to-end tests."""

import importlib
import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

import recipe_bcr.eval.__main__ as eval_cli
from recipe_bcr.__main__ import _parser
from recipe_bcr.data.cli import check_config, refuse_renamed

ROOT = Path(__file__).resolve().parents[1]
# the README and the docs this suite owns; docs/gpu.md, grading.md and miniature.md join when their owners' work lands
DOCS = [
    ROOT / "README.md",
    *(
        ROOT / "docs" / f"{name}.md"
        for name in ("data", "evaluation", "development", "environment", "benchmarks", "layout")
    ),
]
COMMAND = re.compile(
    r"(?:\.venv/bin/)?python (?:-m )?(data_prep[./]\w+|recipe_bcr\.eval(?![.\w])|recipe_bcr(?![.\w]))(?:\.py)?(.*)"
)


def _commands():
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
        lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
        lines += re.findall(r"`([^`\n]*python[^`\n]*)`", re.sub(r"```.*?```", "", text, flags=re.S))
        for line in lines:
            m = COMMAND.search(line)
            if m and "..." not in m.group(2).split("#")[0]:  # usage lines (`[key=value ...]`)
                found.append(pytest.param(m.group(1), m.group(2), id=f"{doc.name}: {m.group(0)[:80]}"))
    return found


COMMANDS = _commands()


def test_the_docs_show_commands_of_every_kind():
    kinds = {p.values[0].replace("/", ".") for p in COMMANDS}
    assert {
        "data_prep.build_groups",
        "data_prep.build_eval_sets",
        "data_prep.estimate_difficulty",
        "data_prep.calibrate_budget",
        "recipe_bcr.eval",
        "recipe_bcr",
    } <= kinds


@pytest.mark.parametrize("entry,rest", COMMANDS)
def test_doc_command_is_spelled_as_the_command_reads_it(entry, rest):
    args = [a for a in shlex.split(rest, comments=True) if a not in ("&&",)]
    args = args[: args.index("&&")] if "&&" in args else args
    refuse_renamed(args, entry)
    if "--help" in args:
        return
    if entry == "recipe_bcr":
        _parser().parse_args(args)
        return
    name = "eval" if entry == "recipe_bcr.eval" else entry.replace("/", ".").split(".")[1]
    with initialize_config_module("hydra_configs", version_base="1.3"):
        cfg = compose(name, overrides=args)
    if entry == "recipe_bcr.eval":
        eval_cli.checked(cfg)
    else:
        spec = importlib.import_module(f"data_prep.{name}").SPEC
        check_config(OmegaConf.to_container(cfg, resolve=True), spec, name)
