"""The public entry points say their arguments, returns and a runnable example, and the example runs as written."""

import doctest
import importlib
import inspect

import pytest

PUBLIC = [
    ("reward_fns.bcr", "compute_score"),
    ("reward_fns.bcr", "make_trl_reward"),
    ("recipe_bcr.data.pipeline", "build_groups"),
    ("recipe_bcr.engines.factory", "make_engine"),
    ("recipe_bcr.data.cli", "check_config"),
    ("recipe_bcr.grading.verify", "Verifier"),
]


def _docstrings(obj) -> str:
    """A function's docstring; a class's and its public methods' together."""
    parts = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):
        parts += [inspect.getdoc(m) or "" for name, m in vars(obj).items() if callable(m) and not name.startswith("_")]
    return "\n".join(parts)


@pytest.mark.parametrize("module,name", PUBLIC)
def test_entry_point_has_args_returns_and_an_example_that_runs(module, name):
    obj = getattr(importlib.import_module(module), name)
    text = _docstrings(obj)
    assert "Args:" in text and "Returns:" in text and "Example" in text
    finder = doctest.DocTestFinder(recurse=inspect.isclass(obj))
    tests = finder.find(obj, name, globs=vars(importlib.import_module(module)))
    examples = [t for t in tests if t.examples]
    assert examples, f"{module}.{name} has no runnable example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in examples:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
