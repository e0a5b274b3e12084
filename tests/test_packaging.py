"""What `pip install .` ships: every package the commands need (data_prep included) and every resource file."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_resource_file_is_package_data():
    """setuptools expands package-data globs from the package folder; a new resource folder must ship too."""
    package = ROOT / "recipe_bcr"
    shipped = {p for pattern in SETUPTOOLS["package-data"]["recipe_bcr"] for p in package.glob(pattern) if p.is_file()}
    files = {p for p in (package / "resources").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert files and sorted(str(p.relative_to(package)) for p in files - shipped) == []


def test_every_top_level_package_with_code_is_found():
    include = SETUPTOOLS["packages"]["find"]["include"]
    tops = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert {"data_prep", "recipe_bcr", "reward_fns", "hydra_configs"} <= tops
    assert sorted(t for t in tops if not any(t == i.rstrip("*") for i in include)) == []
