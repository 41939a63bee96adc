"""Take docs/screenshot.png: the browser client at `/` with an Apologies game against three robots
under way, in Debian's Chromium driven by Playwright, launched as tests/web launches it.

    .venv/bin/python tools/screenshot.py [OUT.png]

It starts its own ``parlour serve`` on a free loopback port with no store and stops it after.
Not part of ``make test``: a picture for the README, not a check.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.processes import clean_env, free_port, running, serve_command
from tests.web.browser_steps import advertise, my_turn, over, register, tid
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

#: Our own turns played before the picture: far enough that pawns are out on the board.
TURNS = 14
#: The tests' laptop width, a little taller so that the whole board and the lobby show.
VIEWPORT: ViewportSize = {"width": 1280, "height": 880}


def play(page: Page, url: str) -> None:
    """Register, advertise a four-seat game, start it with robots, and play some turns."""
    register(page, url, "ada")
    advertise(page, "Sunday game", seats=4)
    page.click(tid("start-game"))
    page.locator(tid("seat-BLUE")).wait_for()
    turns = 0
    deadline = time.monotonic() + 60
    while turns < TURNS and time.monotonic() < deadline and not over(page):
        if my_turn(page):
            page.click(tid("optimal-move"))
            turns += 1
        page.wait_for_timeout(50)
    page.wait_for_timeout(500)  # let the last robot moves land


def main() -> None:
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "docs" / "screenshot.png"
    )
    port = free_port()
    server = running(serve_command(port, "--robot", "greedy"), port, env=clean_env())
    with server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        play(page, f"http://127.0.0.1:{port}/")
        page.screenshot(path=str(out))
        browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
