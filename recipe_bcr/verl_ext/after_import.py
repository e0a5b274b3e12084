"""Run a function right after a module is first imported (at once if it already is).

The Ray setup hook registers the recipe's verl extensions in every worker process, but most of
verl's actors (storage, controller, reward, load balancer, idle workers) never import the modules
those registrations patch, and importing them costs ~6 s of CPU per process (torch, vLLM, verl's
trainer). Deferring each registration to its module's import keeps the hook at ~0.3 s where nothing
needs it and changes nothing where something does: the registration runs before the importer
continues, so nobody sees the module unpatched.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Callable

_PENDING: dict[str, list[Callable[[], None]]] = {}


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds a watched module with the finders after it and wraps its loader's `exec_module`."""

    def find_spec(self, name, path, target=None):
        if name not in _PENDING:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_run(module):
            exec_module(module)
            if module.__name__ == name:  # a loader shared between modules runs this for the others too
                for fn in _PENDING.get(name, []):
                    fn()  # if it raises, the import fails and the registration stays pending: a retry fails again
                _PENDING.pop(name, None)

        loader.exec_module = exec_then_run  # the spec's loader instance (per module for file finders)
        return spec


_FINDER = _AfterImportFinder()


def after_import(module: str, fn: Callable[[], None]) -> None:
    """Call `fn()` once `module` is imported: now if it is, else right after its code has run (an error
    in `fn` fails that import, loudly). Idempotent for the same `fn`."""
    if module in sys.modules:
        fn()
        return
    waiting = _PENDING.setdefault(module, [])
    if fn not in waiting:
        waiting.append(fn)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
