"""A real ``parlour serve`` process on a free loopback port, for wire-level tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import free_port, running

BIN = Path(sys.executable).parent


@pytest.fixture
def parlour_port(tmp_path: Path) -> Iterator[int]:
    """Port of a fresh ``parlour serve``; its log goes to tmp_path."""
    port = free_port()
    command = [
        str(BIN / "parlour"),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--fish-port",
        "0",
        "--tsuro-port",
        "0",
        "--store",
        "none",
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}
    with (tmp_path / "server.log").open("wb") as log, running(command, port, log, env):
        yield port
