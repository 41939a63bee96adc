"""The admin page (admin.html) in Chromium against a real server with a store: an
admin granted by ``parlour admin grant`` signs in, sees the dashboard's charts, finds a player
and bans it, closes a report from the chat, lists live games, aborts one, lists the finished
ones and opens their replays, and reads the audit log; each screen is shot on a laptop and on a
phone (build/screenshots/admin-*.png)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from parlour.cli import main
from parlour.protocols.async_ws.game.model import decode_game, encode_game
from parlour.storage import AsyncGameRow
from parlour.storage.sqlite import SQLiteStore
from tests.asyncclient import PASSWORD, create_account, login
from tests.protocols.async_ws.harness import Harness
from tests.protocols.async_ws.test_history import fish_game, play_out

from .browser_steps import screenshot, tid
from .conftest import PHONE, WebServer, _serve_parlour
from .play_steps import sign_up


@pytest.fixture(scope="module")
def admin_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebServer, Path]]:
    logs = tmp_path_factory.mktemp("admin-server")
    store = logs / "admin.db"
    with ExitStack() as stack:
        yield _serve_parlour(stack, logs, str(store)), store


def port_of(server: WebServer) -> int:
    return int(server.url.rstrip("/").rsplit(":", 1)[1])


@contextmanager
def in_the_lobby(port: int, *names: str) -> Iterator[list[Any]]:
    """A real /async client per name, signed in and in the lobby; closed after."""
    sockets: list[Any] = []
    try:
        for name in names:
            ws = connect(f"ws://127.0.0.1:{port}/async", open_timeout=5)
            sockets.append(ws)
            ws.send(json.dumps({"type": "AsyncAuthRequest", "name": name, "sessionToken": login(port, name)}))
            while json.loads(ws.recv(timeout=5))["type"] != "AsyncConnectedRequest":
                pass
            ws.send(json.dumps({"type": "EnterLobbyRequest"}))
        yield sockets
    finally:
        for ws in sockets:
            ws.close()


def report_in_chat(port: int, reporter: str, reported: str) -> None:
    """``reported`` says something rude in the lobby, ``reporter`` reports it (a real client)."""
    with in_the_lobby(port, reported, reporter) as (rude, reporting):
        rude.send(json.dumps({"type": "MulticastChatRequest", "text": "you all stink", "request_id": "r1"}))
        while json.loads(rude.recv(timeout=5)).get("request_id") != "r1":
            pass
        reporting.send(
            json.dumps(
                {"type": "MulticastChatRequest", "text": f"/report {reported} insults", "request_id": "r2"}
            )
        )
        while "Thanks for your report" not in json.loads(reporting.recv(timeout=5)).get("text", ""):
            pass


def open_game(port: int, creator: str, joiner: str) -> int:
    """A two-player /async game, started (real clients, closed after: the game stays live)."""
    with in_the_lobby(port, creator, joiner) as (first, second):
        configuration = {"game_type": "test", "max_players": 2}
        first.send(json.dumps({"type": "LobbyCreateGameRequest", "configuration": configuration}))
        while (message := json.loads(first.recv(timeout=5)))["type"] != "LobbyGameCreatedRequest":
            pass
        game_id = int(message["game_id"])
        second.send(json.dumps({"type": "LobbyJoinGameRequest", "game_id": game_id}))
        while json.loads(second.recv(timeout=5))["type"] != "GameCreatedRequest":
            pass
        return game_id


def advertise_apologies(port: int, handle: str) -> str:
    """An Apologies game, advertised and started with a robot (its advertiser stays connected:
    leaving would cancel it)."""
    ws = connect(f"ws://127.0.0.1:{port}/", open_timeout=5)
    ADVERTISERS.append(ws)
    ws.send(json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": handle}}))
    player_id = json.loads(ws.recv(timeout=5))["player_id"]
    context = {
        "name": "Game",
        "mode": "STANDARD",
        "players": 2,
        "visibility": "PUBLIC",
        "invited_handles": [],
    }
    ws.send(json.dumps({"message": "ADVERTISE_GAME", "player_id": player_id, "context": context}))
    while (message := json.loads(ws.recv(timeout=5)))["message"] != "GAME_ADVERTISED":
        pass
    ws.send(json.dumps({"message": "START_GAME", "player_id": player_id}))  # a robot takes the seat
    while json.loads(ws.recv(timeout=5))["message"] != "GAME_STARTED":
        pass
    return str(message["context"]["game"]["game_id"])


#: The id of the /async game ``store_finished_fish`` puts in the store (the server numbers its
#: games from 1, and this test opens one).
FISH_ID = 4242


def store_finished_fish(store: Path) -> int:
    """A public /async Fish game (server rules) played to its end in-process, its record put in
    the server's store as a server leaves it (as a game that ended before a restart); its id."""
    h = Harness()
    game_id, people = fish_game(h)
    play_out(h, {account: conn for conn, account, _ in people.values()}, game_id)
    for name in ("ann", "bob"):
        h.send(people[name][0], type="GameOutcomeConfirmationRequest", game_id=game_id)
    record = decode_game(h.games[game_id].doc)
    assert record.status == "OVER"
    record.id = FISH_ID
    row = AsyncGameRow(
        FISH_ID, record.config.game_type, record.status, record.created, time.time() - 60, encode_game(record)
    )
    kept = SQLiteStore(store)
    try:
        kept.commit([row])
    finally:
        kept.close()
    return FISH_ID


#: The Apologies connections of the test, closed at its end.
ADVERTISERS: list[Any] = []


def shoot(page: Any, phone: Any, screen: str) -> None:
    screenshot(page, f"admin-{screen}.png")
    phone.click(tid(f"tab-{screen}"))
    phone.wait_for_selector(f"#{screen}:not([hidden])")
    screenshot(phone, f"admin-{screen}-phone.png")


def sign_in(page: Any, url: str, name: str) -> None:
    page.goto(f"{url}admin.html")
    page.fill(tid("signin-name"), name)
    page.fill(tid("signin-password"), PASSWORD)
    page.click(tid("signin-go"))


def test_an_admin_moderates_from_the_page(new_page: Any, admin_server: tuple[WebServer, Path]) -> None:
    server, store = admin_server
    port, url = port_of(server), server.url
    for name in ("chief", "toto", "fan", "ann"):
        create_account(port, name)
    # A player who is no admin sees nothing but the refusal.
    page = new_page(expected_errors="403")
    sign_in(page, url, "toto")
    page.wait_for_selector(f"{tid('notice')}:has-text('admins only')")
    page.close()  # it asks again now and then: once toto is banned below, 401 (not this test's point)
    assert main(["admin", "grant", "chief", "--store", str(store), "--reason", "tests"]) == 0
    report_in_chat(port, "fan", "toto")

    page = new_page()
    phone = new_page(PHONE)
    sign_in(page, url, "chief")
    sign_in(phone, url, "chief")
    # The dashboard: one chart per figure, drawn by uPlot.
    page.wait_for_selector(f"{tid('chart-connections')} canvas")
    assert page.locator(".chart").count() == 8
    phone.wait_for_selector(f"{tid('chart-connections')} canvas")
    shoot(page, phone, "dashboard")

    # Players: find toto, open the profile, ban for an hour.
    page.click(tid("tab-players"))
    page.fill(tid("player-q"), "tot")
    page.click(tid("player-search"))
    page.click(tid("player-toto"))
    page.wait_for_selector(f"{tid('profile-name')}:has-text('toto')")
    assert "insults" in page.inner_text(tid("profile"))  # the report against toto
    page.fill(tid("ban-minutes"), "60")
    page.fill(tid("ban-reason"), "insults in the lobby")
    page.click(tid("ban-go"))
    page.wait_for_selector(f"{tid('profile')} dd:has-text('insults in the lobby (until')")
    phone.click(tid("tab-players"))
    phone.click(tid("player-toto"))
    phone.wait_for_selector(tid("profile-name"))
    shoot(page, phone, "players")

    # Reports: the line in context, dismissed (toto is banned already).
    page.click(tid("tab-reports"))
    page.wait_for_selector(f"{tid('report')} .reported:has-text('you all stink')")
    shoot(page, phone, "reports")
    page.fill(tid("report-dismiss-reason"), "dealt with by a ban")
    page.click(tid("report-dismiss-go"))
    page.wait_for_selector(f"{tid('report-list')}:has-text('No report here.')")

    game_id = open_game(port, "fan", "ann")
    apologies_id = advertise_apologies(port, "leela")
    page.click(tid("tab-games"))
    page.wait_for_selector("#games:not([hidden])")
    page.wait_for_selector(tid(f"watch-{apologies_id}"))
    shoot(page, phone, "games")
    # Each live game's spectator view: an /async game watched from the player page...
    assert page.locator(tid(f"watch-{game_id}")).get_attribute("href") == f"play.html?watch={game_id}"
    watcher = new_page()
    sign_up(watcher, url, "watcher")
    watcher.goto(f"{url}play.html?watch={game_id}")
    watcher.wait_for_function(
        f"() => document.querySelector(\"[data-testid='game']\")?.dataset.gameId === '{game_id}'"
    )
    # ... an Apologies game's record so far as a replay on the front page.
    replay = new_page()
    replay.goto(url + page.locator(tid(f"watch-{apologies_id}")).get_attribute("href").lstrip("./"))
    replay.fill(tid("handle"), "spectator")  # the front page's first step, as for any visitor
    replay.click(tid("register-button"))
    replay.wait_for_selector(f"{tid('replay')}:not([hidden])")
    replay.wait_for_selector(f"{tid('replay-board')} svg")
    screenshot(replay, "admin-watch-apologies.png")

    # Finished games: the Apologies game, aborted from the page, and an /async game that ended
    # before (a server-rules Fish game).
    page.fill(tid(f"abort-{apologies_id}-reason"), "stuck")
    page.click(tid(f"abort-{apologies_id}-go"))
    page.wait_for_selector(f"{tid('notice')}:has-text('aborted')")
    fish_id = store_finished_fish(store)
    page.click(tid("games-finished"))
    page.wait_for_selector(tid(f"replay-async-{fish_id}"))
    assert page.locator(tid("games-finished")).get_attribute("aria-pressed") == "true"
    assert "CANCELLED" in page.inner_text(tid("game-list"))  # the abort, stored
    screenshot(page, "admin-games-finished.png")
    phone.click(tid("tab-games"))
    phone.click(tid("games-finished"))
    phone.wait_for_selector(tid(f"replay-async-{fish_id}"))
    for target in ("games-finished", f"replay-async-{fish_id}", f"replay-apologies-{apologies_id}"):
        box = phone.locator(tid(target)).bounding_box()
        assert box is not None and box["height"] >= 44, target  # a tap target
    screenshot(phone, "admin-games-finished-phone.png")
    # Older games: pages of one game (the page's requests rewritten to ask for one), each
    # added under the last, until there is none older.
    rows = "document.querySelectorAll(\"[data-testid='finished-game']\").length"
    page.route(
        "**/api/admin/games?state=finished*",
        lambda route: route.continue_(url=f"{route.request.url}&limit=1"),
    )
    page.click(tid("games-live"))
    page.click(tid("games-finished"))
    page.wait_for_function(f"() => {rows} === 1")
    page.click(tid("games-older"))
    page.wait_for_function(f"() => {rows} === 2")
    page.wait_for_selector(f"{tid('games-older')}[hidden]", state="attached")
    page.unroute("**/api/admin/games?state=finished*")
    # Its replay on the player page, for the admin (the watcher stands in: the game was public).
    href = page.locator(tid(f"replay-async-{fish_id}")).get_attribute("href")
    assert href == f"./play.html?replay={fish_id}"
    watcher.goto(url + href.removeprefix("./"))
    watcher.wait_for_selector(f"{tid('replay-bar')}:not([hidden])")
    watcher.wait_for_selector("#board-host svg")
    watcher.click(tid("replay-last"))
    total = watcher.locator(tid("replay-bar")).get_attribute("data-total")
    assert total and int(total) > 0
    assert watcher.locator(tid("replay-bar")).get_attribute("data-step") == total
    # The Apologies game's, on the front page.
    href = page.locator(tid(f"replay-apologies-{apologies_id}")).get_attribute("href")
    assert href == f"./?replay={apologies_id}"
    ended = new_page()
    ended.goto(url + href.removeprefix("./"))
    ended.fill(tid("handle"), "spectator2")
    ended.click(tid("register-button"))
    ended.wait_for_selector(f"{tid('replay')}:not([hidden])")
    ended.wait_for_selector(f"{tid('replay-board')} svg")

    page.click(tid("tab-audit"))
    page.fill(tid("audit-action"), "ban")
    page.click(tid("audit-go"))
    # The unfiltered log shows first: wait for the filtered answer, the ban alone.
    page.wait_for_function("() => document.querySelectorAll(\"[data-testid='audit-row']\").length === 1")
    assert "insults in the lobby" in page.inner_text(tid("audit-row"))
    shoot(page, phone, "audit")
    for ws in ADVERTISERS:
        ws.close()
