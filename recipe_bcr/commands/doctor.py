"""`python -m recipe_bcr doctor`: is this install able to run `main_ppo +recipe=bcr`?
One line per check (recipe_bcr.verl_ext.checks), each failure with its fix; then, for every
device x rollout pair it can run, every import that pair's composed config needs."""

from __future__ import annotations

from recipe_bcr.verl_ext.checks import CHECKS, Check, runtime_checks


def run() -> int:
    failed = 0
    for check in [*CHECKS, runtime_checks]:
        try:
            results = check()
        except Exception as e:  # noqa: BLE001 - a failing check is a finding, not a crash
            results = Check(check.__name__.strip("_").replace("_", " "), False, f"{type(e).__name__}: {e}")
        for result in results if isinstance(results, list) else [results]:
            failed += not result.ok
            status = "info" if result.info else "ok" if result.ok else "FAIL"
            print(f"[{status}] {result.name}: {result.detail}", flush=True)
    print("doctor: all checks passed" if not failed else f"doctor: {failed} check(s) failed")
    return 1 if failed else 0
