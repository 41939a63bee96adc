"""Quick play on the accounts page (play.html): two people press "Quick play Fish" and land in
the same game; while the first waits, the page shows the time waited and the rating window."""

from __future__ import annotations

import re
from typing import Any

from .browser_steps import tid
from .conftest import PHONE
from .play_steps import current_game, no_errors, sign_up


def test_two_pages_press_quick_play_for_fish_and_land_in_the_same_game(new_page: Any, url: str) -> None:
    ann, bob = new_page(), new_page(PHONE)
    sign_up(ann, url, "qann")
    sign_up(bob, url, "qbob")
    ann.click(tid("quick-fish"))
    # Waiting: the queue with its rating window (mu 25 +/- 3 for a new player: 1500 +/- 88 on the
    # scale people read, docs/ratings.md) and the time waited, which runs on between the pushes.
    ann.locator(tid("queue-window-fish-2"), has_text="1412 to 1588").wait_for()
    ann.locator(tid("queue-waited-fish-2"), has_text=re.compile(r"0:0[1-9]")).wait_for()
    bob.click(tid("quick-fish"))
    for page in (ann, bob):
        page.locator(tid("board")).wait_for()
        page.locator(tid("notice"), has_text="Quick play found a game of Fish").wait_for()
    game = current_game(ann)
    assert current_game(bob) == game
    assert ann.locator(tid("quick-queues")).locator("li").count() == 0  # no longer waiting
    seats = ann.locator(tid("seats")).inner_text()
    assert "qann" in seats and "qbob" in seats
    no_errors(ann, bob)
