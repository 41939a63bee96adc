"""The workflows of the Scalable Server text over the wire, against a real ``parlour serve``.

One test per sequence diagram or workflow of the text, built on the settled decisions of
docs/async-decisions.md (S1-S20) and written from them, not from the server. Every test makes its
own accounts (unique names), so they share one server process and its fresh store.

Conventions checked throughout: local ids are seats in join order, the creator or inviter is seat 1
and plays first (S6, S19); a commit carries the index of the turn it commits and
ActionCommitedRequest the next one, which the next ActionRequiredRequest repeats (S20); direct
replies echo ``request_id`` (S2); every message about a game carries ``game_id`` (S19).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.asyncclient import (
    GAME_TYPE,
    PASSWORD,
    AsyncClient,
    Message,
    Player,
    acreate_account,
    alogin,
    configuration,
    create_account,
    decode_list,
    enter_lobby,
    http_json,
    invite,
    new_player,
    play_first_legal_actions,
    request_id,
    start_open_game,
    unique_name,
)
from tests.processes import clean_env, free_port, running, serve_command

#: A game id no test creates.
NO_GAME = 999_999_999


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A ``parlour serve`` with a fresh store for the whole module; its log is next to the store."""
    directory = tmp_path_factory.mktemp("async")
    port = free_port()
    command = serve_command(port, store=str(directory / "p.db"))
    with (directory / "server.log").open("wb") as log, running(command, port, log, clean_env()):
        yield port


@pytest.fixture
def lonely_port(tmp_path: Path) -> Iterator[int]:
    """A server of its own, for the test that trips the login rate limit (it counts per address too)."""
    port = free_port()
    command = serve_command(port, store=str(tmp_path / "p.db"))
    with (tmp_path / "server.log").open("wb") as log, running(command, port, log, clean_env()):
        yield port


class Table:
    """The players and connections of one test, closed at its end."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.clients: list[AsyncClient] = []

    async def player(self, prefix: str = "p") -> Player:
        player = await new_player(self.port, prefix)
        self.clients.append(player.client)
        return player

    async def connection(self, label: str = "") -> AsyncClient:
        client = await AsyncClient.connect(self.port, label=label)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


def play(port: int, scenario: Callable[[Table], Awaitable[None]]) -> None:
    """Runs ``scenario`` on a fresh Table in its own event loop."""

    async def main() -> None:
        table = Table(port)
        try:
            await scenario(table)
        finally:
            await table.close()

    asyncio.run(main())


# --- Helpers -----------------------------------------------------------------------------------------


async def commit(
    player: Player, game_id: int, turn_index: int, state: str, next_players: list[int], **extra: Any
) -> Message:
    """A CommitActionRequest that must be accepted: ActionCommitedRequest(turn_index + 1) (S20)."""
    rid = request_id("commit")
    await player.client.send(
        {
            "type": "CommitActionRequest",
            "game_id": game_id,
            "turn_index": turn_index,
            "next_state": state,
            "next_players": next_players,
            "request_id": rid,
            **extra,
        }
    )
    reply = await player.client.expect(("ActionCommitedRequest", "ErrorRequest"))
    assert reply["type"] == "ActionCommitedRequest", reply
    assert reply.get("game_id") == game_id, reply
    assert reply.get("turn_index") == turn_index + 1, reply
    assert reply.get("request_id") == rid, reply
    return reply


async def refused(player: Player, message: Message, code: str) -> Message:
    """``message`` must get ErrorRequest ``code`` naming the request (S3)."""
    rid = request_id("refused")
    await player.client.send({**message, "request_id": rid})
    reply = await player.client.expect(("ErrorRequest", "ActionCommitedRequest"))
    assert reply["type"] == "ErrorRequest", reply
    assert reply.get("code") == code, reply
    assert reply.get("request_id") == rid, reply
    assert reply.get("request_type") == message["type"], reply
    assert isinstance(reply.get("message"), str), reply
    return reply


def commit_message(game_id: int, turn_index: int | None, **fields: Any) -> Message:
    message: Message = {"type": "CommitActionRequest", "game_id": game_id, "next_state": "x", **fields}
    if turn_index is not None:
        message["turn_index"] = turn_index
    message.setdefault("next_players", [1])
    return message


def seats(report: Message) -> dict[int, Message]:
    """The StatusReport's players by local id."""
    players = report.get("players", [])
    return {entry["local_id"]: entry for entry in players}


def by_seat(entries: list[Message]) -> dict[int, Message]:
    """Clocks or outcome entries by local id (``player_id``)."""
    return {entry["player_id"]: entry for entry in entries}


async def clocks(player: Player, game_id: int) -> dict[int, Message]:
    rid = request_id("clocks")
    await player.client.send({"type": "GetClocksRequest", "game_id": game_id, "request_id": rid})
    reply = await player.client.expect("ClocksStatusRequest", game_id=game_id)
    assert reply.get("request_id") == rid, reply
    return by_seat(reply["clocks"])


# --- Accounts and authentication (S4, S5) ------------------------------------------------------------


def test_accounts_and_sessions_over_http(port: int) -> None:
    name = unique_name("acct")
    created = http_json(port, "POST", "/api/accounts", {"name": name, "password": PASSWORD})
    assert created.status == 201, created
    assert isinstance(created.body, dict) and set(created.body) == {"player_id", "name"}, created
    assert created.body["name"] == name
    player_id = created.body["player_id"]
    assert isinstance(player_id, int) and player_id >= 1, created

    taken = http_json(port, "POST", "/api/accounts", {"name": name, "password": "another password"})
    assert taken.status == 409, taken
    assert isinstance(taken.body, dict) and isinstance(taken.body.get("error"), str), taken

    short_name = unique_name("short")
    short = http_json(port, "POST", "/api/accounts", {"name": short_name, "password": "seven77"})
    assert short.status == 400, short
    assert isinstance(short.body, dict) and isinstance(short.body.get("error"), str), short
    # The refused request created nothing: the name is still free.
    later = http_json(port, "POST", "/api/accounts", {"name": short_name, "password": PASSWORD})
    assert later.status == 201, later
    for bad_name in ("", "x" * 41):
        invalid = http_json(port, "POST", "/api/accounts", {"name": bad_name, "password": PASSWORD})
        assert invalid.status == 400, (bad_name, invalid)
        assert isinstance(invalid.body, dict) and isinstance(invalid.body.get("error"), str), invalid

    session = http_json(port, "POST", "/api/sessions", {"name": name, "password": PASSWORD})
    assert session.status == 200, session
    assert isinstance(session.body, dict), session
    assert {"token", "expires", "player_id", "name"} <= set(session.body), session
    assert isinstance(session.body["token"], str) and session.body["token"], session
    assert session.body["player_id"] == player_id and session.body["name"] == name, session
    assert session.body["expires"] > time.time(), session
    assert PASSWORD not in str(session.body), session

    wrong = http_json(port, "POST", "/api/sessions", {"name": name, "password": "not the password"})
    assert wrong.status == 401, wrong
    unknown = http_json(port, "POST", "/api/sessions", {"name": unique_name("ghost"), "password": PASSWORD})
    assert unknown.status == 401, unknown


def test_login_rate_limit(lonely_port: int) -> None:
    name = unique_name("limited")
    other = unique_name("bystander")
    for account in (name, other):
        assert (
            http_json(lonely_port, "POST", "/api/accounts", {"name": account, "password": PASSWORD}).status
            == 201
        )
    for attempt in range(5):
        failed = http_json(
            lonely_port, "POST", "/api/sessions", {"name": name, "password": f"wrong {attempt}!"}
        )
        assert failed.status == 401, (attempt, failed)
    limited = http_json(lonely_port, "POST", "/api/sessions", {"name": name, "password": "wrong again"})
    assert limited.status == 429, limited
    assert int(limited.headers["retry-after"]) > 0, limited.headers
    # A locked name stays locked even for the right password, or the limit would be an oracle.
    locked = http_json(lonely_port, "POST", "/api/sessions", {"name": name, "password": PASSWORD})
    assert locked.status == 429, locked
    assert "retry-after" in locked.headers, locked.headers
    # Another name from the same address is not locked by five failures on this one.
    fine = http_json(lonely_port, "POST", "/api/sessions", {"name": other, "password": PASSWORD})
    assert fine.status == 200, fine


def test_authentication_errors_replacement_and_logout(port: int) -> None:
    async def scenario(table: Table) -> None:
        name = unique_name("auth")
        player_id = await acreate_account(port, name)
        token = await alogin(port, name)
        other = unique_name("other")
        await acreate_account(port, other)

        # Before authenticating, only AsyncAuthRequest and PingRequest are served (S3, S4).
        first = await table.connection("first")
        await first.send({"type": "WhatsNewPussycatRequest", "request_id": "before-auth"})
        error = await first.expect("ErrorRequest", code="UNAUTHENTICATED")
        assert error.get("request_type") == "WhatsNewPussycatRequest", error
        assert error.get("request_id") == "before-auth", error
        refused_auth = await first.auth(name, "not-a-token")
        assert refused_auth["type"] == "AsyncConnectionErrorRequest", refused_auth
        assert refused_auth.get("reason") == "BAD_CREDENTIALS", refused_auth

        # A valid token for another name is refused too.
        second = await table.connection("second")
        mismatch = await second.auth(other, token)
        assert mismatch["type"] == "AsyncConnectionErrorRequest", mismatch
        assert mismatch.get("reason") == "BAD_CREDENTIALS", mismatch

        # The diagram's success: AsyncConnectedRequest(session, player).
        main = await table.connection("main")
        await main.send({"type": "AsyncAuthRequest", "name": name, "sessionToken": token, "request_id": "hi"})
        connected = await main.expect(("AsyncConnectedRequest", "AsyncConnectionErrorRequest"))
        assert connected["type"] == "AsyncConnectedRequest", connected
        assert connected.get("request_id") == "hi", connected
        assert isinstance(connected.get("session"), str) and connected["session"], connected
        assert connected["player"]["player_id"] == player_id, connected
        assert connected["player"]["name"] == name, connected
        assert await main.status() == [], "a new account is in no game"

        # S5: a second successful auth replaces the first connection.
        replacement = await table.connection("replacement")
        again = await replacement.auth(name, token)
        assert again["type"] == "AsyncConnectedRequest", again
        await main.expect("AsyncConnectionErrorRequest", reason="REPLACED")
        await main.wait_closed()
        assert await replacement.status() == []

        # Logging out: later requests are rejected until the next AsyncAuthRequest.
        await replacement.send({"type": "AsyncDisconnectRequest"})
        await replacement.send({"type": "WhatsNewPussycatRequest", "request_id": "after-logout"})
        error = await replacement.expect("ErrorRequest", code="UNAUTHENTICATED")
        assert error.get("request_id") == "after-logout", error
        await replacement.send({"type": "EnterLobbyRequest"})
        await replacement.expect("ErrorRequest", code="UNAUTHENTICATED", request_type="EnterLobbyRequest")
        await replacement.sync()  # the heartbeat still works, and the connection stayed open
        back = await replacement.auth(name, token)
        assert back["type"] == "AsyncConnectedRequest", back
        assert back["player"]["player_id"] == player_id, back
        assert await replacement.status() == []

    play(port, scenario)


def test_ping_is_echoed_exactly(port: int) -> None:
    async def scenario(table: Table) -> None:
        pings: list[Message] = [
            {"type": "PingRequest", "timestamp": 1_700_000_000_123},
            {"type": "PingRequest", "timestamp": 12.5, "request_id": "ping-float"},
        ]
        anonymous = await table.connection("anonymous")
        for ping in pings:  # before authentication too (S3)
            await anonymous.send(ping)
            echo = await anonymous.expect("PingRequest", timestamp=ping["timestamp"])
            assert echo == ping
        player = await table.player("ping")
        for ping in [*pings, {"type": "PingRequest", "timestamp": 0, "request_id": "zero"}]:
            await player.client.send(ping)
            echo = await player.client.expect("PingRequest", timestamp=ping["timestamp"])
            assert echo == ping

    play(port, scenario)


def test_bad_requests_get_bad_request_and_keep_the_connection(port: int) -> None:
    async def scenario(table: Table) -> None:
        player = await table.player("bad")
        client = player.client
        # (frame, request_type, request_id): the last two are checked when the frame has them.
        frames: list[tuple[str, str | None, str | None]] = [
            ("{not json", None, None),
            ("[1, 2, 3]", None, None),
            ('"PingRequest"', None, None),
            ('{"type": "NoSuchRequest", "request_id": "unknown-type"}', None, None),
            ('{"no_type": true}', None, None),
            (
                '{"type": "PingRequest", "timestamp": "soon", "request_id": "bad-field"}',
                "PingRequest",
                "bad-field",
            ),
            ('{"type": "WhatsNewPussycatRequest", "bogus": 1}', "WhatsNewPussycatRequest", None),
            (
                '{"type": "WhatsNewPussycatRequest", "game_id": -4, "request_id": "bad-id"}',
                "WhatsNewPussycatRequest",
                "bad-id",
            ),
        ]
        for frame, request_type, rid in frames:
            await client.send_text(frame)
            error = await client.expect("ErrorRequest")
            assert error.get("code") == "BAD_REQUEST", (frame, error)
            assert isinstance(error.get("message"), str) and error["message"], (frame, error)
            if request_type is not None:
                assert error.get("request_type") == request_type, (frame, error)
            if rid is not None:
                assert error.get("request_id") == rid, (frame, error)
        await client.send_binary(b'{"type": "PingRequest", "timestamp": 1}')
        error = await client.expect("ErrorRequest")
        assert error.get("code") == "BAD_REQUEST", error
        await client.sync()
        assert await client.status() == []
        assert not client.closed

    play(port, scenario)


# --- Lobby -------------------------------------------------------------------------------------------


def test_lobby_enter_exit_and_already_in_lobby(port: int) -> None:
    async def scenario(table: Table) -> None:
        client = (await table.player("lobby")).client
        await client.send({"type": "EnterLobbyRequest", "request_id": "enter"})
        await client.expect("LobbyEnteredRequest", request_id="enter")
        await client.send({"type": "EnterLobbyRequest", "request_id": "again"})
        error = await client.expect("ErrorRequest", code="PLAYER_ALREADY_IN_LOBBY")
        assert error.get("request_id") == "again", error
        assert error.get("request_type") == "EnterLobbyRequest", error
        await client.send({"type": "ExitLobbyRequest", "request_id": "exit"})
        await client.expect("LobbyExitedRequest", request_id="exit")
        await client.send({"type": "EnterLobbyRequest", "request_id": "back"})
        await client.expect("LobbyEnteredRequest", request_id="back")

    play(port, scenario)


def test_lobby_player_and_game_lists(port: int) -> None:
    async def scenario(table: Table) -> None:
        creator = await table.player("lister")
        await enter_lobby(creator)
        conf = configuration(3, min_players=2)
        await creator.client.send({"type": "LobbyCreateGameRequest", "configuration": conf})
        game_id = (await creator.client.expect("LobbyGameCreatedRequest"))["game_id"]
        private = configuration(2, private=True, password="sesame")
        await creator.client.send({"type": "LobbyCreateGameRequest", "configuration": private})
        private_id = (await creator.client.expect("LobbyGameCreatedRequest"))["game_id"]
        offline = unique_name("offline")
        offline_id = await acreate_account(port, offline)

        viewer = await table.player("viewer")
        await viewer.client.send({"type": "EnterLobbyRequest"})
        await viewer.client.expect("LobbyEnteredRequest")
        # The first pushes come at once on entering (S13); they are full lists.
        players = decode_list((await viewer.client.expect("LobbyPlayerListRequest"))["player_list"])
        listed = {entry["player_id"]: entry for entry in players}
        assert viewer.player_id in listed, players
        assert listed[viewer.player_id]["name"] == viewer.name
        assert creator.player_id in listed, players
        assert listed[creator.player_id]["name"] == creator.name
        assert offline_id not in listed, "only players in the lobby are listed"

        games = decode_list((await viewer.client.expect("LobbyGameListRequest"))["game_list"])
        open_games = {entry["game_id"]: entry for entry in games}
        assert game_id in open_games, games
        entry = open_games[game_id]
        assert entry["configuration"]["game_type"] == GAME_TYPE, entry
        assert entry["configuration"]["max_players"] == 3, entry
        if entry.get("players"):
            assert creator.player_id in [p["player_id"] for p in entry["players"]], entry
        for listed_game in games:
            assert "password" not in listed_game["configuration"], listed_game
        if private_id in open_games:
            assert open_games[private_id]["configuration"].get("private") is True

    play(port, scenario)


def test_player_information(port: int) -> None:
    async def scenario(table: Table) -> None:
        asker = await table.player("asker")
        other = await table.player("asked")
        offline = unique_name("away")
        offline_id = await acreate_account(port, offline)
        await enter_lobby(asker)
        await asker.client.send(
            {"type": "AskPlayerInfoRequest", "player_id": other.player_id, "request_id": "info"}
        )
        info = await asker.client.expect("LobbyPlayerInfoRequest", request_id="info")
        assert info["player"]["player_id"] == other.player_id, info
        assert info["player"]["name"] == other.name, info
        assert info["player"].get("presence", "OFFLINE") == "ONLINE", info  # connected (S15)
        await asker.client.send({"type": "AskPlayerInfoRequest", "player_id": offline_id})
        info = await asker.client.expect("LobbyPlayerInfoRequest")
        assert info["player"]["player_id"] == offline_id and info["player"]["name"] == offline, info
        assert info["player"].get("presence", "OFFLINE") == "OFFLINE", info
        await asker.client.send(
            {"type": "AskPlayerInfoRequest", "player_id": NO_GAME, "request_id": "nobody"}
        )
        error = await asker.client.expect(("ErrorRequest", "LobbyPlayerInfoRequest"))
        assert error["type"] == "ErrorRequest", error
        assert error.get("request_id") == "nobody", error

    play(port, scenario)


def test_create_join_and_start_when_full(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("a")), (await table.player("b")), (await table.player("c"))
        await enter_lobby(a)
        # S7: out-of-range or inconsistent configurations are BAD_REQUEST naming the field.
        for bad, field_name in (
            (configuration(9), "max_players"),
            (configuration(2, min_players=3), "min_players"),
            ({**configuration(2), "colour": "red"}, "colour"),
        ):
            await a.client.send({"type": "LobbyCreateGameRequest", "configuration": bad})
            error = await a.client.expect("ErrorRequest")
            assert error.get("code") == "BAD_REQUEST", (bad, error)
            assert field_name in error.get("message", ""), (bad, error)

        conf = configuration(3, min_players=2, private=True, password="sesame", observable=False)
        await a.client.send(
            {
                "type": "LobbyCreateGameRequest",
                "configuration": conf,
                "initial_state": "s0",
                "request_id": "mk",
            }
        )
        created = await a.client.expect("LobbyGameCreatedRequest", request_id="mk")
        game_id = created["game_id"]
        assert isinstance(game_id, int) and game_id >= 1, created
        assert created["configuration"]["game_type"] == GAME_TYPE, created
        assert created["configuration"]["max_players"] == 3, created
        assert created["configuration"].get("private") is True, created
        assert "password" not in created["configuration"], "the password is never sent back (S19)"

        await enter_lobby(b)
        await b.client.send(
            {"type": "LobbyJoinGameRequest", "game_id": game_id, "password": "sesame", "request_id": "jb"}
        )
        joined = await b.client.expect("LobbyNewPlayerRequest", game_id=game_id)
        assert joined.get("request_id") == "jb", joined
        assert joined["local_id"] == 2, joined
        assert joined["player"]["player_id"] == b.player_id and joined["player"]["name"] == b.name, joined
        told = await a.client.expect("LobbyNewPlayerRequest", game_id=game_id)
        assert told["local_id"] == 2 and told["player"]["player_id"] == b.player_id, told
        assert "request_id" not in told, "a push never carries someone else's request_id"
        await a.client.no_message("GameCreatedRequest")

        await enter_lobby(c)
        await c.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id, "password": "sesame"})
        joined = await c.client.expect("LobbyNewPlayerRequest", game_id=game_id)
        assert joined["local_id"] == 3 and joined["player"]["player_id"] == c.player_id, joined
        for other in (a, b):
            told = await other.client.expect("LobbyNewPlayerRequest", game_id=game_id, local_id=3)
            assert told["player"]["player_id"] == c.player_id, told

        # Full: the game starts, GameCreatedRequest to every seat, then seat 1 plays turn 1.
        for player in (a, b, c):
            started = await player.client.expect("GameCreatedRequest", game_id=game_id)
            report = started["status_report"]
            assert report["game_id"] == game_id, started
            assert report["status"] == "RUNNING", started
            assert "invited_by" not in started, started
            assert "password" not in report["configuration"], started
            players = seats(report)
            assert sorted(players) == [1, 2, 3], report
            assert [players[seat].get("player_id") for seat in (1, 2, 3)] == [
                a.player_id,
                b.player_id,
                c.player_id,
            ], report
            assert all(entry["kind"] == "HUMAN" for entry in players.values()), report
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert required["player_id"] == 1 and required["turn_index"] == 1, required
        assert required["state"] == "s0", required
        assert required["player_clock"]["player_id"] == 1, required
        history = [m["type"] for m in a.client.history]
        assert history.index("GameCreatedRequest") < history.index("ActionRequiredRequest"), history
        await b.client.no_message("ActionRequiredRequest")
        await c.client.no_message("ActionRequiredRequest")

        # "when that game starts, the player is automatically exited from the lobby"
        await a.client.send({"type": "EnterLobbyRequest", "request_id": "re-enter"})
        await a.client.expect("LobbyEnteredRequest", request_id="re-enter")

    play(port, scenario)


def test_join_denials(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("a")), (await table.player("b")), (await table.player("c"))
        for player in (a, b, c):
            await enter_lobby(player)
        await a.client.send(
            {
                "type": "LobbyCreateGameRequest",
                "configuration": configuration(3, private=True, password="sesame"),
            }
        )
        game_id = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]

        async def denied(player: Player, join: Message) -> str:
            rid = request_id("join")
            await player.client.send({"type": "LobbyJoinGameRequest", **join, "request_id": rid})
            reply = await player.client.expect(
                ("LobbyJoinDeniedRequest", "LobbyNewPlayerRequest", "ErrorRequest")
            )
            assert reply["type"] == "LobbyJoinDeniedRequest", reply
            assert reply.get("game_id") == join["game_id"], reply
            assert reply.get("request_id") == rid, reply
            cause: str = reply["cause"]
            return cause

        assert await denied(b, {"game_id": game_id}) == "WRONG_PASSWORD"
        assert await denied(b, {"game_id": game_id, "password": "open sesame"}) == "WRONG_PASSWORD"
        assert await denied(a, {"game_id": game_id, "password": "sesame"}) == "ALREADY_JOINED"
        assert await denied(c, {"game_id": NO_GAME}) == "UNKNOWN_GAME"
        await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id, "password": "sesame"})
        await b.client.expect("LobbyNewPlayerRequest", game_id=game_id, local_id=2)
        assert await denied(b, {"game_id": game_id, "password": "sesame"}) == "ALREADY_JOINED"
        # Denied joins are not told to the players of the game: the creator heard of b only.
        await a.client.expect("LobbyNewPlayerRequest", game_id=game_id, local_id=2)
        await a.client.no_message("LobbyNewPlayerRequest")

        # A full game has started: its seats are taken.
        full = await start_open_game(a, [b])
        await enter_lobby(c)
        assert await denied(c, {"game_id": full}) in ("GAME_FULL", "ALREADY_STARTED")

    play(port, scenario)


def test_leave_open_game(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c, d = [await table.player(x) for x in "abcd"]
        game_id = await start_open_game(a, [b, c], max_players=4)

        # A player who is not the creator leaves: she and the others are told, the game stays open.
        await b.client.send({"type": "LobbyLeaveGameRequest", "game_id": game_id, "request_id": "bye"})
        left = await b.client.expect("LobbyPlayerLeftGameRequest", game_id=game_id)
        assert left.get("request_id") == "bye", left
        assert left["player_id"] == b.player_id and left.get("aborted", False) is False, left
        for other in (a, c):
            told = await other.client.expect("LobbyPlayerLeftGameRequest", game_id=game_id)
            assert told["player_id"] == b.player_id and told.get("aborted", False) is False, told
        report = await a.client.report(game_id)
        assert report["status"] == "NOT_STARTED", report
        members = [entry.get("player_id") for entry in report.get("players", [])]
        assert b.player_id not in members and a.player_id in members and c.player_id in members, report

        # The creator leaves: the open game aborts, the others are told so.
        await a.client.send({"type": "LobbyLeaveGameRequest", "game_id": game_id, "request_id": "abort"})
        left = await a.client.expect("LobbyPlayerLeftGameRequest", game_id=game_id)
        assert left.get("request_id") == "abort", left
        assert left["player_id"] == a.player_id and left.get("aborted") is True, left
        told = await c.client.expect("LobbyPlayerLeftGameRequest", game_id=game_id, player_id=a.player_id)
        assert told.get("aborted") is True, told
        await enter_lobby(d)
        await d.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
        reply = await d.client.expect(("LobbyJoinDeniedRequest", "LobbyNewPlayerRequest"))
        assert reply["type"] == "LobbyJoinDeniedRequest", reply

    play(port, scenario)


def test_early_start_and_start_denials(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("a")), (await table.player("b")), (await table.player("c"))
        for player in (a, b, c):
            await enter_lobby(player)

        async def start(player: Player, game_id: int) -> Message:
            rid = request_id("start")
            await player.client.send({"type": "LobbyStartGameRequest", "game_id": game_id, "request_id": rid})
            reply = await player.client.expect(
                ("LobbyStartGameDeniedRequest", "GameCreatedRequest", "ErrorRequest")
            )
            assert reply.get("game_id") == game_id, reply
            assert reply.get("request_id") == rid, reply
            return reply

        async def denied(player: Player, game_id: int) -> str:
            reply = await start(player, game_id)
            assert reply["type"] == "LobbyStartGameDeniedRequest", reply
            cause: str = reply["cause"]
            return cause

        await a.client.send(
            {"type": "LobbyCreateGameRequest", "configuration": configuration(4, min_players=3)}
        )
        three = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
        await b.client.send({"type": "LobbyJoinGameRequest", "game_id": three})
        await b.client.expect("LobbyNewPlayerRequest", game_id=three, local_id=2)
        assert await denied(a, three) == "NOT_ENOUGH_PLAYERS"  # 2 of min_players 3

        await a.client.send(
            {"type": "LobbyCreateGameRequest", "configuration": configuration(4, min_players=2)}
        )
        game_id = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
        assert await denied(a, game_id) == "NOT_ENOUGH_PLAYERS"  # the creator alone
        await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
        await b.client.expect("LobbyNewPlayerRequest", game_id=game_id, local_id=2)
        assert await denied(b, game_id) == "NOT_CREATOR"

        started = await start(a, game_id)
        assert started["type"] == "GameCreatedRequest", started
        assert started["status_report"]["status"] == "RUNNING", started
        assert sorted(seats(started["status_report"])) == [1, 2], started
        pushed = await b.client.expect("GameCreatedRequest", game_id=game_id)
        assert "request_id" not in pushed, pushed
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert required["player_id"] == 1 and required["turn_index"] == 1, required
        await b.client.no_message("ActionRequiredRequest", game_id=game_id)

        assert await denied(a, game_id) == "ALREADY_STARTED"
        await c.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
        refusal = await c.client.expect(("LobbyJoinDeniedRequest", "LobbyNewPlayerRequest"))
        assert refusal["type"] == "LobbyJoinDeniedRequest" and refusal["cause"] == "ALREADY_STARTED", refusal
        assert await denied(a, NO_GAME) == "UNKNOWN_GAME"
        # The two seats play: next_players may name only seats 1 and 2.
        await commit(a, game_id, 1, "A", [2, 1])
        await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)

    play(port, scenario)


def test_too_many_offers(port: int) -> None:
    async def scenario(table: Table) -> None:
        a = await table.player("offers")
        await enter_lobby(a)
        offers = []
        for _ in range(3):
            await a.client.send({"type": "LobbyCreateGameRequest", "configuration": configuration(2)})
            offers.append((await a.client.expect("LobbyGameCreatedRequest"))["game_id"])
        assert len(set(offers)) == 3, offers
        error = await refused(
            a, {"type": "LobbyCreateGameRequest", "configuration": configuration(2)}, "TOO_MANY_OFFERS"
        )
        assert error.get("request_type") == "LobbyCreateGameRequest"
        # Withdrawing an offer makes room for another.
        await a.client.send({"type": "LobbyLeaveGameRequest", "game_id": offers[0]})
        await a.client.expect("LobbyPlayerLeftGameRequest", game_id=offers[0], aborted=True)
        await a.client.send({"type": "LobbyCreateGameRequest", "configuration": configuration(2)})
        await a.client.expect("LobbyGameCreatedRequest")

    play(port, scenario)


# --- Invitations -------------------------------------------------------------------------------------


def test_invitation_accepted_by_all_starts_the_game(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("host")), (await table.player("b")), (await table.player("c"))
        await a.client.send(
            {
                "type": "EngageGameWithFriendsRequest",
                "friend_ids": [b.player_id, c.player_id],
                "configuration": configuration(3),
                "request_id": "engage",
            }
        )
        created = await a.client.expect("GameCreatedRequest")
        assert created.get("request_id") == "engage", created
        assert created.get("invited_by") == a.player_id, created
        game_id = created["game_id"]
        report = created["status_report"]
        assert report["status"] == "NOT_STARTED", created
        players = seats(report)
        assert [players[seat].get("player_id") for seat in (1, 2, 3)] == [
            a.player_id,
            b.player_id,
            c.player_id,
        ], report
        for invitee in (b, c):
            told = await invitee.client.expect("GameCreatedRequest", game_id=game_id)
            assert told.get("invited_by") == a.player_id, told
            assert told["status_report"]["status"] == "NOT_STARTED", told
            assert "request_id" not in told, told

        await b.client.send(
            {"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True, "request_id": "yes"}
        )
        answered = await b.client.expect("InvitationAnsweredRequest", game_id=game_id)
        assert answered["accept"] is True and answered.get("request_id") == "yes", answered
        await a.client.no_message("ActionRequiredRequest")
        assert (await a.client.report(game_id))["status"] == "NOT_STARTED"

        await c.client.send({"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True})
        answered = await c.client.expect("InvitationAnsweredRequest", game_id=game_id)
        assert answered["accept"] is True, answered
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert required["player_id"] == 1 and required["turn_index"] == 1, required
        await b.client.no_message("ActionRequiredRequest")
        await c.client.no_message("ActionRequiredRequest")
        report = await a.client.report(game_id)
        assert report["status"] == "RUNNING" and report.get("turn") == 1 and report["turn_index"] == 1, report

        await commit(a, game_id, 1, "A", [2, 3, 1])
        await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)

    play(port, scenario)


def test_invitation_declined_aborts_it(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b = (await table.player("host")), (await table.player("b"))
        for friends in ([0], [0, 0], []):  # empty, or robots only
            await refused(a, {"type": "EngageGameWithFriendsRequest", "friend_ids": friends}, "BAD_REQUEST")

        # A robot invited with id 0 (no configuration: the server's default).
        await a.client.send({"type": "EngageGameWithFriendsRequest", "friend_ids": [b.player_id, 0]})
        created = await a.client.expect("GameCreatedRequest", invited_by=a.player_id)
        game_id = created["game_id"]
        players = seats(created["status_report"])
        assert sorted(players) == [1, 2, 3], created
        assert players[1].get("player_id") == a.player_id and players[2].get("player_id") == b.player_id
        assert players[3]["kind"] == "ROBOT" and "player_id" not in players[3], created
        await b.client.expect("GameCreatedRequest", game_id=game_id, invited_by=a.player_id)

        await b.client.send(
            {"type": "AnswerInvitationRequest", "game_id": game_id, "accept": False, "request_id": "no"}
        )
        answered = await b.client.expect("InvitationAnsweredRequest", game_id=game_id)
        assert answered["accept"] is False and answered.get("request_id") == "no", answered
        assert (await a.client.report(game_id))["status"] == "ABORTED"
        await a.client.no_message("ActionRequiredRequest")

        # The inviter quits an invitation with GameForfeitRequest: the whole invitation aborts.
        other = await invite(a, [b])
        await a.client.send({"type": "GameForfeitRequest", "game_id": other})
        await a.client.sync()
        assert (await a.client.report(other))["status"] in ("ABORTING", "ABORTED")

    play(port, scenario)


# --- Turns -------------------------------------------------------------------------------------------


def test_standard_turns_of_three_players(port: int) -> None:
    """The "Standard Game Turn" diagram: A, B, C, then C again (turn indexes 1, 2, 3, 4; S20)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("A")), (await table.player("B")), (await table.player("C"))
        game_id = await start_open_game(a, [b, c], initial_state="")

        await commit(a, game_id, 1, "A", [2, 3, 1])
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (2, 2, "A"), required
        await a.client.no_message("ActionRequiredRequest")
        await c.client.no_message("ActionRequiredRequest")

        await commit(b, game_id, 2, "B", [3, 1, 2])
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (3, 3, "B"), required

        await commit(c, game_id, 3, "C", [3, 2, 1])  # C plays again
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (3, 4, "C"), required
        await a.client.no_message("ActionRequiredRequest")
        await b.client.no_message("ActionRequiredRequest")

        await commit(c, game_id, 4, "C1", [1, 2, 3])
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (1, 5, "C1"), required

        report = await b.client.report(game_id)
        assert (report.get("turn"), report.get("active_player"), report["turn_index"]) == (1, 1, 5), report
        assert report["state"] == "C1", report

    play(port, scenario)


def test_broadcast_commit(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("A")), (await table.player("B")), (await table.player("C"))
        game_id = await start_open_game(a, [b, c])
        await commit(a, game_id, 1, "toto", [2, 3, 1], broadcast=True)
        for other in (b, c):
            update = await other.client.expect("GameStateUpdatedRequest", game_id=game_id)
            assert (update["state"], update["turn_index"], update.get("player_id")) == ("toto", 2, 1), update
        await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)
        # Without broadcast, nobody else hears of the new state.
        await commit(b, game_id, 2, "quiet", [3, 1, 2])
        await a.client.no_message("GameStateUpdatedRequest")
        await c.client.no_message("GameStateUpdatedRequest")
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=3)
        assert required["state"] == "quiet", required

    play(port, scenario)


def test_commit_errors(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("A")), (await table.player("B")), (await table.player("C"))
        outsider = await table.player("out")
        game_id = await start_open_game(a, [b, c], initial_state="s0")

        error = await refused(b, commit_message(game_id, 1, next_players=[3, 1, 2]), "NOT_YOUR_TURN")
        assert error.get("game_id") == game_id, error
        error = await refused(outsider, commit_message(game_id, 1, next_players=[2]), "UNKNOWN_PLAYER")
        await refused(a, commit_message(NO_GAME, 1, next_players=[2]), "UNKNOWN_GAME")
        error = await refused(a, commit_message(game_id, 1, next_players=[4]), "UNKNOWN_PLAYER")
        assert error.get("game_id") == game_id, error
        error = await refused(a, commit_message(game_id, 2, next_players=[2]), "INDEX_CONFLICT")
        assert error.get("game_id") == game_id, error
        await refused(a, commit_message(game_id, 1, next_players=[2], pause_time=3600), "BAD_REQUEST")
        await refused(a, commit_message(game_id, 1, next_players=[2], action="move"), "BAD_REQUEST")
        await refused(
            a,
            commit_message(
                game_id,
                1,
                next_players=[2],
                next_simultaneous=True,
                simultaneous_players=[1, 2],
                interruption_window_duration=1000,
                interruption_players=[3],
            ),
            "BAD_REQUEST",
        )
        await refused(a, commit_message(game_id, 0, next_players=[2]), "BAD_REQUEST")
        await b.client.no_message("ActionRequiredRequest")

        # None of that changed the game; a forfeited player may not play (YOU_FORFEITED).
        await b.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await b.client.expect("GameForfeitedRequest", game_id=game_id, player_id=2)
        await commit(a, game_id, 1, "A", [2, 1, 3])
        await a.client.expect("PlayerTimeoutRequest", game_id=game_id, offender_id=2, turn_index=2)
        await refused(b, commit_message(game_id, 2, next_players=[3, 1]), "YOU_FORFEITED")
        await refused(c, commit_message(game_id, 2, next_players=[1, 2]), "NOT_YOUR_TURN")
        await refused(a, commit_message(game_id, 1, next_players=[3], player_id=2), "INDEX_CONFLICT")
        await commit(a, game_id, 2, "B", [3, 1, 2], player_id=2)
        await c.client.expect("ActionRequiredRequest", game_id=game_id, player_id=3, turn_index=3)
        await refused(c, commit_message(game_id, 2, next_players=[1]), "INDEX_CONFLICT")
        await commit(c, game_id, 3, "C", [1, 2, 3])
        assert not a.client.closed and not b.client.closed and not c.client.closed

    play(port, scenario)


def test_one_player_in_several_games(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c, d = [await table.player(x) for x in "abcd"]
        first = await start_open_game(a, [b], initial_state="first")
        second = await start_open_game(a, [c], initial_state="second")
        invited = await invite(a, [d], max_players=2)
        assert len({first, second, invited}) == 3

        # Turns in different games interleave freely, each with its own index.
        await commit(a, second, 1, "second-A", [2, 1])
        required = await c.client.expect("ActionRequiredRequest", game_id=second)
        assert (required["turn_index"], required["state"]) == (2, "second-A"), required
        await commit(a, first, 1, "first-A", [2, 1])
        required = await b.client.expect("ActionRequiredRequest", game_id=first)
        assert (required["turn_index"], required["state"]) == (2, "first-A"), required
        await commit(c, second, 2, "second-C", [1, 2])
        required = await a.client.expect("ActionRequiredRequest", game_id=second)
        assert (required["turn_index"], required["state"]) == (3, "second-C"), required
        await a.client.no_message("ActionRequiredRequest", game_id=first)

        reports = {report["game_id"]: report for report in await a.client.status()}
        assert {first, second, invited} <= set(reports), reports
        assert (reports[first]["status"], reports[first]["turn_index"], reports[first].get("turn")) == (
            "RUNNING",
            2,
            2,
        )
        assert (reports[second]["status"], reports[second]["turn_index"], reports[second].get("turn")) == (
            "RUNNING",
            3,
            1,
        )
        assert reports[invited]["status"] == "NOT_STARTED"
        only = await a.client.status(first)
        assert [report["game_id"] for report in only] == [first], only
        # Each opponent sees only the games she is in.
        assert {report["game_id"] for report in await b.client.status()} == {first}
        assert {report["game_id"] for report in await c.client.status()} == {second}

    play(port, scenario)


def test_status_report_fields(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, outsider = (await table.player("A")), (await table.player("B")), (await table.player("out"))
        game_id = await start_open_game(a, [b], initial_state="s0", private=True, password="sesame")
        report = await a.client.report(game_id)
        assert (report["status"], report.get("turn"), report.get("active_player")) == ("RUNNING", 1, 1), (
            report
        )
        assert (report["turn_index"], report.get("state")) == (1, "s0"), report

        await commit(a, game_id, 1, "s1", [2, 1], next_summary_data="sum1")
        await b.client.send({"type": "WhatsNewPussycatRequest", "game_id": game_id, "request_id": "news"})
        reply = await b.client.expect("GameStatusReportRequest", request_id="news")
        assert [r["game_id"] for r in reply["status_reports"]] == [game_id], reply
        report = reply["status_reports"][0]
        assert report["configuration"]["game_type"] == GAME_TYPE, report
        assert report["configuration"]["max_players"] == 2, report
        assert "password" not in report["configuration"], report
        assert report["status"] == "RUNNING", report
        players = seats(report)
        assert sorted(players) == [1, 2], report
        for seat, player in ((1, a), (2, b)):
            entry = players[seat]
            assert (entry.get("player_id"), entry["name"], entry["kind"]) == (
                player.player_id,
                player.name,
                "HUMAN",
            )
            assert entry.get("state", "ACTIVE") == "ACTIVE", entry
        assert (report.get("turn"), report.get("active_player"), report["turn_index"]) == (2, 2, 2), report
        assert (report.get("state"), report.get("summary_data")) == ("s1", "sum1"), report
        assert report.get("outcome") is None and report.get("outcome_not_seen", []) == [], report

        # Nobody learns about a game she is not in.
        await outsider.client.send({"type": "WhatsNewPussycatRequest", "game_id": game_id})
        reply = await outsider.client.expect(("GameStatusReportRequest", "ErrorRequest"))
        if reply["type"] == "GameStatusReportRequest":
            assert reply.get("status_reports", []) == [], reply
        else:
            assert reply["code"] == "UNKNOWN_GAME", reply
        assert game_id not in [r["game_id"] for r in await outsider.client.status()]

    play(port, scenario)


# --- Forfeit, robots, abort, game over, clocks -------------------------------------------------------


def test_forfeit_and_robot_hot_swap(port: int) -> None:
    """The "Robots" diagram with B forfeited: A plays B's turn for it, then C plays."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("A")), (await table.player("B")), (await table.player("C"))
        game_id = await start_open_game(a, [b, c], initial_state="")

        await b.client.send({"type": "GameForfeitRequest", "game_id": game_id, "request_id": "quit"})
        forfeited = await b.client.expect("GameForfeitedRequest", game_id=game_id)
        assert forfeited["player_id"] == 2 and forfeited.get("request_id") == "quit", forfeited
        for other in (a, c):
            await other.client.expect("GameForfeitedRequest", game_id=game_id, player_id=2)
            await other.client.expect(
                "PlayerReplacedRequest", game_id=game_id, player_id=2, reason="FORFEITED"
            )
        report = await a.client.report(game_id)
        assert report["status"] == "RUNNING", report
        assert seats(report)[2].get("state") == "FORFEITED", report

        # A commits with B next: A, the committer and first present seat in next_players, plays B.
        await commit(a, game_id, 1, "A", [2, 1, 3])
        timeout = await a.client.expect("PlayerTimeoutRequest", game_id=game_id, offender_id=2)
        assert (timeout["status"], timeout["state"], timeout["turn_index"]) == ("FORFEITED", "A", 2), timeout
        await b.client.no_message("ActionRequiredRequest")
        await c.client.no_message(("PlayerTimeoutRequest", "ActionRequiredRequest"))
        report = await c.client.report(game_id)
        assert (report.get("turn"), report.get("active_player"), report["turn_index"]) == (2, 1, 2), report

        await commit(a, game_id, 2, "B", [3, 2, 1], player_id=2)
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (3, 3, "B"), required
        await commit(c, game_id, 3, "C", [1, 2, 3])
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (1, 4, "C"), required

    play(port, scenario)


def test_abort_when_the_last_active_player_forfeits(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b = (await table.player("A")), (await table.player("B"))
        game_id = await start_open_game(a, [b])

        await b.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await b.client.expect("GameForfeitedRequest", game_id=game_id, player_id=2)
        await a.client.expect("GameForfeitedRequest", game_id=game_id, player_id=2)
        await a.client.expect("PlayerReplacedRequest", game_id=game_id, player_id=2, reason="FORFEITED")
        await a.client.no_message("GameAbortedRequest")
        assert (await a.client.report(game_id))["status"] == "RUNNING"  # A is still active

        await a.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await a.client.expect("GameForfeitedRequest", game_id=game_id, player_id=1)
        for player in (a, b):
            aborted = await player.client.expect("GameAbortedRequest", game_id=game_id)
            assert aborted.get("penalties", []) == [], "an unranked game has no penalties (S11)"
        assert (await a.client.report(game_id))["status"] == "ABORTING"

        await a.client.send({"type": "GameAbortedConfirmationRequest", "game_id": game_id})
        await a.client.sync()
        await b.client.send({"type": "GameAbortedConfirmationRequest", "game_id": game_id})
        await b.client.sync()
        reports = await b.client.status(game_id)
        assert [r["status"] for r in reports] in ([], ["ABORTED"]), reports

    play(port, scenario)


def test_game_over_outcome_and_confirmations(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b = (await table.player("A")), (await table.player("B"))
        game_id = await start_open_game(a, [b])
        await commit(a, game_id, 1, "A", [2, 1])
        await b.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=2)
        await commit(b, game_id, 2, "B", [1, 2])
        await a.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=3)

        # S11: ranks must cover every seat.
        await refused(
            a, {"type": "GameOverRequest", "game_id": game_id, "finalScores": {"1": [12, 2]}}, "BAD_REQUEST"
        )
        await a.client.send(
            {
                "type": "GameOverRequest",
                "game_id": game_id,
                "finalScores": {"1": [12, 2], "2": [23, 1]},
                "final_state": "final",
            }
        )
        for player in (a, b):
            outcome = await player.client.expect("GameOutcomeRequest", game_id=game_id)
            results = by_seat(outcome["outcome"])
            assert (results[1]["score"], results[1]["rank"]) == (12, 2), outcome
            assert (results[2]["score"], results[2]["rank"]) == (23, 1), outcome
            assert outcome.get("is_ranked", False) is False, outcome
        report = await a.client.report(game_id)
        assert report["status"] == "OUTCOME", report
        assert sorted(report.get("outcome_not_seen", [])) == [1, 2], report
        assert report.get("outcome"), report
        assert report.get("state") == "final", report

        # No commit is processed after GameOverRequest.
        await a.client.send(commit_message(game_id, 3, next_players=[2, 1]))
        rejected = await a.client.expect(("ErrorRequest", "ActionCommitedRequest"))
        assert rejected["type"] == "ErrorRequest", rejected

        await a.client.send({"type": "GameOutcomeConfirmationRequest", "game_id": game_id})
        await a.client.sync()
        report = await b.client.report(game_id)
        assert report["status"] == "OUTCOME" and report.get("outcome_not_seen") == [2], report
        await b.client.send({"type": "GameOutcomeConfirmationRequest", "game_id": game_id})
        await b.client.sync()
        report = await b.client.report(game_id)
        assert report["status"] == "OVER", report
        assert report.get("outcome_not_seen", []) == [], report

    play(port, scenario)


def test_clocks(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b = (await table.player("A")), (await table.player("B"))
        await enter_lobby(a)
        await a.client.send(
            {"type": "LobbyCreateGameRequest", "configuration": configuration(2, clock_seconds=600)}
        )
        game_id = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
        await enter_lobby(b)
        await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=1)
        clock = required["player_clock"]
        assert clock["player_id"] == 1 and clock.get("armed") is True, required
        assert 590 < clock["remaining_seconds"] <= 600, required

        first = await clocks(a, game_id)
        assert sorted(first) == [1, 2], first
        assert first[1].get("armed") is True and first[2].get("armed", False) is False, first
        assert 590 < first[1]["remaining_seconds"] <= clock["remaining_seconds"], first
        assert first[2]["remaining_seconds"] == pytest.approx(600), first

        await commit(a, game_id, 1, "A", [2, 1])
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=2)
        assert required["player_clock"]["player_id"] == 2 and required["player_clock"].get("armed") is True
        after = await clocks(b, game_id)
        assert after[1].get("armed", False) is False and after[2].get("armed") is True, after
        assert after[1]["remaining_seconds"] <= first[1]["remaining_seconds"], (first, after)

        await refused(a, {"type": "GetClocksRequest", "game_id": NO_GAME}, "UNKNOWN_GAME")

    play(port, scenario)


def test_a_whole_fish_game_with_server_rules(port: int) -> None:
    """S9 over the wire: Parlour computes the game; each seat commits one of its legal actions
    and sees only its own view; the game ends with an outcome and ratings."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("fa")), (await table.player("fb"))
        await a.client.send(
            {
                "type": "LobbyCreateGameRequest",
                "configuration": configuration(2, game_type="fish", rules="fish", ranked=True),
            }
        )
        game_id = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]
        await b.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
        for player in (a, b):  # started: the join is not answered before
            await player.client.expect("GameCreatedRequest", game_id=game_id)
        assert await play_first_legal_actions(a, {1: a, 2: b}, game_id) > 0
        for player in (a, b):
            outcome = await player.client.expect("GameOutcomeRequest", game_id=game_id)
            assert outcome["is_ranked"] is True and {entry["player_id"] for entry in outcome["outcome"]} == {
                1,
                2,
            }
        # The ratings as people read them: a first game, so provisional, and the
        # outcome, the leaderboard and the profile show the same number.
        shown = {entry["player_id"]: entry["shown"] for entry in outcome["outcome"]}
        assert all(entry["provisional"] is True for entry in shown.values()), shown
        assert sorted(entry["rating"] - entry["change"] for entry in shown.values()) == [1500, 1500], shown
        board = http_json(port, "GET", "/api/leaderboard?game_type=fish&limit=10")
        assert board.status == 200 and {row["name"] for row in board.body["players"]} >= {a.name, b.name}
        listed = {row["name"]: row for row in board.body["players"]}
        assert (listed[a.name]["rating"], listed[a.name]["provisional"]) == (shown[1]["rating"], True)

        profile = http_json(port, "GET", f"/api/profile?name={a.name.upper()}")
        assert profile.status == 200, profile
        body = profile.body
        assert (body["name"], body["ratings"]) == (
            a.name,
            [{"game_type": "fish", "rating": shown[1]["rating"], "provisional": True, "games": 1}],
        )
        assert [(p["game_id"], p["rating"]) for p in body["history"]["fish"]] == [
            (game_id, shown[1]["rating"])
        ]
        [recent] = body["recent"]
        assert (recent["game_id"], recent["game_type"], recent["change"]) == (
            game_id,
            "fish",
            shown[1]["change"],
        )
        assert [(p["name"], p["robot"]) for p in recent["players"]] == [(a.name, False), (b.name, False)]
        [opponent] = body["opponents"]
        assert opponent["name"] == b.name and opponent["wins"] + opponent["losses"] + opponent["draws"] == 1
        # Its replay is the one GET /api/async/replay serves.
        replay = http_json(port, "GET", f"/api/async/replay?game_id={recent['game_id']}")
        assert replay.status == 200 and replay.body["game_id"] == game_id

        missing = http_json(port, "GET", "/api/profile?name=nobody-at-all")
        assert (missing.status, missing.body) == (404, {"error": "nobody is named 'nobody-at-all'"})
        assert http_json(port, "GET", "/api/profile").status == 400

    play(port, scenario)


def test_players_are_found_by_name(port: int) -> None:
    name = unique_name("findme")
    player_id = create_account(port, name)
    found = http_json(port, "GET", f"/api/players?name={name.upper()}")
    assert found.status == 200 and found.body == {"player_id": player_id, "name": name}
    assert http_json(port, "GET", "/api/players?name=nobody-at-all").status == 404
    assert http_json(port, "GET", "/api/players").status == 400
    assert http_json(port, "POST", f"/api/players?name={name}", {}).status == 405


def test_quick_play_pairs_two_players_in_one_started_game(port: int) -> None:
    """Quick play over the wire (a Parlour extension, docs/async.md "Quick play"): two players
    queue for Fish and are both told the one game they landed in, where the first turn waits; a third
    queues with robots allowed at once and gets a game of its own with a robot."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("qa")), (await table.player("qb")), (await table.player("qc"))
        rid = request_id("queue")
        await a.client.send(
            {"type": "QuickPlayJoinRequest", "game_type": "fish", "seats": 2, "request_id": rid}
        )
        status = await a.client.expect("QuickPlayStatusRequest", request_id=rid)
        [queue] = status["queues"]
        assert queue["game_type"] == "fish" and queue["window_low"] < queue["rating"] < queue["window_high"]
        await refused(a, {"type": "QuickPlayJoinRequest", "game_type": "fish", "seats": 2}, "ALREADY_QUEUED")
        await b.client.send({"type": "QuickPlayJoinRequest", "game_type": "fish", "seats": 2})
        matched = [await player.client.expect("QuickPlayMatchedRequest") for player in (a, b)]
        game_id = matched[0]["game_id"]
        assert matched[1]["game_id"] == game_id
        created = await b.client.expect("GameCreatedRequest", game_id=game_id)
        assert {seat["player_id"] for seat in created["status_report"]["players"]} == {
            a.player_id,
            b.player_id,
        }
        first = await a.client.expect("ActionRequiredRequest", game_id=game_id)  # a waited longest: seat 1
        assert first["legal_actions"], first
        await refused(c, {"type": "QuickPlayLeaveRequest"}, "NOT_QUEUED")
        await c.client.send(
            {"type": "QuickPlayJoinRequest", "game_type": "fish", "seats": 2, "robots_after": 0}
        )
        alone = await c.client.expect("QuickPlayMatchedRequest")
        assert alone["robots"] == 1 and alone["game_id"] != game_id

    play(port, scenario)
