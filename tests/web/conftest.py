"""The browser client against a real server, in Debian's Chromium driven by Playwright.

The server is ``parlour serve`` on a free loopback port (ready once ``GET /healthz`` answers). Only
when Parlour's Apologies protocol is missing (early development), or PARLOUR_WEB_SERVER=reference
asks for it, is the reference pair used: the
reference ``apologies-server`` plus a static file server for ``src/parlour/web``, the page being told
where the websocket is with ``?ws=``. Chromium comes from the distribution (``make test`` installs it);
no browser build is ever downloaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.processes import free_port, started, wait_for_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "src" / "parlour" / "web"
SCREENSHOTS = ROOT / "build" / "screenshots"
BIN = Path(sys.executable).parent
LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


@dataclass(frozen=True)
class WebServer:
    url: str  # the page to open
    kind: str  # "parlour" or "reference"


@contextmanager
def _process(command: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}
    with log.open("wb") as out, started(command, out, env) as process:
        yield process


def _wait_for_health(process: subprocess.Popen[bytes], port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"parlour serve exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as reply:
                if json.load(reply).get("status") == "ok":
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("parlour serve did not answer GET /healthz")
        time.sleep(0.05)


def _serve_parlour(stack: ExitStack, logs: Path, store: str) -> WebServer:
    """``parlour serve`` on a free port for the duration of ``stack``; ``store`` is its --store."""
    port = free_port()
    # The greedy robot (the reference's strategy) keeps robot seats and OPTIMAL_MOVE quick.
    command = [str(BIN / "parlour"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--fish-port", "0", "--tsuro-port", "0", "--robot", "greedy", "--store", store]
    # The scripted clients that make records for the lists play as fast as the server answers,
    # faster than the per-connection default a person never reaches.
    command += ["--requests-per-second", "1000"]
    process = stack.enter_context(_process(command, logs / "parlour.log"))
    _wait_for_health(process, port)
    return WebServer(f"http://127.0.0.1:{port}/", "parlour")


# One server, one stored server and one browser for the whole of tests/web ("package" scope):
# starting them once per module cost more than many of the tests. Tests use handles and account
# names of their own, so they do not meet in the shared lobbies.
@pytest.fixture(scope="package")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    logs = tmp_path_factory.mktemp("web-server")
    with ExitStack() as stack:
        # PARLOUR_WEB_SERVER=reference runs the page against the reference server on purpose.
        wanted = os.environ.get("PARLOUR_WEB_SERVER", "parlour")
        if wanted == "parlour" and importlib.util.find_spec("parlour.protocols.apologies_ws") is not None:
            yield _serve_parlour(stack, logs, "none")
        else:
            ws_port, http_port = free_port(), free_port()
            reference = [str(BIN / "apologies-server"), "--override", f"server_port:{ws_port}"]
            files = [sys.executable, "-m", "http.server", str(http_port), "--bind", "127.0.0.1"]
            server = stack.enter_context(_process(reference, logs / "reference.log"))
            static = stack.enter_context(_process([*files, "--directory", str(WEB)], logs / "static.log"))
            wait_for_port(server, ws_port)
            wait_for_port(static, http_port)
            yield WebServer(f"http://127.0.0.1:{http_port}/?ws=ws://localhost:{ws_port}/", "reference")


@pytest.fixture(scope="package")
def stored_web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """Parlour keeping its records in a fresh SQLite store (``--store <tmp>/web.db``), so that the
    HTTP API (/api/games) answers. The reference server has no such API: tests using this skip
    when PARLOUR_WEB_SERVER=reference asks for it."""
    if os.environ.get("PARLOUR_WEB_SERVER", "parlour") != "parlour":
        pytest.skip("the reference server keeps no game records")
    logs = tmp_path_factory.mktemp("stored-web-server")
    with ExitStack() as stack:
        yield _serve_parlour(stack, logs, str(logs / "web.db"))


# Per package, not per session: Playwright's sync API keeps an event loop running in this thread
# while it is open, and tests outside tests/web call asyncio.run.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `make test` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """Pages in contexts of their own (own localStorage, like separate browsers). Script or console
    errors on any page fail the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def make(viewport: dict[str, int] | None = None, expected_errors: str | None = None) -> Any:
        """``expected_errors``: a regular expression of console errors the test provokes on
        purpose (a failed API answer is logged by Chromium as a failed load)."""
        context = browser.new_context(viewport=viewport or LAPTOP, reduced_motion="reduce")
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))

        # Console errors include failed loads (a missing module or stylesheet answers 404).
        def console(message: Any) -> None:
            if message.type != "error":
                return
            if expected_errors is None or not re.search(expected_errors, message.text):
                errors.append(message.text)

        page.on("console", console)
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, f"script errors in the page: {errors}"


@pytest.fixture
def url(web_server: WebServer) -> str:
    """The address of the shared server, for the tests of the /async page (Parlour only)."""
    if web_server.kind != "parlour":
        pytest.skip("the reference server has no /async protocol")
    return str(web_server.url)
