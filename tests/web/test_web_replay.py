"""Past games and replays in the browser, against a server that keeps records (--store FILE):
the lobby lists finished games from GET /api/games, and a replay draws each position of
GET /api/games/{id} on the board."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from typing import Any

from websockets.sync.client import connect

from .browser_steps import advertise, register, screenshot, tid
from .conftest import PHONE

REPLAY = tid("replay")


def api(server: Any, path: str) -> Any:
    with urllib.request.urlopen(f"{server.url}api/{path}", timeout=10) as reply:
        return json.load(reply)


def position(pawn: dict[str, Any]) -> str:
    """A wire pawn's position as the board's data-position."""
    if pawn["start"]:
        return "start"
    if pawn["home"]:
        return "home"
    if pawn["safe"] is not None:
        return f"safe-{pawn['safe']}"
    return f"square-{pawn['square']}"


def expected(view: dict[str, Any]) -> dict[str, str]:
    return {f"{p['color']}-{p['id']}": position(p) for player in view["players"] for p in player["pawns"]}


def drawn(page: Any) -> dict[str, str]:
    """Every pawn on the replay's board: colour-id -> data-position."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll(
            "[data-testid='replay'] [data-testid^='pawn-']")].map(
            (g) => [g.dataset.testid.slice(5), g.dataset.position]))"""
    )


def shown_step(page: Any) -> int:
    return int(page.locator(tid("replay-step")).get_attribute("data-step"))


def wait_for_step(page: Any, k: int) -> None:
    page.locator(f"{tid('replay-step')}[data-step='{k}']").wait_for()


def play_scripted_games(server: Any, handle: str, games: int, name: str = "Scripted") -> None:
    """``games`` whole 2-seat games of ``handle`` against a robot, over the websocket protocol,
    each move chosen by OPTIMAL_MOVE: quick records for the list."""
    with connect(server.url.replace("http", "ws", 1), open_timeout=10) as ws:
        ws.send(json.dumps({"message": "REGISTER_PLAYER", "context": {"handle": handle}}))
        player = None
        played = 0
        deadline = time.monotonic() + 60
        while played < games:
            assert time.monotonic() < deadline, f"only {played} scripted games ended"
            message = json.loads(ws.recv(timeout=10))
            kind = message["message"]
            assert kind != "REQUEST_FAILED", message
            if kind == "PLAYER_REGISTERED" or kind == "GAME_COMPLETED":
                player = player or message["player_id"]
                played += kind == "GAME_COMPLETED"
                if played == games:
                    break
                advert = {
                    "name": name if games == 1 else f"{name} {played}",
                    "mode": "STANDARD",
                    "players": 2,
                }
                advert |= {"visibility": "PUBLIC", "invited_handles": []}
                ws.send(json.dumps({"message": "ADVERTISE_GAME", "player_id": player, "context": advert}))
            elif kind == "GAME_ADVERTISED":
                ws.send(json.dumps({"message": "START_GAME", "player_id": player}))
            elif kind == "GAME_PLAYER_TURN":
                ws.send(json.dumps({"message": "OPTIMAL_MOVE", "player_id": player}))


def test_a_finished_game_is_listed_and_replayed(new_page: Any, stored_web_server: Any) -> None:
    # uma's game against a robot, played over the websocket (quicker than by the page, which
    # test_web_game plays to the end); another page lists and replays it.
    play_scripted_games(stored_web_server, "uma", 1, name="Replayed")
    page = new_page()
    register(page, stored_web_server.url, "ulla")

    # Past games lists it, newest first, with its players, winner and date.
    page.click(tid("past-toggle"))
    item = page.locator(tid("past-game")).first
    item.wait_for()
    listed = api(stored_web_server, "games?game_type=apologies")["games"][0]
    assert item.get_attribute("data-game-id") == listed["id"]
    assert listed["name"] == "Replayed" and listed["state"] == "COMPLETED"
    text = item.inner_text()
    robot = listed["seats"][1]["handle"]
    assert "uma" in text and f"{robot} (robot)" in text
    winner = listed["seats"][listed["result"]["winners"][0]]["handle"]
    assert item.locator(tid("past-outcome")).inner_text() == f"{winner} won"
    assert f"{listed['moves']} moves" in text
    assert re.search(r"\d{4}", item.locator("time").inner_text())  # a date with its year

    record = api(stored_web_server, f"games/{listed['id']}")
    moves = record["moves"]
    total = len(moves)
    assert total == listed["moves"] > 10
    item.locator(tid("past-replay")).click()
    page.locator(REPLAY).wait_for()
    assert page.locator(tid("game")).is_hidden()
    assert page.locator(tid("replay-title")).inner_text() == "Replay · Replayed · Standard"

    # The move count is the API's; step 0 is the position before the first move.
    step = page.locator(tid("replay-step"))
    assert step.get_attribute("data-total") == str(total)
    assert step.inner_text() == f"Start · {total} moves"
    assert page.locator(tid("replay-move")).count() == total + 1
    assert drawn(page) == expected(record["initial"])
    assert page.locator(tid("replay-back")).is_disabled()

    # Forward, one move at a time: each step draws the API's view of that move.
    for k in range(1, 7):
        page.click(tid("replay-forward"))
        wait_for_step(page, k)
        assert step.inner_text() == f"Move {k} of {total}"
        assert drawn(page) == expected(moves[k - 1]["view"]), k
        assert moves[k - 1]["handle"] in page.locator(tid("replay-mover")).inner_text()

    # Jump with the move list to a move that moved a pawn, then step back and forth around it.
    moving = [
        k
        for k in range(2, total)
        if expected(moves[k - 1]["view"]) != expected(moves[k - 2]["view"])
        and moves[k - 1]["view"]["action"]["color"]
    ]
    k = moving[len(moving) // 2]
    page.locator(f"{tid('replay-move')}[data-step='{k}']").click()
    wait_for_step(page, k)
    assert drawn(page) == expected(moves[k - 1]["view"])
    assert page.locator(f"{tid('replay-moves')} li.current").get_attribute("data-step") == str(k)
    action = moves[k - 1]["view"]["action"]
    card = action["card"].replace("CARD_", "").replace("APOLOGIES", "A")
    shown = page.locator(tid("replay-action")).inner_text()
    assert shown.startswith(f"played {card}:"), (shown, action)
    # The pawns that changed are marked, and where they were is drawn hollow.
    before, after = expected(moves[k - 2]["view"]), expected(moves[k - 1]["view"])
    changed = {key for key in after if after[key] != before[key]}
    marked = page.evaluate("""() => [...document.querySelectorAll("[data-testid='replay'] .pawn.moved")]
        .map((g) => g.dataset.testid.slice(5))""")
    assert set(marked) == changed
    ghosts = page.locator(f"{REPLAY} [data-testid^='ghost-']")
    assert ghosts.count() == len(changed)
    page.click(tid("replay-back"))
    wait_for_step(page, k - 1)
    assert drawn(page) == before
    page.keyboard.press("ArrowRight")  # the arrow keys step too
    wait_for_step(page, k)
    assert drawn(page) == after
    assert page.locator(tid("replay-result")).is_hidden()
    screenshot(page, "replay.png")

    # The slider jumps anywhere.
    middle = total // 3
    page.locator(tid("replay-slider")).fill(str(middle))
    wait_for_step(page, middle)
    assert drawn(page) == expected(moves[middle - 1]["view"])

    # The last move: the final position, the winner's pawns all home, and the result.
    page.click(tid("replay-last"))
    wait_for_step(page, total)
    final = moves[-1]["view"]
    assert drawn(page) == expected(final)
    assert final["winner"] is not None
    homes = page.locator(f"{REPLAY} [data-testid^='pawn-{final['winner']}-'][data-position='home']")
    assert homes.count() == 4
    result = page.locator(tid("replay-result"))
    assert result.is_visible()
    assert (
        result.inner_text()
        == f"Game over: {winner} ({final['winner'].title()}) won. {record['result']['comment']}."
    )
    # The last view carries the "Game completed" entry: the move itself is told from the pawns.
    assert page.locator(tid("replay-ending")).inner_text().startswith("Game completed: winner is")
    assert "→ home" in page.locator(tid("replay-action")).inner_text()
    assert page.locator(tid("replay-forward")).is_disabled()
    assert page.locator(f"{tid('replay-seat-' + final['winner'])}", has_text="winner").count() == 1

    # Play steps by itself (from the start, once at the end) until paused.
    page.select_option(tid("replay-speed"), label="Very fast")
    page.click(tid("replay-play"))
    page.locator(f"{tid('replay-play')}[data-playing='true']").wait_for()
    page.wait_for_function(
        "() => Number(document.querySelector(\"[data-testid='replay-step']\").dataset.step) >= 4"
    )
    page.click(tid("replay-play"))  # pause
    page.locator(f"{tid('replay-play')}[data-playing='false']").wait_for()
    paused = shown_step(page)
    assert 4 <= paused < total
    assert drawn(page) == expected(moves[paused - 1]["view"])
    page.wait_for_timeout(300)
    assert shown_step(page) == paused

    # Back to the lobby.
    page.click(tid("replay-close"))
    assert page.locator(REPLAY).is_hidden()
    assert page.locator(tid("lobby")).is_visible()
    assert page.locator(tid("game")).is_hidden()


def test_a_replay_on_a_phone_sized_screen(new_page: Any, stored_web_server: Any) -> None:
    play_scripted_games(stored_web_server, "vera", 1)
    page = new_page(PHONE)
    register(page, stored_web_server.url, "wyn")
    page.click(tid("past-toggle"))
    page.locator(tid("past-game"), has_text="vera").first.locator(tid("past-replay")).click()
    page.locator(REPLAY).wait_for()
    total = int(page.locator(tid("replay-step")).get_attribute("data-total"))
    page.click(tid("replay-forward"))
    wait_for_step(page, 1)
    page.locator(tid("replay-slider")).fill(str(total // 2))
    wait_for_step(page, total // 2)
    screenshot(page, "replay-phone.png")
    # The phone-sized page has no sideways scrolling, and the controls are on screen width.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for name in ("replay-back", "replay-play", "replay-forward", "replay-slider"):
        box = page.locator(tid(name)).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], name
    page.click(tid("replay-close"))
    page.locator(tid("past-games")).wait_for()


def test_past_games_come_a_page_at_a_time_and_filter_by_handle(new_page: Any, stored_web_server: Any) -> None:
    play_scripted_games(stored_web_server, "xan", 11)
    page = new_page()
    register(page, stored_web_server.url, "yui")
    # yui's only finished game: advertised, then cancelled before anyone moved.
    advertise(page, "Never played", seats=3)
    page.click(tid("cancel-game"))
    page.locator(tid("banner"), has_text="Game cancelled").wait_for()

    everything: list[dict[str, Any]] = []
    cursor = ""
    while True:
        answer = api(stored_web_server, f"games?game_type=apologies&limit=10{cursor}")
        everything += answer["games"]
        if answer["next"] is None:
            break
        cursor = f"&before={answer['next']}"
    assert len(everything) >= 13

    page.click(tid("past-toggle"))
    items = page.locator(tid("past-game"))
    more = page.locator(tid("past-more"))
    more.wait_for()
    assert items.count() == 10
    # "More" follows `next` until the API has no more: every game once, newest first.
    while more.is_visible():
        count = items.count()
        more.click()
        page.wait_for_function(
            f"() => document.querySelectorAll(\"[data-testid='past-game']\").length > {count}"
            " && !document.querySelector(\"[data-testid='past-loading']\")"
        )
    ids = [items.nth(i).get_attribute("data-game-id") for i in range(items.count())]
    assert ids == [game["id"] for game in everything]

    # Only mine: the cancelled game, which has nothing to replay.
    page.check(tid("past-mine"))
    page.locator(tid("past-game"), has_text="Never played").wait_for()
    page.wait_for_function("() => document.querySelectorAll(\"[data-testid='past-game']\").length === 1")
    mine = items.first
    assert "cancelled" in mine.inner_text()
    assert mine.locator(tid("past-replay")).is_disabled()
    assert more.is_hidden()
    page.uncheck(tid("past-mine"))
    page.wait_for_function("() => document.querySelectorAll(\"[data-testid='past-game']\").length === 10")

    # A game of one's own takes the replay's place, and replays wait until it is over.
    page.locator(f"{tid('past-replay')}:not([disabled])").first.click()
    page.locator(REPLAY).wait_for()
    advertise(page, "Busy", seats=2)
    assert page.locator(REPLAY).is_hidden()
    page.locator(f"{tid('past-replay')}:not([disabled])").first.wait_for(state="detached")
    page.click(tid("cancel-game"))
    page.locator(f"{tid('past-replay')}:not([disabled])").first.wait_for()


def test_api_errors_are_shown_in_words(new_page: Any, web_server: Any, stored_web_server: Any) -> None:
    if web_server.kind != "parlour":
        return  # the reference server has no API at all
    # A server started with --store none keeps no records: its API answers 503, in words.
    page = new_page(expected_errors=r"status of 503")
    register(page, web_server.url, "zed")
    page.click(tid("past-toggle"))
    error = page.locator(tid("past-error"))
    error.wait_for()
    assert error.inner_text() == "Past games are not available: this server keeps no records (--store none)."
    assert page.locator(tid("past-more")).is_hidden()
    # A game the store does not know: 404, in words.
    stored = new_page(expected_errors=r"status of 404")
    stored.goto(stored_web_server.url)
    stored.locator(tid("register")).wait_for()
    said = stored.evaluate(
        """async () => {
            const records = await import(new URL('js/records.js', location.href));
            try { await records.loadGame('no-such-game'); return 'loaded'; }
            catch (error) { return [error.name, error.status, error.message]; }
        }"""
    )
    assert said == ["ApiError", 404, "no game with this id"]


def test_records_in_words(new_page: Any, web_server: Any) -> None:
    """The replay's pure helpers (js/apologies-replay.js) on hand-made records."""
    page = new_page()
    page.goto(web_server.url)
    page.wait_for_selector(tid("register"))
    result = page.evaluate(
        """async () => {
            const r = await import(new URL('js/apologies-replay.js', location.href));
            const pawn = (color, id, square) => ({color, id: String(id), start: square === null, home: false, safe: null, square});
            const view = (red, yellow, action, winner = null) => ({
                players: [{color: 'RED', turns: 0, pawns: [pawn('RED', 0, red)]},
                          {color: 'YELLOW', turns: 0, pawns: [pawn('YELLOW', 0, yellow)]}],
                action, to_move: null, winner});
            const seats = [{handle: 'ann', robot: false}, {handle: 'Bilbo', robot: true}];
            const record = {
                state: 'COMPLETED', seats, result: {winners: [1], reason: 'completed', comment: 'Player Bilbo won after 9 turns'},
                initial: view(null, 20, {action: 'Game started with mode: GameMode.STANDARD', color: null, card: null}),
                moves: [
                    {seq: 0, seat: 0, handle: 'ann', kind: 'move', view: view(4, 20, {action: 'Played card 1: [ Red0->square 4, ]', color: 'RED', card: 'CARD_1'})},
                    {seq: 1, seat: 1, handle: 'Bilbo', kind: 'move', view: view(null, 4, {action: 'Game completed: winner is Yellow after 9 turns', color: null, card: null}, 'YELLOW')},
                ],
            };
            const steps = r.replaySteps(record);
            return {
                count: steps.length,
                colors: r.seatColors(record),
                start: r.stepInfo(record, steps, 0).text,
                first: r.stepInfo(record, steps, 1),
                last: r.stepInfo(record, steps, 2),
                moved: [...r.movedPawns(steps, 2)],
                won: r.resultText(record),
                cancelled: r.resultText({state: 'CANCELLED', seats, result: {reason: 'NOT_VIABLE', comment: 'Player ann disconnected'}}),
                aborted: r.resultText({state: 'ABORTED', seats, result: {reason: 'ABORTED', comment: null}}),
                never: r.replaySteps({...record, initial: null, moves: []}).length,
            };
        }"""
    )
    assert result["count"] == 3
    assert result["colors"] == ["RED", "YELLOW"]
    assert result["start"] == "Game started with mode: STANDARD"
    assert result["first"] == {
        "number": 1,
        "total": 2,
        "handle": "ann",
        "color": "RED",
        "robot": False,
        "text": "played 1: Red0 → square 4",
        "ending": "",
    }
    # The winning move's view carries the closing entry: the move is told from the pawns.
    assert result["last"]["text"] == "moved Yellow0 square 20 → square 4; sends Red0 to start"
    assert result["last"]["ending"] == "Game completed: winner is Yellow after 9 turns"
    assert result["last"]["robot"] is True
    assert sorted(result["moved"]) == ["RED-0", "YELLOW-0"]
    assert result["won"] == "Game over: Bilbo (Yellow) won. Player Bilbo won after 9 turns."
    assert result["cancelled"] == "Game cancelled: too few players were left (Player ann disconnected)."
    assert result["aborted"] == "Game aborted: the server stopped during the game."
    assert result["never"] == 0
