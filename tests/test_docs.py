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


#: What the repository's text never says: the history of its work items, or a document outside it
#: (spelled in pieces so that this file does not match itself). The protocol notes Parlour was
#: built from live elsewhere: what a reader needs of them is in docs/, in the project's words.
#: ``docs/tsuro-protocol.md`` is the repository's own, so a Tsuro spec is not forbidden by name.
ELSEWHERE = re.compile(
    "|".join(
        [
            r"\b[Ii]ssue #?\d+",
            r"\.\./" + "shared",
            "scalable-" + r"server-\w+\.(md|rst)",
            r"\b[Ww]ire[- ]" + "notes",
            "fish-tsuro-" + "notes",
            "fish-player-" + "protocol",
            "apologies-event-" + "model",
            r"\bevent-" + r"model\.rst",
            "apologies-" + r"rules\.md",
            r"\b[Rr]ules " + r"sections? \d",
        ]
    )
)
#: The Tsuro specification Parlour was built from, named without the repository's ``docs/``.
TSURO_SPEC = re.compile(r"(?<![\w/-])tsuro-" + r"protocol\.md")


def test_the_repository_cites_only_itself_and_tells_no_history() -> None:
    """Docs, code and tests describe the project as it is, each citing only what the repository
    holds: a fresh clone anywhere reads (and passes) on its own."""
    found = []
    folders = ("src", "docs", "tests", "bench", "tools", "examples", "deploy")
    suffixes = {".py", ".md", ".rst", ".js", ".mjs", ".html", ".css", ".svg", ".txt", ".sh", ".toml"}
    suffixes |= {".cfg", ".ini", ".json", ".yml", ".yaml", ".service", ".conf"}
    top = ("README.md", "Makefile", "pyproject.toml", "Dockerfile", "setup.py")
    files = [ROOT / name for name in top if (ROOT / name).is_file()]
    files += [
        path
        for folder in folders
        for path in (ROOT / folder).rglob("*")
        if path.suffix in suffixes and path.is_file()
    ]
    assert any(path.suffix == ".js" for path in files), "the page's scripts are read too"
    for path in files:
        # Outside docs/, the repository's own Tsuro page is named by its path: a bare name is
        # the original project's specification.
        bare = TSURO_SPEC if path.parent != ROOT / "docs" else None
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if ELSEWHERE.search(line) or (bare and bare.search(line)):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_design_page_is_short_enough_to_read_before_coding() -> None:
    lines = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
