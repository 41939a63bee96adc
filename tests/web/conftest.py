"""A real ``parlour serve`` and Debian's Chromium driven by Playwright (installed by `make test`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import free_port, running

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    command = [str(Path(sys.executable).parent / "parlour"), "serve", "--port", str(port)]
    command += ["--fish-port", "0", "--tsuro-port", "0", "--robot", "greedy"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as out, running(command, port, out, env):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `make test` installs the chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()
