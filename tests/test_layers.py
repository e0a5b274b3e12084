"""The layers of the code import one way, with no cycle, counting imports inside functions and
module paths named in strings (`python -m ...` subprocesses, registry targets, `pkg://`).

    grading <- data <- engines <- eval <- verl edge <- commands <- miniature <- cli

The recipe (grading .. commands) never imports the miniature (the toy task and model, the demo, the GPU
check and the paper commands); only the `python -m recipe_bcr` entry point and the benchmarks sit above it.

A module may import its own layer and those before it; a third-party heavyweight only from the
first layer that needs it on (the grading core imports no verl, torch, pandas or Hydra).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("recipe_bcr", "reward_fns", "data_prep", "hydra_plugins", "benchmarks")
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("grading", ("recipe_bcr.grading",)),
    ("data", ("recipe_bcr.data",)),
    ("engines", ("recipe_bcr.engines",)),
    ("eval", ("recipe_bcr.eval",)),
    ("verl edge", ("recipe_bcr.verl_ext", "reward_fns", "hydra_plugins")),
    ("commands", ("recipe_bcr.commands", "data_prep")),
    ("miniature", ("recipe_bcr.miniature",)),
    ("cli", ("recipe_bcr.__main__", "benchmarks")),
]
# third-party packages and the lowest layer that may import them
LOWEST = {
    "verl": "verl edge",
    "vllm": "engines",
    "ray": "engines",
    "torch": "engines",
    "transformers": "data",
    "pandas": "data",
    "pyarrow": "data",
    "hydra": "eval",
    "omegaconf": "eval",
}
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
OURS = ("recipe_bcr", "reward_fns", "data_prep", "hydra_plugins")
MODULE_STRING = re.compile(r"(?:pkg://)?((?:recipe_bcr|reward_fns)(?:\.\w+)+)(?::\w+)?")  # a whole string


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str | None:
    for name, prefixes in LAYERS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return name
    return None


def imports_of(source: str, module: str, is_package: bool) -> set[str]:
    """Every module `source` imports anywhere (module level or in a function), and every string
    constant that is a module of ours (a `-m` argument, a registry or `pkg://` target)."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.update(f"{base}.{alias.name}" for alias in node.names)  # resolved up to a module later
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if m := MODULE_STRING.fullmatch(node.value):  # `-m module`, registry and pkg:// targets
                found.add(m.group(1))
    return found


def project_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports (names resolved to existing modules)."""
    files = {
        module_name(p, root): p for top in SOURCES for p in (root / top).rglob("*.py") if "__pycache__" not in p.parts
    }
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = set()
        for name in imports_of(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            while name and name not in files:  # `pkg.module.attr` -> `pkg.module`
                name = name.rpartition(".")[0]
            if name and name != module and name != "recipe_bcr":
                targets.add(name)
        graph[module] = targets
    return graph


def third_party_of(root: Path = ROOT) -> dict[str, set[str]]:
    out = {}
    for top in SOURCES:
        for path in (root / top).rglob("*.py"):
            module = module_name(path, root)
            names = imports_of(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
            out[module] = {n.split(".")[0] for n in names if n.split(".")[0] in LOWEST}
    return out


def order_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            mine, theirs = layer_of(module), layer_of(target)
            if mine is not None and theirs is not None and RANK[theirs] > RANK[mine]:
                bad.append(f"{module} ({mine}) imports {target} ({theirs})")
    return bad


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


GRAPH = project_graph()


def test_every_module_belongs_to_a_layer():
    assert [m for m in GRAPH if layer_of(m) is None and m != "recipe_bcr"] == []


def test_imports_point_one_way():
    assert order_violations(GRAPH) == []


def test_no_import_cycle():
    assert find_cycle(GRAPH) is None


@pytest.mark.parametrize("package", sorted(LOWEST))
def test_heavy_dependencies_stay_in_their_layers(package):
    offenders = [
        m for m, used in third_party_of().items() if package in used and RANK[layer_of(m)] < RANK[LOWEST[package]]
    ]
    assert offenders == [], f"{package} imported below the {LOWEST[package]} layer"


def imports_by_name(source: str) -> list[int]:
    """Lines that import a module named at run time (`import_module(...)`, `__import__(...)`): an import this test
    cannot see, which can hide a cycle."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                lines.append(node.lineno)
    return lines


def test_the_grading_core_imports_no_module_by_name():
    offenders = {
        path.relative_to(ROOT).as_posix(): found
        for path in sorted((ROOT / "recipe_bcr" / "grading").rglob("*.py"))
        if (found := imports_by_name(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_an_import_by_name_is_caught():
    planted = 'from importlib import import_module\n\ndef f(k):\n    return import_module(f"recipe_bcr.{k}")\n'
    assert imports_by_name(planted) == [4]
    assert imports_by_name("import importlib\nx = importlib.import_module('a')\ny = __import__('b')\n") == [2, 3]


def test_the_checks_catch_a_backward_import_a_cycle_and_a_string_target(tmp_path):
    """The same checks on a small tree with each fault planted: they must report all three."""
    for top in SOURCES:
        (tmp_path / top).mkdir()
    pkg = tmp_path / "recipe_bcr"
    for sub in ("grading", "data", "eval"):
        (pkg / sub).mkdir()
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "grading" / "verify.py").write_text("def f():\n    from recipe_bcr.data.io import x\n")
    (pkg / "data" / "io.py").write_text("from recipe_bcr.grading.verify import f\n")
    (pkg / "data" / "runner.py").write_text("CMD = ['-m', 'recipe_bcr.eval.main']\n")
    (pkg / "eval" / "main.py").write_text("from . import helper\n")
    (pkg / "eval" / "helper.py").write_text("")
    graph = project_graph(tmp_path)
    assert graph["recipe_bcr.eval.main"] == {"recipe_bcr.eval.helper"}
    assert order_violations(graph) == [
        "recipe_bcr.data.runner (data) imports recipe_bcr.eval.main (eval)",
        "recipe_bcr.grading.verify (grading) imports recipe_bcr.data.io (data)",
    ]
    assert find_cycle(graph) == ["recipe_bcr.data.io", "recipe_bcr.grading.verify", "recipe_bcr.data.io"]


def test_layout_doc_names_every_module():
    """docs/layout.md's table is drawn from this tree: each package's row names each of its modules."""
    layout = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1]: line for line in layout.splitlines() if line.startswith("| `")}
    missing = []
    for path in sorted((ROOT / "recipe_bcr").rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        folder = path.parent.relative_to(ROOT).as_posix() + "/"
        row = rows.get(folder) or rows.get(path.relative_to(ROOT).as_posix(), "")
        if f"`{path.name}`" not in row and not (path.name == "__main__.py" and folder == "recipe_bcr/"):
            missing.append(path.relative_to(ROOT).as_posix())
    assert missing == []
