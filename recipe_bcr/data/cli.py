"""Checks shared by the Hydra commands (data_prep/*, `python -m recipe_bcr.eval`) before they write anything:
a renamed key is refused with its new name, and every key's type is checked against a declared spec, so a wrong
type is one line naming the key, the expected type and an example instead of a TypeError deep in the code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# the output folder had five spellings; `out` is the one every command takes
RENAMED = {"output_dir": "out", "output": "out", "run_dir": "out", "compare.out_dir": "out", "--out": "out"}


class ConfigError(ValueError):
    """A command-line key of the wrong type or an old spelling; the message names the key and the fix.
    (Light on purpose: `python -m recipe_bcr --help` uses this module without pandas or Hydra.)"""


def refuse_renamed(argv: Sequence[str], command: str, renamed: Mapping[str, str] = RENAMED) -> None:
    """Refuse `old=value` (also `+old=`, `++old=`, `--out DIR`) with the new spelling, before Hydra parses
    the arguments (Hydra would only say the key is not in the config)."""
    for i, arg in enumerate(argv):
        key, sep, value = arg.lstrip("+").partition("=")
        if key == "--out" and not sep and i + 1 < len(argv):
            value = argv[i + 1]
        if key in renamed and (sep or key.startswith("--")):
            new = renamed[key]
            shown = value or "DIR"
            given = f"--out {value}" if key == "--out" and not sep and value else arg
            raise ConfigError(
                f"{command}: `{given}` is now spelled `{new}={shown}` (one spelling for the output "
                f"folder across commands); rerun with {new}={shown}"
            )


# spec types: int, float, bool, str, ints (a list of ints; one int is read as [int]), strs (likewise), a choice
# "a|b|c"; a trailing "?" allows null
_EXAMPLES = {"int": "3", "float": "0.5", "bool": "true", "str": "NAME", "ints": "[3,4,5]", "strs": "[A,B]"}
_NAMES = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "ints": "a list of integers",
    "strs": "a list of names",
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _coerce(kind: str, value: Any) -> tuple[bool, Any]:
    """(ok, value as the command uses it)."""
    if kind == "int":
        return _is_int(value), value
    if kind == "float":
        return (_is_int(value) or isinstance(value, float)), float(value) if _is_int(value) else value
    if kind == "bool":
        return isinstance(value, bool), value
    if kind == "str":
        return (isinstance(value, str) or _is_int(value) or isinstance(value, float)), str(value)
    if kind == "ints":
        items = [value] if _is_int(value) else value
        ok = isinstance(items, list) and len(items) > 0 and all(_is_int(x) for x in items)
        return ok, items
    if kind == "strs":
        items = [value] if isinstance(value, str) else value
        ok = isinstance(items, list) and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in items)
        return ok, [str(x) for x in items] if ok else items
    choices = kind.split("|")
    return value in choices, value


def check_config(cfg: dict[str, Any], spec: Mapping[str, str], command: str) -> dict[str, Any]:
    """Check a command's resolved config against its declared key types, before anything is written.

    Args:
        cfg: the resolved config (`OmegaConf.to_container(cfg, resolve=True)`); changed in place.
        spec: `{"dotted.key": type}` with type `int`, `float`, `bool`, `str`, `ints`, `strs` or a choice
            `a|b|c`, and a trailing `?` where null is allowed; keys absent from `cfg` are skipped.
        command: the command's name, for the message.

    Returns:
        `cfg`, with values as the command uses them: one int where a list of ints is expected becomes `[int]`
        (`n=3` is `n=[3]`), an int where a number is expected a float.

    Raises:
        ConfigError: the first key of the wrong type, named with its value, the expected type and an example.

    Example:
        >>> check_config({"n": 3, "seed": 0}, {"n": "ints", "seed": "int"}, "build_groups")
        {'n': [3], 'seed': 0}
        >>> check_config({"n": "a"}, {"n": "ints"}, "build_groups")
        Traceback (most recent call last):
        ...
        recipe_bcr.data.cli.ConfigError: build_groups: n='a' (str): expected a list of integers, e.g. n=[3,4,5]
    """
    for key, kind in spec.items():
        node, *path = key.split(".")
        parent = cfg
        for part in [node, *path][:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        leaf = key.split(".")[-1]
        if not isinstance(parent, dict) or leaf not in parent:
            continue
        value, optional = parent[leaf], kind.endswith("?")
        kind = kind.rstrip("?")
        if value is None and optional:
            continue
        ok, used = (False, value) if value is None else _coerce(kind, value)
        if not ok:
            expected = _NAMES.get(kind) or "one of " + ", ".join(kind.split("|"))
            example = _EXAMPLES.get(kind) or kind.split("|")[0]
            raise ConfigError(
                f"{command}: {key}={value!r} ({type(value).__name__}): expected {expected}"
                f"{' or null' if optional else ''}, e.g. {key}={example}"
            )
        parent[leaf] = used
    return cfg


SAMPLING_SPEC = {
    "sampling.k": "int",
    "sampling.temperature": "float",
    "sampling.top_p": "float",
    "sampling.top_k": "int",
    "sampling.min_p": "float",
    "sampling.repetition_penalty": "float",
    "sampling.max_tokens": "int",
    "sampling.seed": "int",
}
ENGINE_SPEC = {
    "engine": "str",
    "engine_options.replicas": "int",
    "engine_options.tensor_parallel_size": "int",
    "engine_options.batch_size": "int",
    "engine_options.max_model_len": "int?",
    "engine_options.gpu_memory_utilization": "float",
    "engine_options.cpu_kv_cache_gib": "int?",
    "engine_options.in_flight": "int?",
    "model.path": "str",
    "model.tokenizer": "str?",
    "model.thinking": "bool",
}


def run_cli(main: Any, command: str) -> None:
    """Run a @hydra.main function after refusing old spellings of its keys (one line, exit 2)."""
    import sys

    try:
        refuse_renamed(sys.argv[1:], command)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    main()
