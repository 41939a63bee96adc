"""The accounts page (play.html) takes the games, their seats and its error words from the server
(GET /api/async/catalogue), and draws only the panels a message changed."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from parlour.protocols.async_ws.rules import RULES, seat_range

from .browser_steps import tid
from .play_steps import no_errors, open_create_form, sign_up


def options(page: Any, testid: str) -> list[list[str]]:
    found: list[list[str]] = page.eval_on_selector_all(
        f"{tid(testid)} option", "(all) => all.map((o) => [o.value, o.textContent])"
    )
    return found


def test_the_create_form_offers_the_servers_games_and_seats(new_page: Any, url: str) -> None:
    with urllib.request.urlopen(f"{url}api/async/catalogue", timeout=5) as reply:
        catalogue = json.load(reply)
    page = new_page()
    sign_up(page, url, "cata")
    names = [[game["rules"], game["name"]] for game in catalogue["games"]]
    assert [rules for rules, _ in names] == list(RULES)
    assert options(page, "create-rules") == names
    assert options(page, "leaders-game") == names

    # An open game's seats run over the plugin's range, whichever game is chosen.
    open_create_form(page)
    page.check(tid("create-how-open"))
    for rules in RULES:
        page.select_option(tid("create-rules"), rules)
        low, high = seat_range(rules)
        assert [value for value, _ in options(page, "create-seats")] == [str(n) for n in range(low, high + 1)]

    # Inviting more than the game seats is refused in the page, with the server's range and name.
    page.check(tid("create-how-invite"))
    page.select_option(tid("create-rules"), "fish")
    page.fill(tid("create-invite"), "nobody-here")
    page.click(tid("create"))
    page.locator(tid("error"), has_text="nobody-here is not in the lobby").wait_for()
    page.locator(tid("dismiss-error")).click()
    other = new_page()
    sign_up(other, url, "catb")
    page.locator(tid("lobby-player-catb")).wait_for()
    page.fill(tid("create-invite"), "catb")
    page.select_option(tid("create-robots"), "3")
    page.click(tid("create"))
    low, high = seat_range("fish")
    page.locator(
        tid("error"), has_text=f"Fish is played by {low} to {high} players; with you, this makes 5"
    ).wait_for()
    page.locator(tid("dismiss-error")).click()
    no_errors(page, other)


def test_a_message_draws_only_the_panels_it_changed(new_page: Any, url: str) -> None:
    ann = new_page()
    sign_up(ann, url, "pann")
    # The statistics answer a request sent after the one for ann's games: those are drawn by now.
    ann.locator(tid("stats"), has_text="On the server").wait_for()
    ann.locator(f"{tid('my-games')} .empty").wait_for()
    # Mark the drawn lists: a list drawn again loses its mark (its items are new elements).
    lists = '["my-games", "lobby-players"]'
    ann.evaluate(
        f"{lists}.forEach((id) => {{ document.querySelector(`[data-testid='${{id}}'] li`).dataset.mark = 'old'; }})"
    )
    bob = new_page()
    sign_up(bob, url, "pbob")
    # bob in the lobby changes ann's list of players, not her list of games.
    ann.locator(tid("lobby-player-pbob")).wait_for()
    marked = ann.evaluate(
        f"{lists}.map((id) => document.querySelector(`[data-testid='${{id}}'] li`).dataset.mark ?? null)"
    )
    assert marked == ["old", None]
    no_errors(ann, bob)


def test_the_page_signs_in_without_the_catalogue(new_page: Any, url: str) -> None:
    page = new_page(expected_errors="503")
    page.route("**/api/async/catalogue", lambda route: route.fulfill(status=503, body="{}"))
    sign_up(page, url, "nocat")
    page.locator(tid("error"), has_text="The server's list of games did not load").wait_for()
    assert options(page, "create-rules") == []
    open_create_form(page)
    page.click(tid("create"))
    page.locator(tid("error"), has_text="No game chosen").wait_for()
