"""What a person does on the page, as Playwright steps shared by the browser tests."""

from __future__ import annotations

import time
from typing import Any

from .conftest import SCREENSHOTS

# Every control (and board tap area) that is on screen and smaller than 44 px in either direction.
SMALL_TARGETS = """() => {
    const seen = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const controls = [...document.querySelectorAll('button, select, input, summary, a[href], [role=button]')]
        .filter((e) => seen(e) && !e.closest('svg'))
        // A checkbox or radio button is tapped through its label.
        .map((e) => [e.dataset.testid || e.textContent.trim().slice(0, 20), e.closest('label.check') ?? e]);
    // On a board, each active thing is tapped through its tap area (boards/svg.js TapAreas).
    const areas = [...document.querySelectorAll('svg [data-focus]')].filter(seen).map((e) => [
        e.dataset.focus, e.closest('svg').querySelector(`[data-hit-for="${e.dataset.focus}"]`) ?? e]);
    return [...controls, ...areas]
        .map(([name, e]) => [name, e.getBoundingClientRect()])
        .filter(([, r]) => r.width > 0 && (r.height < 43.5 || r.width < 43.5))
        .map(([name, r]) => `${name}: ${Math.round(r.width)}x${Math.round(r.height)} px`);
}"""


def tid(name: str) -> str:
    return f"[data-testid='{name}']"


def paced(url: str, pace: int = 0) -> str:
    """The classic page with each move shown for ``pace`` ms (app.js PACE): tests that do not look
    at the pacing play at full speed."""
    return f"{url}{'&' if '?' in url else '?'}pace={pace}"


def register(page: Any, url: str, handle: str, pace: int = 0) -> None:
    page.goto(paced(url, pace))
    page.fill(tid("handle"), handle)
    page.click(tid("register-button"))
    page.wait_for_selector(f"{tid('who')}:text-is('{handle}')")
    page.wait_for_selector(tid(f"player-{handle}"))


def advertise(
    page: Any,
    name: str,
    seats: int = 2,
    mode: str = "STANDARD",
    visibility: str = "PUBLIC",
    invites: str = "",
) -> None:
    if page.locator(tid("advertise-box")).get_attribute("open") is None:
        page.click(tid("advertise-toggle"))
    page.fill(tid("game-name"), name)
    page.select_option(tid("game-mode"), mode)
    page.select_option(tid("game-seats"), str(seats))
    page.select_option(tid("game-visibility"), visibility)
    page.fill(tid("game-invites"), invites)
    page.click(tid("advertise"))
    page.locator(tid("game-title"), has_text=name).wait_for()


def join(page: Any, name: str) -> None:
    page.click(tid("refresh"))
    item = page.locator(tid("game-item"), has_text=name)
    item.locator(tid("join-game")).click()
    page.locator(tid("game-title"), has_text=name).wait_for()


def host_and_guest(
    new_page: Any, url: str, handles: tuple[str, str], game: str, seats: int
) -> tuple[Any, Any]:
    """Two pages registered as ``handles``: the first advertises ``game``, the second joins it."""
    host, guest = new_page(), new_page()
    register(host, url, handles[0])
    register(guest, url, handles[1])
    advertise(host, game, seats=seats)
    join(guest, game)
    return host, guest


def my_turn(page: Any) -> bool:
    return bool(page.locator(".turn.mine").count())


def over(page: Any) -> bool:
    return page.locator(tid("banner")).is_visible()


# Each colour's turn square: the last board square before its safe zone.
TURN_SQUARE = {"RED": 2, "BLUE": 17, "YELLOW": 32, "GREEN": 47}


def steps_to_home(color: str, position: str) -> int:
    """How far a pawn at ``position`` (a data-position key) is from home, going forward."""
    if position == "home":
        return 0
    if position == "start":
        return 65
    kind, number = position.split("-")
    if kind == "safe":
        return 5 - int(number)
    return (TURN_SQUARE[color] - int(number)) % 60 + 6


def play_turn_by_clicking(page: Any) -> str:
    """Click a movable pawn, then one of its destinations (the one nearest home, so that games end
    sooner), then, if several moves share them, the first listed choice; when no pawn can move,
    click the forfeit choice. Returns what was clicked."""
    pawns = page.evaluate(
        """() => [...document.querySelectorAll('.pawn.movable')].map(
            (g) => [g.dataset.testid, g.dataset.color, g.dataset.targets.split(' ')])"""
    )
    if not pawns:
        page.locator(tid("choice")).first.click()
        return "forfeit"
    _, pawn, target = min(
        (steps_to_home(color, place), pawn, place) for pawn, color, places in pawns for place in places
    )
    page.click(tid(pawn))
    page.click(f"{tid('target')}[data-position='{target}']")
    if my_turn(page) and page.locator(tid("choice")).count():
        page.locator(tid("choice")).first.click()
        return "choice"
    return "move"


def turn_state(page: Any) -> tuple[bool, bool]:
    """(the game is over, it is our turn), in one round trip."""
    over_now, mine = page.evaluate(
        """() => [Boolean(document.querySelector("[data-testid='banner']")?.checkVisibility()),
                  Boolean(document.querySelector('.turn.mine'))]"""
    )
    return bool(over_now), bool(mine)


def play_optimal_until_over(page: Any, seconds: float) -> int:
    """Press "Optimal move" on each of our turns until the game ends; the number of presses."""
    deadline = time.monotonic() + seconds
    presses = 0
    while True:
        over_now, mine = turn_state(page)
        if over_now:
            return presses
        assert time.monotonic() < deadline, "the game did not end in time"
        if mine:
            page.click(tid("optimal-move"))
            presses += 1
        else:
            page.wait_for_timeout(5)


def screenshot(page: Any, name: str, full_page: bool = True) -> None:
    """The whole page, or (``full_page=False``) what the screen shows now."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)
