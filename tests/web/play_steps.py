"""What a person does on the accounts page (play.html), as Playwright steps."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from .browser_steps import screenshot, tid

PASSWORD = "correct horse"


def sign_up(page: Any, url: str, name: str) -> None:
    """Create the account ``name`` on the accounts page and wait until the lobby shows."""
    page.goto(f"{url}play.html")
    page.fill(tid("account-name"), name)
    page.fill(tid("account-password"), PASSWORD)
    page.click(tid("signup-button"))
    page.wait_for_selector(f"{tid('who')}:text-is('{name}')")
    page.locator(tid("connection"), has_text="connected").wait_for()


def open_create_form(page: Any) -> None:
    if page.locator(tid("create-box")).get_attribute("open") is None:
        page.click(tid("create-toggle"))


def invite(
    page: Any,
    rules: str,
    names: list[str],
    robots: int = 0,
    clock: str = "none",
    level: str = "",
    mode: str = "",
) -> int:
    """Invite ``names`` (and robots, at ``level``) to a game of ``rules`` (Apologies in ``mode``);
    the new game's id."""
    for name in names:
        page.locator(tid(f"lobby-player-{name}")).wait_for()
    open_create_form(page)
    page.select_option(tid("create-rules"), rules)
    page.check(tid("create-how-invite"))
    page.fill(tid("create-invite"), ", ".join(names))
    page.select_option(tid("create-robots"), str(robots))
    page.select_option(tid("create-clock"), clock)
    page.select_option(tid("create-level"), level)
    if mode:
        page.select_option(tid("create-mode"), mode)
    page.click(tid("create"))
    page.locator(tid("game-title"), has_text=re.compile(r"#\d+")).wait_for()
    return current_game(page)


def current_game(page: Any) -> int:
    page.wait_for_function("() => document.querySelector(\"[data-testid='game']\").dataset.gameId")
    return int(page.locator(tid("game")).get_attribute("data-game-id"))


def turn_index(page: Any) -> int:
    return int(page.locator(tid("game")).get_attribute("data-turn-index") or 0)


def accept(page: Any, game_id: int) -> None:
    page.locator(tid(f"accept-{game_id}")).click()


def my_turn(page: Any) -> bool:
    return bool(page.locator(".turn.mine").count())


def over(page: Any) -> bool:
    return page.locator(tid("outcome")).is_visible()


def legal_actions(page: Any) -> list[str]:
    board = page.locator(tid("board"))
    if not board.count():
        return []
    return list(json.loads(board.get_attribute("data-legal") or "[]"))


def play_fish(page: Any, action: str) -> None:
    """Click the board as a person does for one Fish action."""
    place = re.fullmatch(r"place (\d+),(\d+)", action)
    if place:
        page.click(tid(f"tile-{place[1]}-{place[2]}"))
        return
    move = re.fullmatch(r"move (\d+),(\d+) (\d+),(\d+)", action)
    assert move, action
    page.click(tid(f"penguin-{move[1]}-{move[2]}"))
    page.click(tid(f"tile-{move[3]}-{move[4]}"))


def play_tsuro(page: Any, action: str) -> None:
    """Choose the tile, turn it, click the square (and the port of a first placement)."""
    found = re.fullmatch(r"tile (\d+) rotation (\d+) at (\d+),(\d+)(?: port ([A-H]))?", action)
    assert found, action
    tile, rotation, x, y, port = found.groups()
    board = page.locator(tid("board"))
    if board.get_attribute("data-tile") != tile:
        page.click(tid(f"tsuro-tile-{tile}"))
    for _ in range(4):
        if board.get_attribute("data-rotation") == rotation:
            break
        page.click(tid("rotate-right"))
    assert board.get_attribute("data-rotation") == rotation
    page.click(tid(f"square-{x}-{y}"))
    if port:
        page.click(tid(f"port-{port}"))


def play_apologies(page: Any, action: str) -> None:
    """Click the pawn and its destination (then the move, if several share them), or the discard."""
    if action.startswith("forfeit "):
        page.click(f"{tid('choice')}[data-action='{action}']")
        return
    found = re.match(r"play \w+: (Red|Yellow|Green|Blue)(\d) [^>]+->([a-z]+(?: \d+)?)", action)
    assert found, action
    color, pawn, end = found.groups()
    page.click(tid(f"pawn-{color.upper()}-{pawn}"))
    page.click(f"{tid('target')}[data-position='{end.replace(' ', '-')}']")
    choice = page.locator(f"{tid('choice')}[data-action='{action}']")
    if choice.count():
        choice.click()


# One round trip for what the loops below look at (each Playwright call is one).
_STATUS = """() => {
    const outcome = document.querySelector("[data-testid='outcome']");
    const board = document.querySelector("[data-testid='board']");
    const game = document.querySelector("[data-testid='game']");
    return {
        over: Boolean(outcome && outcome.checkVisibility()),
        mine: Boolean(document.querySelector('.turn.mine')),
        legal: board ? JSON.parse(board.getAttribute('data-legal') || '[]') : [],
        turn: Number(game?.dataset.turnIndex || 0),
    };
}"""


def status(page: Any) -> dict[str, Any]:
    """Whether the page shows the outcome, whether it is its turn, its legal actions, the turn."""
    return dict(page.evaluate(_STATUS))


def play_until_over(pages: list[Any], play: Any, seconds: float, pick: Any = None, shot: Any = None) -> int:
    """Each page plays its turns by clicking until every page shows the outcome; the number of
    moves played. ``pick(page, actions)`` chooses among the legal actions (the first by default); ``shot`` is
    called with the page and the move count before each move (for screenshots)."""
    deadline = time.monotonic() + seconds
    moves = 0
    while True:
        seen = [status(page) for page in pages]
        if all(state["over"] for state in seen):
            break
        assert time.monotonic() < deadline, f"no outcome after {moves} moves"
        played = False
        for page, state in zip(pages, seen, strict=True):
            if state["over"] or not state["mine"] or not state["legal"]:
                continue
            if played:  # another page moved since: look again
                state = status(page)
                if state["over"] or not state["mine"] or not state["legal"]:
                    continue
            actions = state["legal"]
            if shot is not None:
                shot(page, moves)
                actions = legal_actions(page)
            before = state["turn"]
            play(page, pick(page, actions) if pick else actions[0])
            page.wait_for_function(
                f"""() => Number(document.querySelector("[data-testid='game']").dataset.turnIndex) > {before}
                    || !!document.querySelector("[data-testid='outcome']:not([hidden])")"""
            )
            moves += 1
            played = True
        if not played:
            pages[0].wait_for_timeout(10)
    return moves


def no_errors(*pages: Any) -> None:
    """No error from the server is shown on these pages."""
    for page in pages:
        shown = page.locator(tid("error")).all_inner_texts()
        assert not shown, shown


def shoot(pages: dict[str, Any], name: str) -> None:
    """Screenshots of the same screen on the laptop page and the phone page."""
    for suffix, page in pages.items():
        screenshot(page, f"{name}{suffix}.png")
