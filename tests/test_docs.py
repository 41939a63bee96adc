"""The README is a front page, and every relative link of the documentation leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_opens_with_the_two_commands_and_stays_short() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = FENCED.search(text)
    assert first is not None and text.index(first[0]) < 20, "the commands come first"
    commands = [line.split("#")[0].strip() for line in first[0].splitlines()[1:-1]]
    assert commands == ["make run", "make test"]
    assert len(text.splitlines()) <= 150, "the README is a front page: move detail to docs/"
    assert "](docs/screenshot.png)" in text
    assert (ROOT / "docs" / "screenshot.png").stat().st_size < 400_000


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(FENCED.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        destination = (page.parent / path) if path else page
        if not destination.exists():
            broken.append(target)
        elif anchor and destination.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", destination.read_text(encoding="utf-8"), re.MULTILINE)
            if anchor not in {_slug(heading) for heading in headings}:
                broken.append(target)
    assert not broken, f"{page.name}: links that lead nowhere: {broken}"
