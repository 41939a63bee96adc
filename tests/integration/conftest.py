"""A real ``parlour serve`` process on a free loopback port, for wire-level tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import clean_env, free_port, running, serve_command


@pytest.fixture
def parlour_port(tmp_path: Path) -> Iterator[int]:
    """Port of a fresh ``parlour serve`` (no store); its log goes to tmp_path."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log, running(serve_command(port), port, log, clean_env()):
        yield port
