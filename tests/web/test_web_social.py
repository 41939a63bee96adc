"""The accounts page's social side against a real server: buddies and presence, lobby and table
chat with history, server statistics, watching a game to its end from a third page, the
leaderboard's rating changes, replays that end on the final board, a rematch; and Apologies
played on /async against robots with a clock."""

from __future__ import annotations

import re
from typing import Any

from .browser_steps import SMALL_TARGETS, screenshot, tid
from .conftest import PHONE
from .play_steps import (
    accept,
    invite,
    legal_actions,
    no_errors,
    play_apologies,
    play_fish,
    play_until_over,
    shoot,
    sign_up,
    turn_index,
)

BOARD_SVG = "document.querySelector(\"[data-testid='board']\").innerHTML"


def replay_to_the_end(page: Any, button: str = "replay") -> None:
    """Open the replay, step once forward and back, jump to the last move: the board is then the
    final board the game ended on."""
    final = page.evaluate(BOARD_SVG)
    page.click(tid(button))
    bar = page.locator(tid("replay-bar"))
    bar.wait_for()
    assert bar.get_attribute("data-step") == "0"
    total = int(bar.get_attribute("data-total") or 0)
    assert total > 0
    page.click(tid("replay-next"))
    page.locator(tid("replay-step"), has_text=f"Move 1 of {total}").wait_for()
    page.keyboard.press("Enter")  # the focus stays on "next": the keyboard steps too
    page.locator(tid("replay-step"), has_text=f"Move 2 of {total}").wait_for()
    page.click(tid("replay-last"))
    page.locator(tid("replay-step"), has_text=f"Move {total} of {total}").wait_for()
    assert page.evaluate(BOARD_SVG) == final


def test_buddies_chat_watching_leaderboard_replay_and_rematch(new_page: Any, url: str) -> None:
    ann, bob, cat = new_page(), new_page(), new_page(PHONE)
    for page, name in ((ann, "sann"), (bob, "sbob"), (cat, "scat")):
        sign_up(page, url, name)

    # Buddies first, with their presence; a buddy can be removed again.
    ann.locator(tid("lobby-player-scat")).wait_for()
    ann.click(tid("buddy-scat"))
    ann.locator(f"{tid('lobby-players')} li.buddy", has_text="scat").wait_for()
    names = ann.locator(f"{tid('lobby-players')} .player-name").all_inner_texts()
    assert names[0].endswith("scat"), names
    assert ann.locator(tid("presence-scat")).inner_text() == "online"
    ann.click(tid("buddy-sbob"))
    ann.locator(f"{tid('lobby-players')} li.buddy", has_text="sbob").wait_for()
    ann.click(tid("buddy-sbob"))
    ann.locator(f"{tid('lobby-players')} li.buddy", has_text="sbob").wait_for(state="detached")
    # Server statistics, pushed.
    # (The server is shared by every test of tests/web: at least these three.)
    # Pushed at most every 2 s when the figures change (S8): the figures shown first may be from
    # before the third page signed in, so wait for the push that counts it.
    stats = ann.locator(tid("stats"), has_text=re.compile(r"\d+ connected of \d+ players"))
    stats.wait_for()
    ann.wait_for_function(
        "() => +((document.querySelector(\"[data-testid='stats']\") || {}).innerText || '')"
        ".split(' connected')[0].split(' ').pop() >= 3",
        timeout=10_000,
    )
    connected, players = map(int, re.findall(r"\d+", stats.inner_text())[:2])
    assert 3 <= connected <= players, stats.inner_text()

    # Lobby chat, and its history for someone who arrives later.
    ann.fill(tid("lobby-chat-text"), "hello lobby")
    ann.keyboard.press("Enter")
    bob.locator(tid("lobby-chat"), has_text="sann: hello lobby").wait_for()
    dee = new_page()
    sign_up(dee, url, "sdee")
    dee.locator(tid("lobby-chat"), has_text="sann: hello lobby").wait_for()

    # A Fish game between ann and bob, with table chat; cat watches it from the list.
    game = invite(ann, "fish", ["sbob"])
    accept(bob, game)
    for page in (ann, bob):
        page.locator(tid("board")).wait_for()
    bob.fill(tid("game-chat-text"), "good luck")
    bob.click(tid("game-chat-send"))
    ann.locator(tid("game-chat"), has_text="sbob: good luck").wait_for()
    cat.click(tid(f"watch-{game}"))
    cat.locator(tid("game-title"), has_text=f"Fish #{game}").wait_for()
    cat.locator(tid("board")).wait_for()
    assert cat.locator(tid("forfeit")).is_hidden()
    assert cat.locator(tid(f"news-{game}")).inner_text() == "Watching"
    shoot({"": ann, "-phone": cat}, "play-social")
    # A second spectator on a laptop: the spectator view on both screens.
    dee.click(tid(f"watch-{game}"))
    dee.locator(tid("board")).wait_for()
    shoot({"": dee, "-phone": cat}, "play-watching")

    moves = play_until_over([ann, bob], play_fish, 40)
    assert moves >= 8
    # The spectator saw the end: the same final board, the standings, nothing to confirm.
    cat.locator(tid("outcome")).wait_for()
    assert cat.evaluate(BOARD_SVG).count("penguin") == ann.evaluate(BOARD_SVG).count("penguin")
    assert cat.locator(tid("confirm-outcome")).is_hidden()
    assert cat.locator(f"{tid('outcome-rows')} tr").count() == 2
    screenshot(cat, "play-watched-outcome-phone.png")

    # The leaderboard shows both players and the change this game made, in points of the rating
    # people see (a first game: provisional, marked "?"), as the outcome does.
    for name in ("sann", "sbob"):
        ann.locator(tid(f"leader-change-{name}"), has_text=re.compile(r"^(\+\d+|-\d+|±0)$")).wait_for()
    outcome_change = ann.locator(f"{tid('outcome-1')} td .change").inner_text()
    assert ann.locator(tid("leader-change-sann")).inner_text() == outcome_change
    outcome_rating = ann.locator(tid("outcome-rating-1")).inner_text()
    assert re.fullmatch(r"\d+\? (\+\d+|-\d+|±0)", outcome_rating), outcome_rating
    assert ann.locator(f"{tid('leader-sann')} td").nth(2).inner_text() == outcome_rating.split()[0]
    shoot({"": ann, "-phone": cat}, "play-leaderboard")

    # The replay ends on the final board.
    replay_to_the_end(ann)
    shoot({"": ann}, "play-replay")
    ann.click(tid("replay-close"))
    ann.locator(tid("replay-bar")).wait_for(state="hidden")

    # A rematch: bob is invited to the same table again.
    ann.click(tid("rematch"))
    bob.locator(tid(f"news-{game + 1}"), has_text="Invitation waiting").wait_for()
    no_errors(ann, bob, cat, dee)


def test_apologies_on_async_against_a_robot_with_a_clock(new_page: Any, url: str) -> None:
    # Robots alone cannot be invited: bob accepts, then hands his seat to a robot by forfeiting.
    ann, bob = new_page(PHONE), new_page()
    sign_up(ann, url, "rann")
    sign_up(bob, url, "rbob")
    game = invite(ann, "apologies", ["rbob"], clock="blitz")
    accept(bob, game)
    bob.locator(tid("board")).wait_for()
    bob.click(tid("forfeit"))
    bob.click(tid("forfeit-confirm"))
    ann.locator(tid("seat-2"), has_text="forfeited: a robot plays").wait_for()
    ann.locator(tid("clock-1"), has_text=re.compile(r"^\d:\d\d$")).wait_for()
    # Turns by clicking against the robot, the clock ticking on ann's turns.
    for turn in range(6):
        ann.locator(".turn.mine").wait_for()
        if turn == 2:
            ann.locator(tid("clock-1")).wait_for()
            first = ann.locator(tid("clock-1")).inner_text()
            ann.wait_for_function(
                f"() => document.querySelector(\"[data-testid='clock-1']\").textContent !== '{first}'",
                timeout=3000,
            )
            screenshot(ann, "play-apologies-robot-phone.png")
            assert ann.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            # Pawns (and, once one is picked, its destinations) have finger-sized tap areas.
            movable = ann.locator(".pawn.movable")
            if movable.count():
                movable.first.click()
                ann.locator(tid("target")).first.wait_for()
            assert not ann.evaluate(SMALL_TARGETS), ann.evaluate(SMALL_TARGETS)
            if movable.count():
                ann.locator(".pawn.selected").dispatch_event("click")  # unpick
        before = turn_index(ann)
        play_apologies(ann, legal_actions(ann)[-1])
        ann.wait_for_function(
            f"() => Number(document.querySelector(\"[data-testid='game']\").dataset.turnIndex) > {before}"
        )
    # ann leaves too: nobody is left, the game is aborted, and its replay ends on its last board.
    ann.locator(".turn.mine").wait_for()
    ann.click(tid("forfeit"))
    ann.click(tid("forfeit-confirm"))
    ann.locator(tid("replay-aborted")).wait_for()
    replay_to_the_end(ann, "replay-aborted")
    screenshot(ann, "play-apologies-replay-phone.png")
    no_errors(ann)
