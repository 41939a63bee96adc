"""Take docs/screenshot.png: the browser client at `/` with an Apologies game against three robots
under way, in Debian's Chromium driven by Playwright (the same launch as tests/web).

    .venv/bin/python tools/screenshot.py [OUT.png]

It starts its own ``parlour serve`` on a free loopback port with no store and stops it after.
Not part of ``make test``: a picture for the README, not a check.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
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
#: Our own turns played before the picture: far enough that pawns are out on the board.
TURNS = 14


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_health(port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as reply:
                if json.load(reply).get("status") == "ok":
                    return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError("parlour serve did not answer GET /healthz")


def play(page: Page, url: str) -> None:
    """Register, advertise a four-seat game, start it with robots, and play some turns."""
    page.goto(f"{url}?pace=0")
    page.fill("[data-testid='handle']", "ada")
    page.click("[data-testid='register-button']")
    page.wait_for_selector("[data-testid='who']:text-is('ada')")
    if page.locator("[data-testid='advertise-box']").get_attribute("open") is None:
        page.click("[data-testid='advertise-toggle']")
    page.fill("[data-testid='game-name']", "Sunday game")
    page.select_option("[data-testid='game-seats']", "4")
    page.click("[data-testid='advertise']")
    page.click("[data-testid='start-game']")
    page.locator("[data-testid='seat-BLUE']").wait_for()
    turns = 0
    deadline = time.monotonic() + 60
    while turns < TURNS and time.monotonic() < deadline:
        if page.locator("[data-testid='banner']").is_visible():
            break
        if page.locator(".turn.mine").count():
            page.click("[data-testid='optimal-move']")
            turns += 1
        page.wait_for_timeout(50)
    page.wait_for_timeout(500)  # let the last robot moves land


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshot.png"
    port = free_port()
    command = [str(Path(sys.executable).parent / "parlour"), "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--fish-port", "0", "--tsuro-port", "0", "--store", "none"]
    command += ["--robot", "greedy"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_health(port)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 880})
            play(page, f"http://127.0.0.1:{port}/")
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
