"""The Makefile's second phase of ``make test`` collects only the files it names (``ALONE``): every
file with a test marked ``alone`` must be among them, or that test would run in neither phase."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_with_tests_marked_alone_is_named_in_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    named = re.search(r"^ALONE := (.*)$", makefile, re.MULTILINE)
    assert named, "the Makefile names the files of the tests marked alone"
    marked = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("test_*.py")
        if re.search(
            r"^pytestmark = pytest\.mark\.alone|@pytest\.mark\.alone", path.read_text(encoding="utf-8"), re.M
        )
    }
    assert marked == set(named[1].split())
    assert len(marked) >= 2
