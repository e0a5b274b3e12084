"""`requires-python` says exactly what the code needs: the newest Python feature the project
uses (syntax, and regular-expression syntax, which `re` checks only at run time) or verl's own
floor, whichever is later. Python 3.10's `re` rejects possessive quantifiers at import, so a
floor below their version would install a reward that cannot import."""

from __future__ import annotations

import ast
import importlib.metadata
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("recipe_bcr", "reward_fns", "data_prep", "hydra_plugins", "benchmarks", "tests")
RE_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
# regular-expression syntax -> the first Python whose `re` accepts it
RE_FEATURES = {"POSSESSIVE_REPEAT": (3, 11), "ATOMIC_GROUP": (3, 11)}


def floor_of(spec: str) -> tuple[int, int]:
    lows = [s.version for s in SpecifierSet(spec) if s.operator in (">=", "~=")]
    assert len(lows) == 1, f"requires-python {spec!r} needs exactly one lower bound"
    major, minor = lows[0].split(".")[:2]
    return int(major), int(minor)


def declared_floor() -> tuple[int, int]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return floor_of(project["requires-python"])


def python_files() -> list[Path]:
    return [p for top in SOURCES for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]


def regex_literals(tree: ast.AST) -> list[str]:
    """Literal patterns handed to `re` functions (the first argument)."""
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RE_CALLS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append(node.args[0].value)
    return out


def regex_needs(pattern: str) -> tuple[int, int]:
    """The first Python whose `re` compiles `pattern` (by the opcodes it parses to)."""
    from re import _parser  # the parser of this (3.11+) Python, which knows the newer opcodes

    need = (3, 0)

    def walk(items) -> None:  # type: ignore[no-untyped-def]
        nonlocal need
        for op, arg in items:
            need = max(need, RE_FEATURES.get(str(op), (3, 0)))
            for part in arg if isinstance(arg, (list, tuple)) else [arg]:
                if isinstance(part, _parser.SubPattern):
                    walk(part)
                elif isinstance(part, (list, tuple)):
                    for sub in part:
                        if isinstance(sub, _parser.SubPattern):
                            walk(sub)

    walk(_parser.parse(pattern))
    return need


def needed_floor() -> tuple[tuple[int, int], list[str]]:
    verl = floor_of(importlib.metadata.metadata("verl")["Requires-Python"])
    need, why = verl, [f"verl {importlib.metadata.version('verl')}: {verl}"]
    for path in python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for pattern in regex_literals(tree):
            version = regex_needs(pattern)
            if version > need:
                need, why = version, []
            if version == need and version > verl:
                why.append(f"{path.relative_to(ROOT)}: {pattern[:40]!r}")
    return need, why


def test_regex_feature_detection_sees_possessive_and_atomic_syntax():
    assert regex_needs(r"[ \t]*+x") == (3, 11)
    assert regex_needs(r"(?>ab|a)c") == (3, 11)
    assert regex_needs(r"(x(?:[ \t]++y)?)") == (3, 11)
    assert regex_needs(r"[ \t]*x(\d+)") == (3, 0)


def test_requires_python_is_what_the_code_needs():
    need, why = needed_floor()
    assert declared_floor() == need, f"requires-python floor should be {need}: " + "; ".join(why[:3])


def test_every_file_parses_as_the_floor_python():
    floor = declared_floor()
    for path in python_files():
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=floor)
