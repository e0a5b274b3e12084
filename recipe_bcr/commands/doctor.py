"""`python -m recipe_bcr doctor`: is this install able to run `main_ppo +recipe=bcr`?
One line per check (recipe_bcr.verl_ext.checks), each failure with its fix."""

from __future__ import annotations

from recipe_bcr.verl_ext.checks import CHECKS, Check


def run() -> int:
    failed = 0
    for check in CHECKS:
        try:
            result = check()
        except Exception as e:  # noqa: BLE001 - a failing check is a finding, not a crash
            result = Check(check.__name__.strip("_").replace("_", " "), False, f"{type(e).__name__}: {e}")
        failed += not result.ok
        print(f"[{'ok' if result.ok else 'FAIL'}] {result.name}: {result.detail}", flush=True)
    print("doctor: all checks passed" if not failed else f"doctor: {failed} check(s) failed")
    return 1 if failed else 0
