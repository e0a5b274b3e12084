"""The README's miniature figures, written from the third registration's findings.json (judge_v3), so the README
states what the records state:
`python -m recipe_bcr.miniature.paper.summary [--paper DIR] [--write README.md]` prints (or writes in place, between
the `<!-- miniature-KIND:begin/end -->` markers) the status line and the results.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _verdicts(found: dict[str, Any]) -> dict[str, str]:
    return {k: v["verdict"] for k, v in found["findings"].items()}


def _tokens(found: dict[str, Any], arm: str) -> float:
    return _mean(found["controls"][arm]["tokens_n1"])


ARM_ROWS = (
    ("bcr", "BCR (N=3 under B={B})"),
    ("baseline_n1", "never-binding N=1 baseline"),
    ("truncation_n1", "N=1 under a uniform cap of B/3"),
    ("oracle_cap_n1", "N=1 under an oracle cap by chain length"),
    ("n2", "N=2 under 2B/3"),
)


CATEGORIES = {"inert_recheck": "inert re-check", "useful_recheck_long": "useful re-check on long chains"}


def _ci(f: dict[str, Any], key: str, ci: str, unit: str = " points", digits: int = 1) -> str:
    """A difference with its interval, or "not computed" where the rule stopped before it."""
    if key not in f:
        return "not computed"
    lo, hi = f[ci]
    return f"{f[key]:+.{digits}f}{unit} (90% CI {lo:+.{digits}f}..{hi:+.{digits}f})"


def _at(found: dict[str, Any], arm: str, n: int, field: str, scale: float = 1.0) -> str:
    xs = found["over_n"].get(arm, {}).get(str(n), {}).get(field, [])
    return f"{scale * _mean(xs):.1f}" if xs else "-"


def later_answers(found: dict[str, Any], arm: str = "bcr", ns: tuple[int, ...] = (4, 5)) -> str:
    """Where an arm's answers went beyond its trained N: its accuracy as scored and read under each section's own
    header, and its sections' shares with another problem's label or another question restated (judge_v3's
    by_position); "" for findings without those readings."""
    curve, cells = found["over_n"].get(arm, {}), found.get("by_position", {}).get(arm, {})
    if not all(curve.get(str(n), {}).get("acc_by_header") and cells.get(str(n)) for n in ns):
        return ""

    def share(key: str) -> str:
        return "/".join(f"{100 * _mean([c[key] for c in cells[str(n)]]):.0f}" for n in ns)

    at = "/".join(f"N={n}" for n in ns)
    return (
        f"- **Where BCR's later answers went (not registered):** at {at} its accuracy is "
        f"{'/'.join(_at(found, arm, n, 'acc', 100) for n in ns)}%, and "
        f"{'/'.join(_at(found, arm, n, 'acc_by_header', 100) for n in ns)}% read with every answer under its own "
        f"section's header; {share('other_label')}% of its sections carry another problem's answer label and "
        f"{share('wrong_question')}% restate a question not their own."
    )


def status_line(found: dict[str, Any]) -> str:
    """The status box's miniature bullet."""
    v, f1 = _verdicts(found), found["findings"]["F1"]
    engaged = "engages the mechanism in every seed" if found["interpretable"] else "is not interpretable"
    judged = ", ".join(f"{k} {v[k]}" for k in v)
    cut = 1 - _tokens(found, "bcr") / _tokens(found, "baseline_n1")
    return (
        f"> - **The CPU miniature {engaged}** ({judged}): at N=1 BCR writes {100 * cut:.0f}% fewer tokens than a "
        f"GRPO-trained never-binding baseline, {100 * f1['acc_bcr']:.1f}% accurate against "
        f"{100 * f1['acc_baseline']:.1f}% (seeds as units). Details: [docs/miniature.md](docs/miniature.md)."
    )


def results(found: dict[str, Any]) -> str:
    """The Results section's miniature paragraph, table over N and verdict bullets."""
    c, f, v = found["controls"], found["findings"], _verdicts(found)
    rows = found["preconditions"]["rows"]
    overlap = found["preconditions"]["overlap"]  # None where the base's measurement predates the check
    shared = (
        f"{overlap['any']['count']} of the {overlap['problems']:,} evaluation questions share text with a training or "
        "warm-start group"
        if overlap
        else "the evaluation questions were not checked against training"
    )
    met = sum(g["gates"]["all_met"] for g in found["gates"])
    lines = [
        f"Its base meets {sum(r['met'] for r in rows)} of {len(rows)} pre-registered preconditions; BCR's gates are met "
        f"in {met} of {len(found['gates'])} seeds; {shared}. Every arm "
        f"trained {found['steps']} GRPO steps and was evaluated at N = 1..5; mean over seeds "
        "([benchmarks/paper_v3/report.md](benchmarks/paper_v3/report.md) has each seed):",
        "",
        "| arm | seeds | accuracy N=1 (%) | N=3 (%) | N=5 (%) | tokens per problem N=1 | N=5 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for arm, label in ARM_ROWS:
        if arm in c:
            cells = [_at(found, arm, n, "acc", 100) for n in (1, 3, 5)] + [_at(found, arm, n, "tokens") for n in (1, 5)]
            seeds = len(found["over_n"].get(arm, {}).get("1", {}).get("acc", []))  # evaluated, not only trained
            lines.append(f"| {label.format(B=c['bcr']['budget'])} | {seeds} | " + " | ".join(cells) + " |")
    f1, f2, f3, f4, f5 = f["F1"], f["F2"], f["F3"], f["F4"], f["F5"]
    against = found["against_controls"]
    caps = "; ".join(
        f"{name} {_ci(against.get(arm, {}).get('correct', {}), 'diff', 'ci')}, tokens "
        f"{_ci(against.get(arm, {}).get('tokens', {}), 'diff', 'ci', '')}"
        for arm, name in (("truncation_n1", "the uniform cap"), ("oracle_cap_n1", "the oracle cap"))
    )
    falls = f3.get("falls", {})
    collapses = [f"{name} {p['collapsed_seeds']} of {p['seeds']}" for name, p in f5.get("penalties", {}).items()]
    if "bcr_collapsed" in f5:
        collapses.append(f"BCR {f5['bcr_collapsed']} of {len(found['gates'])}")
    lines += [
        "",
        f"- **Accuracy kept, tokens cut (F1): {v['F1']}.** BCR - baseline at N=1: {_ci(f1, 'diff_pts', 'ci_pts')}; "
        f"tokens per problem {_ci(f1, 'tokens_diff', 'tokens_ci', '')}.",
        f"- **BCR against the caps at N=1 (not registered as a finding):** {caps}.",
        f"- **Over N (F2): {v['F2']}.** BCR's tokens per problem at N = 1..5: "
        f"{', '.join(f'{t:.0f}' for t in f2.get('bcr_tokens_per_problem', [])) or 'not computed'}; its accuracy drop "
        f"from N=1 to N=5 minus the baseline's: {_ci(f2, 'drop_diff_pts', 'drop_diff_ci_pts')}.",
        *filter(None, [later_answers(found)]),
        f"- **Syntactic compression (F3): {v['F3']}.** Tokens per problem, BCR against the base: "
        + ", ".join(f"{CATEGORIES.get(k, k)} {-100 * x:+.0f}%" for k, x in falls.items() if x == x)
        + ".",
        f"- **Budget and length-penalty ablations (F4, F5): {v['F4']}, {v['F5']}.** N=1 tokens per problem per budget "
        f"token: {_ci(f4, 'slope', 'slope_ci', '', 2)}; seeds whose training collapsed: {', '.join(collapses) or 'not computed'}.",
    ]
    return "\n".join(lines)


def blocks(paper: Path) -> dict[str, str]:
    """The status line and the results from `paper`/findings.json; a file that is not judge_v3's, not JSON or
    missing a key is refused with its path, the key and the command that writes it again."""
    path = paper / "findings.json"
    fix = (
        f"`python -m recipe_bcr paper out={paper} registration=paper_v3 part=findings` writes it again from the folder"
    )
    try:
        found = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise ValueError(f"{path}: no such file; --paper names a paper output folder, where {fix}") from e
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e}); {fix}") from e
    if not isinstance(found, dict) or "over_n" not in found:
        raise ValueError(f"{path}: not the findings of a third-registration folder (judge_v3)")
    try:
        return {"status": status_line(found), "results": results(found)}
    except (KeyError, IndexError, TypeError) as e:
        raise ValueError(f"{path}: {type(e).__name__} {e} where the README's blocks read it; {fix}") from e


def fill(text: str, generated: dict[str, str]) -> str:
    """`text` with each marked block replaced by its generated content; a missing marker is an error."""
    for kind, body in generated.items():
        pattern = re.compile(
            rf"(<!-- miniature-{kind}:begin -->)(?:\n.*?)??(\n(?:> )?<!-- miniature-{kind}:end -->)", re.S
        )
        if not pattern.search(text):
            raise ValueError(f"no <!-- miniature-{kind}:begin/end --> markers to fill")
        text = pattern.sub(lambda m: m.group(1) + "\n" + body + m.group(2), text, count=1)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m recipe_bcr.miniature.paper.summary", description=__doc__)
    ap.add_argument("--paper", type=Path, default=ROOT / "benchmarks" / "paper_v3", help="a paper output folder")
    ap.add_argument("--write", type=Path, metavar="README", help="fill the marked blocks of this file in place")
    args = ap.parse_args(argv)
    try:
        generated = blocks(args.paper)
        if args.write:
            new = fill(args.write.read_text(), generated)
            tmp = args.write.with_suffix(".tmp")
            tmp.write_text(new)
            tmp.replace(args.write)
            return 0
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n\n".join(generated.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
