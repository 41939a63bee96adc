"""GET /api/async/replay: a finished server-rules game, move by move, for those allowed to see it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from parlour.api import ApiResponse, HttpRequest
from parlour.protocols.async_ws.http.replay_http import REPLAY_PATH, ReplayRoutes, stored_games
from parlour.storage.sqlite import SQLiteStore

from .harness import Harness
from .test_service import rules_of


def ask(routes: ReplayRoutes, query: str, token: str | None = None, method: str = "GET") -> ApiResponse:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    request = HttpRequest(method, f"{REPLAY_PATH}?{query}", REPLAY_PATH, headers, b"", "127.0.0.1")
    return asyncio.run(routes.replay(request))


T = TypeVar("T")


def play_out(h: Harness, conns: dict[int, int], game_id: int) -> None:
    """Each seat commits its first legal action until the game is over."""
    for _ in range(500):
        game = h.service.hub.games[game_id]
        if game.status != "RUNNING":
            return
        rules = rules_of(h, game_id)
        seat = next(s for s in game.seats if s.local_id == game.turn)
        action = rules.legal_actions(seat.local_id)[0]
        h.send(
            conns[seat.player_id or 0],
            type="CommitActionRequest",
            game_id=game_id,
            turn_index=game.turn_index,
            action=action,
        )
    raise AssertionError("the game did not end")


def fish_game(h: Harness, **config: Any) -> tuple[int, dict[str, tuple[int, int, str]]]:
    people: dict[str, tuple[int, int, str]] = {}
    for name in ("ann", "bob", "cid"):
        account_id, token = h.account(name)
        conn = h.connect()
        h.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
        h.expect(conn, "AsyncConnectedRequest")
        people[name] = (conn, account_id, token)
    ann, bob = people["ann"][0], people["bob"][0]
    for conn in (ann, bob):
        h.send(conn, type="EnterLobbyRequest")
    configuration = {"game_type": "fish", "rules": "fish", "max_players": 2, **config}
    h.send(ann, type="LobbyCreateGameRequest", configuration=configuration)
    game_id: int = h.expect(ann, "LobbyGameCreatedRequest")["game_id"]
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id, password=config.get("password"))
    assert h.service.hub.games[game_id].status == "RUNNING"
    return game_id, people


def test_a_finished_public_game_replays_to_its_final_board() -> None:
    h = Harness()
    game_id, people = fish_game(h)
    routes = ReplayRoutes(h.service, lambda: h.now)
    assert ask(routes, f"game_id={game_id}").status == HTTPStatus.CONFLICT  # still running
    play_out(h, {account: conn for conn, account, _ in people.values()}, game_id)
    game = h.service.hub.games[game_id]
    answer = ask(routes, f"game_id={game_id}")
    assert answer.status == HTTPStatus.OK
    body = msgspec.json.decode(answer.body)
    assert body["rules"] == "fish" and body["status"] == game.status
    assert [p["name"] for p in body["players"]] == ["ann", "bob"]
    assert [m["action"] for m in body["moves"]] == game.actions
    assert [m["index"] for m in body["moves"]] == list(range(1, len(game.actions) + 1))
    # The last step is the final board every player saw, and no view holds a seat's secrets.
    assert body["moves"][-1]["view"] == msgspec.json.decode(rules_of(h, game_id).view(None))
    assert all("you" not in m["view"] for m in body["moves"]) and "you" not in body["initial"]
    assert body["initial"]["players"][0]["penguins"] == [None] * 4  # none placed yet
    assert {entry["player_id"] for entry in body["outcome"]} == {1, 2}


def test_a_password_game_is_for_its_players_only() -> None:
    h = Harness()
    game_id, people = fish_game(h, private=True, password="sesame")
    play_out(h, {account: conn for conn, account, _ in people.values()}, game_id)
    routes = ReplayRoutes(h.service, lambda: h.now)
    assert ask(routes, f"game_id={game_id}").status == HTTPStatus.FORBIDDEN
    assert ask(routes, f"game_id={game_id}&name=cid", people["cid"][2]).status == HTTPStatus.FORBIDDEN
    assert ask(routes, f"game_id={game_id}&name=bob", people["bob"][2]).status == HTTPStatus.OK
    # A name without its token, or with another account's token, is refused.
    assert ask(routes, f"game_id={game_id}&name=bob").status == HTTPStatus.UNAUTHORIZED
    assert ask(routes, f"game_id={game_id}&name=bob", people["cid"][2]).status == HTTPStatus.UNAUTHORIZED


def test_an_admin_reads_any_replay_by_the_role_the_store_holds_now() -> None:
    h = Harness()
    game_id, people = fish_game(h, private=True, password="sesame")
    play_out(h, {account: conn for conn, account, _ in people.values()}, game_id)
    roles = {people["cid"][1]: "admin"}

    async def role(account_id: int) -> str:
        return roles.get(account_id, "")

    routes = ReplayRoutes(h.service, lambda: h.now, role=role)
    query = f"game_id={game_id}&name=cid"
    assert ask(routes, query, people["cid"][2]).status == HTTPStatus.OK
    roles.clear()  # revoked (parlour admin revoke), the server running
    assert ask(routes, query, people["cid"][2]).status == HTTPStatus.FORBIDDEN
    # Without a store, the hub's copy of the role.
    routes = ReplayRoutes(h.service, lambda: h.now)
    h.service.hub.accounts[people["cid"][1]].role = "admin"
    assert ask(routes, query, people["cid"][2]).status == HTTPStatus.OK


@pytest.mark.parametrize(
    ("query", "status"),
    [("", 400), ("game_id=x", 400), ("game_id=0", 400), ("game_id=99", 404), ("game_id=1&who=me", 400)],
)
def test_bad_and_unknown_ids_are_refused_in_words(query: str, status: int) -> None:
    routes = ReplayRoutes(Harness().service, lambda: 0.0)
    answer = ask(routes, query)
    assert answer.status == status
    assert "error" in msgspec.json.decode(answer.body)
    assert ask(routes, "game_id=1", method="POST").status == HTTPStatus.METHOD_NOT_ALLOWED


@pytest.mark.parametrize("text", [str(2**63), "9" * 130, "9" * 5_000])
def test_an_id_past_the_store_integers_is_refused_without_reading_the_store(
    text: str, tmp_path: Path
) -> None:
    """The fuzzer's find: such an id reached SQLite (OverflowError) or int() (ValueError): a 500."""
    store = SQLiteStore(tmp_path / "parlour.db")
    reads: list[int] = []

    async def in_store_thread(work: Callable[[], T]) -> T:
        return work()

    def load_doc(wanted: int) -> bytes | None:
        reads.append(wanted)
        row = store.load_async_game(wanted)
        return None if row is None else row.doc

    try:
        routes = ReplayRoutes(Harness().service, lambda: 0.0, stored_games(in_store_thread, load_doc))
        answer = ask(routes, f"game_id={text}")
        assert answer.status == HTTPStatus.BAD_REQUEST and "error" in msgspec.json.decode(answer.body)
        assert reads == []
        assert ask(routes, f"game_id={2**63 - 1}").status == HTTPStatus.NOT_FOUND  # the largest id is read
        assert reads == [2**63 - 1]
    finally:
        store.close()


def test_a_game_finished_before_a_restart_replays_from_the_store(tmp_path: Path) -> None:
    h = Harness()
    game_id, people = fish_game(h)
    play_out(h, {account: conn for conn, account, _ in people.values()}, game_id)
    for name in ("ann", "bob"):  # both saw the outcome: OVER, no longer a live game
        h.send(people[name][0], type="GameOutcomeConfirmationRequest", game_id=game_id)
    assert h.service.hub.games[game_id].status == "OVER"
    before = ask(ReplayRoutes(h.service, lambda: h.now), f"game_id={game_id}")
    assert before.status == HTTPStatus.OK
    store = SQLiteStore(tmp_path / "parlour.db")
    try:
        store.commit(h.records)  # what the running server stored
        again = h.restart(downtime=60)
        assert game_id not in again.service.hub.games  # a restart restores live games only
        assert ask(ReplayRoutes(again.service, lambda: again.now), f"game_id={game_id}").status == 404
        reads: list[str] = []

        async def in_store_thread(work: Callable[[], T]) -> T:
            reads.append("store")  # the runtime runs this on its store thread
            return work()

        def load_doc(wanted: int) -> bytes | None:
            row = store.load_async_game(wanted)
            return None if row is None else row.doc

        routes = ReplayRoutes(again.service, lambda: again.now, stored_games(in_store_thread, load_doc))
        after = ask(routes, f"game_id={game_id}")
        assert after.status == HTTPStatus.OK and reads == ["store"]
        # Move by move the same replay as before the restart, ending on the final board.
        assert msgspec.json.decode(after.body) == msgspec.json.decode(before.body)
        # Who may read it is still checked, and unknown ids are still unknown.
        assert ask(routes, f"game_id={game_id + 1}").status == HTTPStatus.NOT_FOUND
        assert ask(routes, f"game_id={game_id}&name=bob").status == HTTPStatus.UNAUTHORIZED
    finally:
        store.close()
