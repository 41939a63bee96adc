"""Suite-wide checks."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import PostgresServer, missing_reason

ROOT = Path(__file__).resolve().parents[1]


def compiled_modules() -> list[str]:
    """The modules setup.py compiles with mypyc, by dotted name."""
    listed = re.findall(r'^ *"src/(parlour/[\w/]+)\.py",$', (ROOT / "setup.py").read_text(), re.MULTILINE)
    return [path.replace("/", ".") for path in listed]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test a compiled module older than its source: the test would run stale code."""
    stale = []
    for name in compiled_modules():
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or spec.origin.endswith(".py"):
            continue  # not compiled (PARLOUR_PURE=1): the source itself runs
        source = Path(spec.origin).with_name(name.rsplit(".", 1)[1] + ".py")
        if source.stat().st_mtime > Path(spec.origin).stat().st_mtime:
            stale.append(name)
    if stale:
        pytest.exit(f"compiled modules older than their source: {', '.join(stale)}; run `make install`", 2)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL cluster for the session (about a second to start), for the
    PostgreSQL store's tests; skipped, with the reason, only where its binaries are missing."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    yield server
    server.stop()
