"""Whole games in the browser: two pages clicking, a page against robots, reloads mid-game."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from .browser_steps import (
    advertise,
    host_and_guest,
    join,
    my_turn,
    over,
    paced,
    play_optimal_until_over,
    play_turn_by_clicking,
    register,
    screenshot,
    tid,
    turn_state,
)
from .conftest import PHONE

# Said once: the winner and the number of turns (not "You won! Player gil won after 40 turns").
WON = re.compile(r"^(You won after \d+ turns!|Game over: \S+ won after \d+ turns\.)$")


def test_two_pages_play_a_whole_game_by_clicking(new_page: Any, web_server: Any) -> None:
    ann, bob = new_page(), new_page(PHONE)
    register(ann, web_server.url, "gil")
    register(bob, web_server.url, "hal")
    advertise(ann, "Clicks", seats=2)
    join(bob, "Clicks")  # the second seat fills the game: it starts at once
    deadline = time.monotonic() + 55
    # gil picks pawns and destinations for its first 16 turns, then presses "Optimal move" like
    # hal (on a phone) all along: every kind of click is made, and the game still ends soon.
    clicks: dict[str, int] = {"move": 0, "choice": 0, "forfeit": 0, "optimal": 0}
    shot = False
    while True:
        states = {page: turn_state(page) for page in (ann, bob)}
        if all(over_now for over_now, _ in states.values()):
            break
        assert time.monotonic() < deadline, f"no end after {clicks}"
        for page in (ann, bob):
            if not states[page][1] or (page is bob and not my_turn(page)):
                continue
            if (
                not shot
                and page is ann
                and sum(clicks.values()) >= 12
                and page.locator(".pawn.movable").count()
            ):
                # Mid-game, with a pawn picked and its destinations ringed.
                page.locator(".pawn.movable").first.click()
                page.locator(tid("target")).first.wait_for()
                screenshot(ann, "game.png")
                screenshot(bob, "game-phone.png")
                # The phone-sized page has no sideways scrolling.
                assert bob.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
                shot = True
                # Unpick, then play as usual. Dispatched on the pawn itself: a move may end where
                # the pawn stands (4 back onto a slide that brings it back), and its target ring
                # then covers the pawn.
                page.locator(".pawn.selected").dispatch_event("click")
            # By hand until five real moves were clicked: a bad run of cards forfeits a while.
            by_hand = sum(clicks[k] for k in ("move", "choice", "forfeit"))
            if page is bob or (shot and by_hand >= 16 and clicks["move"] >= 5):
                page.click(tid("optimal-move"))
                clicks["optimal"] += 1
                continue
            clicks[play_turn_by_clicking(page)] += 1
        ann.wait_for_timeout(5)
    assert shot
    assert clicks["move"] + clicks["choice"] + clicks["forfeit"] >= 16 and clicks["move"] >= 5, clicks
    for page in (ann, bob):
        assert WON.search(page.locator(tid("banner")).inner_text())
        assert page.locator(tid("turn")).inner_text() == "Game over"
        assert page.locator(tid("close-game")).is_visible()
    # The winner's four pawns are home on both boards.
    winner = "RED" if "You won" in ann.locator(tid("banner")).inner_text() else "YELLOW"
    for page in (ann, bob):
        homes = page.locator(f"[data-testid^='pawn-{winner}-'][data-position='home']")
        assert homes.count() == 4
        # The final standings: the winner first with four pawns home, then the other.
        first, second = (page.locator(tid(f"standing-{n}")).inner_text() for n in (1, 2))
        assert first.split("\t")[1:3] == [{"RED": "gil", "YELLOW": "hal"}[winner], "4/4"], first
        assert second.split("\t")[1] == {"RED": "hal", "YELLOW": "gil"}[winner], second
    screenshot(ann, "classic-outcome.png")
    screenshot(bob, "classic-outcome-phone.png")
    # A rematch: the same table again, the other player invited.
    assert ann.locator(tid("rematch")).inner_text() == "Rematch: invite hal"
    ann.click(tid("rematch"))
    bob.locator(tid("message-invite"), has_text="gil invites you to “Clicks”").wait_for()
    ann.locator(tid("turn"), has_text="Waiting for players").wait_for()
    ann.click(tid("cancel-game"))


def test_a_page_plays_robots_to_the_end(new_page: Any, web_server: Any) -> None:
    page = new_page()
    register(page, web_server.url, "ivy")
    advertise(page, "Robots", seats=4)
    page.click(tid("start-game"))
    page.locator(tid("seat-BLUE")).wait_for()
    seats = page.locator(tid("seats")).inner_text()
    assert seats.count("robot") == 3
    # Sixteen pawns, each drawn in its colour.
    pawns = page.locator("[data-testid^='pawn-']")
    assert pawns.count() == 16
    fills = page.evaluate(
        """() => [...document.querySelectorAll("[data-testid^='pawn-']")].map(
            (g) => [g.dataset.color, g.querySelector('.body').getAttribute('fill')])"""
    )
    colours = {colour: {fill for c, fill in fills if c == colour} for colour, _ in fills}
    assert set(colours) == {"RED", "YELLOW", "GREEN", "BLUE"}
    assert all(len(f) == 1 for f in colours.values())
    assert len({next(iter(f)) for f in colours.values()}) == 4
    # One move with the keyboard alone: Tab-focusable pawns and destinations, Enter to choose.
    deadline = time.monotonic() + 20
    moved = None
    while moved is None:
        assert time.monotonic() < deadline and not over(page)
        if not my_turn(page):
            page.wait_for_timeout(5)
            continue
        pawn = page.locator(".pawn.movable").first
        if not pawn.count():
            page.click(tid("optimal-move"))  # nothing to move: let the server discard
            continue
        name = pawn.get_attribute("data-testid")  # before the move: locators are lazy
        pawn.focus()
        page.keyboard.press("Enter")
        target = page.locator(tid("target")).first
        target.focus()
        place = target.get_attribute("data-position").replace("-", " ")
        page.keyboard.press("Enter")
        if my_turn(page) and page.locator(tid("choice")).count():
            page.locator(tid("choice")).first.focus()
            page.keyboard.press("Enter")
        moved = f"Red{name[-1]} → {place}"
    page.locator(f"{tid('history')} li", has_text=moved).first.wait_for()
    presses = play_optimal_until_over(page, 50)
    assert presses > 5
    assert WON.search(page.locator(tid("banner")).inner_text())
    assert page.locator(f"{tid('history')} li").count() >= 2
    # The history names the winner, not a colour.
    ending = re.match(r"Game completed: (\S+) won after \d+ turns", page.locator(tid("history")).inner_text())
    assert ending and ending[1] in seats, ending


def test_a_reload_mid_game_reregisters_the_same_player(new_page: Any, web_server: Any) -> None:
    host, guest = host_and_guest(new_page, web_server.url, ("jon", "kim"), "Reloaded", seats=3)
    host.locator(tid("seats"), has_text="kim").wait_for()
    host.click(tid("start-game"))  # a robot takes the third seat
    guest.locator("[data-testid^='pawn-YELLOW-']").first.wait_for()
    stored = guest.evaluate("localStorage.getItem('parlour.apologies.player_id')")

    guest.reload()
    # REREGISTER_PLAYER with the stored id: the same player and handle come back.
    guest.locator(tid("who"), has_text="kim").wait_for()
    assert guest.evaluate("localStorage.getItem('parlour.apologies.player_id')") == stored
    assert guest.locator(tid("register")).is_hidden()
    # Closing the page was a disconnect, which took kim out of the game (6.16); with Parlour's fix of
    # 7.5 nothing more of that game reaches kim, whose seat a robot now plays.
    notice = guest.locator(tid("notice"))
    notice.wait_for()
    assert "took you out of “Reloaded”" in notice.inner_text()
    assert guest.locator(tid("game")).is_hidden()
    guest.locator(f"{tid('player-kim')} .badge", has_text="waiting").wait_for()

    host.locator(tid("messages"), has_text="Player kim disconnected").wait_for()
    host.locator(tid("seat-YELLOW"), has_text="left: robot plays").wait_for()
    assert host.locator(tid("banner")).is_hidden()
    # The game goes on against the robot that took kim's seat, to its end.
    play_optimal_until_over(host, 55)
    assert WON.search(host.locator(tid("banner")).inner_text())
    assert guest.locator(tid("game")).is_hidden()


def test_a_reload_leaving_one_player_cancels_the_game(new_page: Any, web_server: Any) -> None:
    host, guest = host_and_guest(new_page, web_server.url, ("oli", "pam"), "Pair", seats=2)
    guest.locator("[data-testid^='pawn-YELLOW-']").first.wait_for()
    guest.reload()
    guest.locator(tid("who"), has_text="pam").wait_for()
    # Fewer than two seats still playing: the game is not viable (NOT_VIABLE).
    banner = host.locator(tid("banner"))
    banner.wait_for()
    assert banner.inner_text() == "Game cancelled: too few players left (Player pam disconnected)."


def test_the_advertiser_reloading_cancels_its_game(new_page: Any, web_server: Any) -> None:
    host, guest = host_and_guest(new_page, web_server.url, ("lea", "max"), "Fragile", seats=2)
    host.reload()
    host.locator(tid("who"), has_text="lea").wait_for()
    host.locator(tid("notice"), has_text="took you out of “Fragile”").wait_for()
    banner = guest.locator(tid("banner"))
    banner.wait_for()
    assert banner.inner_text() == "Game cancelled: cancelled by its advertiser (Player lea disconnected)."


def test_an_adult_hand_filters_the_moves(new_page: Any, web_server: Any) -> None:
    page = new_page()
    register(page, web_server.url, "ned")
    advertise(page, "Hands", seats=2, mode="ADULT")
    page.click(tid("start-game"))
    page.locator(tid("hand-card")).first.wait_for()
    assert page.locator(tid("hand-card")).count() == 5
    deadline = time.monotonic() + 30
    played = 0
    while played < 6:
        assert time.monotonic() < deadline and not over(page)
        if not my_turn(page):
            page.wait_for_timeout(5)
            continue
        playable = page.locator(f"{tid('hand-card')}:not([disabled])")
        if playable.count():
            card = playable.first.get_attribute("data-card")
            playable.first.click()
            # Only that card's moves remain: every listed choice and every destination uses it.
            selected = page.locator(f"{tid('hand-card')}.selected")  # duplicates of it too
            assert {selected.nth(i).get_attribute("data-card") for i in range(selected.count())} == {card}
            page.locator(".pawn.movable").first.click()
            targets = page.locator(tid("target"))
            targets.first.wait_for()
            assert {targets.nth(i).get_attribute("data-cards") for i in range(targets.count())} == {card}
            targets.first.click()
            # Read hint and choices at once: after a played 2, a new turn may follow quickly.
            hint, choices = page.evaluate(
                """() => [document.getElementById('hint').textContent,
                    [...document.querySelectorAll("[data-testid='choice']")].map((b) => b.textContent)]"""
            )
            if hint.startswith("Several moves"):
                face = "A" if card == "CARD_APOLOGIES" else card.replace("CARD_", "")
                assert len(choices) > 1
                assert all(text.startswith(f"{face}:") for text in choices)
                page.locator(tid("choice")).first.click()
        else:
            page.locator(tid("choice")).first.click()  # nothing playable: discard
        played += 1
        page.locator(tid("hand-card")).first.wait_for()
    assert page.locator(tid("hand-card")).count() == 5
    page.click(tid("cancel-game"))
    page.locator(tid("banner"), has_text="Game cancelled").wait_for()


def test_another_tab_with_the_same_player_takes_over_its_game(new_page: Any, web_server: Any) -> None:
    if web_server.kind != "parlour":
        pytest.skip("the reference keeps the player on its old socket too")
    host, guest = host_and_guest(new_page, web_server.url, ("quin", "rosa"), "Takeover", seats=3)
    host.locator(tid("seats"), has_text="rosa").wait_for()
    host.click(tid("start-game"))
    guest.locator("[data-testid^='pawn-GREEN-']").first.wait_for()

    # The same stored player in a second browser while the first page is still open: the
    # reregistration moves the player to the new socket and it stays in its game.
    stored = guest.evaluate("JSON.stringify(Object.entries(localStorage))")
    tab = new_page(PHONE)
    tab.goto(paced(web_server.url))
    # Only once this blank page has connected (and asked for a handle) may it hold rosa's id: had it
    # reregistered rosa itself, its reload would disconnect rosa and take her out of the game.
    tab.locator(tid("register")).wait_for()
    tab.evaluate(f"for (const [k, v] of {stored}) localStorage.setItem(k, v)")
    tab.reload()
    tab.locator(tid("notice")).wait_for()
    notice = tab.locator(tid("notice")).inner_text()
    assert "You are back in your game" in notice, (notice, tab.locator(tid("players")).inner_text())
    tab.locator(tid("game-title"), has_text="Takeover").wait_for()
    tab.locator("[data-testid^='pawn-']").nth(11).wait_for()  # RETRIEVE_GAME_STATE redrew the board
    assert tab.locator(tid("player-rosa")).inner_text().endswith("playing")

    # Turns now reach the new tab: the host plays until one comes, then the tab plays it.
    deadline = time.monotonic() + 30
    while not my_turn(tab):
        assert time.monotonic() < deadline and not over(host), "no turn reached the new tab"
        if my_turn(host):
            host.click(tid("optimal-move"))
        elif not tab.locator(tid("optimal-move")).is_disabled():
            # Right after the takeover the tab cannot know whether a turn was pending (5.3).
            tab.click(tid("optimal-move"))
        host.wait_for_timeout(5)
    # The host's next turn comes (RED, YELLOW, GREEN) only once rosa's move was made from the tab.
    while not my_turn(host):
        assert time.monotonic() < deadline and not over(host), "the tab's move was not played"
        if my_turn(tab):  # a played 2 draws again
            tab.click(tid("optimal-move"))
        host.wait_for_timeout(5)
    assert tab.locator(tid("turn")).inner_text().startswith("Waiting for")
    # If the tab guessed wrong right after the takeover, it was told so in words.
    for error in tab.locator(tid("error")).all():
        assert error.get_attribute("data-reason") == "NO_MOVE_PENDING"
    host.click(tid("cancel-game"))
    tab.locator(tid("banner"), has_text="Game cancelled: cancelled by its advertiser").wait_for()
    # The first page no longer speaks for rosa: it heard nothing of the end.
    host.locator(tid("banner")).wait_for()
    assert guest.locator(tid("banner")).is_hidden()
