"""The browser client in headless Chromium: whole games by clicking, robots, reloads."""

from __future__ import annotations

import time
from typing import Any

from .conftest import SCREENSHOTS


def register(page: Any, url: str, handle: str) -> None:
    page.goto(url)
    page.fill("#handle", handle)
    page.click("#register-button")
    page.wait_for_selector(f"text=You are {handle}")


def play_one_turn(page: Any) -> None:
    """Click a movable pawn and a destination (or a listed choice, e.g. a forfeit)."""
    choices = page.locator("[data-testid=choice]")
    pawns = page.locator(".pawn.movable")
    if pawns.count() == 0:
        choices.first.click()
        return
    pawns.first.click()
    page.locator("[data-testid=target]").first.click()
    if page.locator("#turn").inner_text().startswith("Your turn") and choices.count():
        choices.first.click()


def test_two_pages_play_a_whole_game_by_clicking(browser: Any, server_url: str) -> None:
    first, second = browser.new_page(), browser.new_page(viewport={"width": 390, "height": 844})
    register(first, server_url, "ann")
    register(second, server_url, "bob")
    first.click("#advertise-box summary")
    first.fill("#game-name", "Clicks")
    first.select_option("#game-seats", "2")
    first.click("#advertise")
    second.click("#refresh")
    second.locator("[data-testid=join]").first.click()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    first.screenshot(path=str(SCREENSHOTS / "lobby.png"), full_page=True)
    deadline = time.monotonic() + 150
    turns = 0
    while time.monotonic() < deadline:
        if first.locator("#banner").is_visible() and second.locator("#banner").is_visible():
            break
        for page in (first, second):
            if page.locator("#turn").inner_text().startswith("Your turn"):
                play_one_turn(page)
                turns += 1
                if turns == 20:
                    first.screenshot(path=str(SCREENSHOTS / "game.png"), full_page=True)
                    second.screenshot(path=str(SCREENSHOTS / "game-phone.png"), full_page=True)
        time.sleep(0.01)
    assert "Game over" in first.locator("#banner").inner_text()
    assert "Game over" in second.locator("#banner").inner_text()
    assert turns > 20
    first.close()
    second.close()


def test_a_page_plays_robots_to_the_end(browser: Any, server_url: str) -> None:
    page = browser.new_page()
    register(page, server_url, "cat")
    page.click("#advertise-box summary")
    page.select_option("#game-mode", "ADULT")
    page.click("#advertise")
    page.click("#start")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not page.locator("#banner").is_visible():
        if not page.locator("#optimal").is_disabled():
            page.click("#optimal")
        time.sleep(0.01)
    assert "Game over" in page.locator("#banner").inner_text()
    assert page.locator("#history li").count() >= 1
    page.close()


def test_a_reload_reconnects_with_the_same_player(browser: Any, server_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    register(page, server_url, "dan")
    player_id = page.evaluate("localStorage.getItem('parlour.player_id')")
    page.click("#advertise-box summary")
    page.click("#advertise")
    page.click("#start")
    page.wait_for_selector("#turn:has-text('Your turn')")
    page.reload()
    # REREGISTER_PLAYER brings the same handle and id back; leaving the page was a disconnect, which
    # (by the protocol) took the advertiser out of its game and cancelled it.
    page.wait_for_selector("text=You are dan")
    assert page.evaluate("localStorage.getItem('parlour.player_id')") == player_id
    assert page.locator("#register").is_hidden()
    page.click("#refresh")
    page.wait_for_selector("#players li")
    assert "dan (waiting, connected)" in page.locator("#players").inner_text()
    context.close()


def test_errors_are_shown_in_words(browser: Any, server_url: str) -> None:
    page = browser.new_page()
    register(page, server_url, "eve")
    other = browser.new_page()
    other.goto(server_url)
    other.fill("#handle", "eve")
    other.click("#register-button")
    other.wait_for_selector("#error:has-text('duplicate user')")
    assert "Handle is already in use" in other.locator("#error").inner_text()
    page.close()
    other.close()
