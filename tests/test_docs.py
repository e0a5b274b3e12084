"""The README a verl user reads in five minutes, and the docs beside it: short, current, every link resolves."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(md: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in md.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_readme_is_short_and_gpu_training_comes_early():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    first = next(i for i, line in enumerate(lines) if line.startswith("python -m verl.trainer.main_ppo +recipe=bcr"))
    assert first < 100


def test_readme_prose_has_no_dates_times_or_commit_hashes():
    text = README.read_text(encoding="utf-8")
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b|\b\d\d:\d\d UTC\b|\b(?:commit|on|main) [0-9a-f]{7,40}\b", text) == []


def test_every_relative_link_in_readme_and_docs_resolves():
    broken = []
    for md in [README, *DOCS]:
        text = md.read_text(encoding="utf-8")
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if not dest.exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                broken.append(f"{md.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_readme_links_each_doc():
    text = README.read_text(encoding="utf-8")
    assert [d.name for d in DOCS if f"docs/{d.name}" not in text] == []
