"""The social workflows of the Scalable Server text over the wire, against a real ``parlour serve``:
Chat (with chat codes and commands), Presence and Switching to a Game, Buddy List, Ignore List,
Server Statistics, Observing a Game, and Multicast.

One test per sequence diagram or workflow of the text, on the decisions of docs/async-decisions.md
(S8, S13-S17, S20) and the choices documented in the docstrings of async_ws/players/chat.py,
presence.py and social.py, lobby/observe.py and ingame/phase_requests.py. The server, its fresh
store and the ``Table``/``play`` harness are those of test_async_workflows.py: every test makes its
own accounts (unique names and unique chat texts), so they share one server process.

Pushes come on the server's own rhythm (lists at most every 2 s, presence batches at most every
second, S8, S15): the tests wait for the message with a bounded timeout and never sleep for it.
Defaults are left out of the wire (S1: ``game_id`` 0 and empty ``recipient_ids`` are absent), so
messages are matched on unique texts and checked with ``.get(field, default)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.asyncclient import (
    AsyncClient,
    Message,
    Player,
    acreate_account,
    alogin,
    enter_lobby,
    reconnect,
    request_id,
    start_open_game,
    unique_name,
)
from tests.integration.test_async_workflows import (
    NO_GAME,
    Table,
    commit,
    play,
)
from tests.processes import clean_env, free_port, running, serve_command


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The module's ``parlour serve`` on a fresh store, as test_async_workflows.py's, but with
    ``--broadcast-slice 2``: every lobby chat line to more than two players goes out through the
    fan-out's sweep (parlour.transport.fanout), its sender's copy and ignorers' silence included."""
    directory = tmp_path_factory.mktemp("social")
    port = free_port()
    command = serve_command(port, "--broadcast-slice", "2", store=str(directory / "p.db"))
    with (directory / "server.log").open("wb") as log, running(command, port, log, clean_env()):
        yield port


#: A word of the shipped profanity list (profanity.txt).
PROFANE = "you bastard"
#: How long a test waits for a pushed list or statistics (S8: at most every 2 s).
LIST_WAIT = 3.0
#: How long a test waits for a presence batch (S15: at most once a second).
BATCH_WAIT = 2.5


# --- Helpers -----------------------------------------------------------------------------------------


def text_of(prefix: str) -> str:
    """A chat text no other test sends."""
    return unique_name(prefix)


async def chat(player: Player, text: str, game_id: int | None = None, **extra: Any) -> str:
    """A MulticastChatRequest (the lobby without ``game_id``); its request_id."""
    rid = request_id("chat")
    message: Message = {"type": "MulticastChatRequest", "text": text, "request_id": rid, **extra}
    if game_id is not None:
        message["game_id"] = game_id
    await player.client.send(message)
    return rid


async def line(player: Player, text: str, timeout: float = 5.0) -> Message:
    """The ClientChatRequest carrying ``text`` that ``player`` receives."""
    return await player.client.expect("ClientChatRequest", timeout, text=text)


async def no_line(player: Player, text: str) -> None:
    """``player`` receives no ClientChatRequest carrying ``text``."""
    await player.client.sync()
    await player.client.no_message("ClientChatRequest", text=text)


async def server_line(player: Player, command: str, game_id: int | None = None) -> Message:
    """A chat command's answer: a coded line from the server (sender 0) to the sender alone."""
    rid = await chat(player, command, game_id)
    answer = await player.client.expect("ClientChatRequest", sender=0, request_id=rid)
    assert answer.get("game_id", 0) == (game_id or 0), answer
    assert isinstance(answer.get("text"), str) and answer["text"], "coded lines carry a text too"
    return answer


async def history(player: Player, game_id: int | None = None) -> list[Message]:
    """GetChatHistoryRequest: the ClientChatHistoryRequest's lines, oldest first."""
    rid = request_id("history")
    message: Message = {"type": "GetChatHistoryRequest", "request_id": rid}
    if game_id is not None:
        message["game_id"] = game_id
    await player.client.send(message)
    reply = await player.client.expect("ClientChatHistoryRequest", request_id=rid)
    assert reply.get("game_id", 0) == (game_id or 0), reply
    lines: list[Message] = reply.get("messages", [])
    for entry in lines:
        assert isinstance(entry.get("sent_at"), int | float) and entry["sent_at"] > 0, entry
    return lines


async def manage(player: Player, kind: str, operation: str, other_id: int) -> Message:
    """AsyncBuddyManagementRequest / AsyncIgnoreManagementRequest; the confirmation (or error)."""
    rid = request_id(kind)
    await player.client.send(
        {
            "type": f"Async{kind}ManagementRequest",
            "operation": operation,
            "player_id": other_id,
            "request_id": rid,
        }
    )
    done = "Added" if operation == "ADD" else "Removed"
    reply = await player.client.expect((f"Async{kind}{done}Request", "ErrorRequest"), request_id=rid)
    return reply


async def listed(player: Player, kind: str) -> dict[int, Message]:
    """AsyncBuddyListRequest / AsyncIgnoreListRequest: the players listed, by global id."""
    rid = request_id("list")
    await player.client.send({"type": f"Async{kind}ListRequest", "request_id": rid})
    reply = await player.client.expect(f"Async{kind}ListContentRequest", request_id=rid)
    entries = reply.get("buddies" if kind == "Buddy" else "ignored", [])
    return {entry["player_id"]: entry for entry in entries}


async def sign_in(table: Table, name: str, token: str) -> AsyncClient:
    """A new authenticated connection for an existing account (its token fetched beforehand)."""
    client = await table.connection(name)
    connected = await client.auth(name, token)
    assert connected["type"] == "AsyncConnectedRequest", connected
    return client


async def batches(client: AsyncClient, wanted: dict[int, str], timeout: float = BATCH_WAIT) -> list[Message]:
    """AsyncBuddyPresencePartialUpdateRequests until every player of ``wanted`` (global id ->
    presence) was reported with that presence; the batches, in arrival order."""
    received: list[Message] = []
    seen: dict[int, str] = {}
    while any(seen.get(player_id) != presence for player_id, presence in wanted.items()):
        batch = await client.expect("AsyncBuddyPresencePartialUpdateRequest", timeout)
        assert batch["updates"], f"an empty batch: {batch}"
        received.append(batch)
        for update in batch["updates"]:
            seen[update["player_id"]] = update["presence"]
    return received


async def statistics(client: AsyncClient, subscribe: bool | None = None) -> Message:
    rid = request_id("stats")
    message: Message = {"type": "AskServerStatisticsRequest", "request_id": rid}
    if subscribe is not None:
        message["subscribe"] = subscribe
    await client.send(message)
    reply = await client.expect("ServerStatisticsRequest", request_id=rid)
    for key in ("hosted_games", "players", "connected_players"):
        assert isinstance(reply[key], int) and reply[key] >= 0, reply
    assert reply["players"] >= reply["connected_players"], "live players include the connected ones"
    return reply


async def observe(player: Player, game_id: int, start: bool = True) -> Message:
    """Start/StopObserveGameRequest: the GameObservedRequest."""
    rid = request_id("observe")
    kind = "StartObserveGameRequest" if start else "StopObserveGameRequest"
    await player.client.send({"type": kind, "game_id": game_id, "request_id": rid})
    reply = await player.client.expect("GameObservedRequest", request_id=rid)
    assert reply["game_id"] == game_id, reply
    return reply


async def multicast(player: Player, game_id: int, data: str, **extra: Any) -> None:
    await player.client.send({"type": "MulticastDataRequest", "game_id": game_id, "data": data, **extra})


# --- Chat --------------------------------------------------------------------------------------------


def test_lobby_chat_is_echoed_and_relayed_to_the_lobby(port: int) -> None:
    """The first Chat diagram: the sender gets its line back, the others in the lobby get it."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("chatA")), (await table.player("chatB")), (await table.player("chatC"))
        away = await table.player("away")  # connected, but not in the lobby
        for player in (a, b, c):
            await enter_lobby(player)

        text = text_of("hello lobby ")
        await chat(a, text)
        for player in (a, b, c):
            received = await line(player, text)
            assert received["sender"] == a.player_id, "in the lobby, sender is a global id"
            assert received.get("game_id", 0) == 0, received
            assert received.get("recipient_ids", []) == [], received
            assert received.get("code", 0) == 0, received
        await no_line(away, text)

        # game_id 0 is the lobby too; B answers and A hears it.
        answer = text_of("hello back ")
        await chat(b, answer, 0)
        assert (await line(a, answer))["sender"] == b.player_id
        await line(b, answer)

        # S8: chat lines are at most 500 characters.
        longest = text_of("x") + "x" * 480
        await chat(a, longest[:500])
        await line(c, longest[:500])
        rid = await chat(a, longest[:480] + "y" * 21)
        error = await a.client.expect("ErrorRequest", request_id=rid)
        assert error["code"] in ("BAD_REQUEST", "TOO_LARGE"), error
        await no_line(b, longest[:480] + "y" * 21)

        # Only players in the lobby chat there (chat.py: the lobby is for players in it).
        rid = await chat(away, text_of("from outside "))
        error = await away.client.expect("ErrorRequest", request_id=rid)
        assert error.get("request_type") == "MulticastChatRequest", error

    play(port, scenario)


def test_players_whose_game_started_no_longer_get_the_lobby_chat(port: int) -> None:
    """A, B and C in the lobby, C speaks; A's two-seat game fills with B and
    starts, so both leave the lobby; C's next line reaches C alone of the three."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("leftA")), (await table.player("leftB")), (await table.player("leftC"))
        for player in (a, b, c):
            await enter_lobby(player)
        before = text_of("before the game ")
        await chat(c, before)
        for player in (a, b, c):
            await line(player, before)
        await start_open_game(a, [b])
        after = text_of("after the game started ")
        await chat(c, after)
        await line(c, after)
        await no_line(a, after)
        await no_line(b, after)

    play(port, scenario)


def test_game_chat_reaches_the_players_of_the_game(port: int) -> None:
    """The second Chat diagram: MulticastChatRequest(game_id) to the sender and the other seats."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("gchatA")), (await table.player("gchatB"))
        outsider = await table.player("gchatOut")
        await enter_lobby(outsider)
        game_id = await start_open_game(a, [b])

        text = text_of("good luck ")
        await chat(a, text, game_id)
        for player in (a, b):
            received = await line(player, text)
            assert received.get("game_id") == game_id, received
            assert received["sender"] == 1, "in a game, sender is a local id"
        await no_line(outsider, text)

        reply = text_of("have fun ")
        await chat(b, reply, game_id)
        assert (await line(a, reply))["sender"] == 2

        # Someone not seated in the game may not chat in it.
        rid = await chat(outsider, text_of("intruder "), game_id)
        error = await outsider.client.expect("ErrorRequest", request_id=rid)
        assert error.get("request_type") == "MulticastChatRequest", error
        await no_line(a, "intruder")

    play(port, scenario)


def test_private_messages_reach_only_the_recipients_and_the_sender(port: int) -> None:
    """The recipient_ids diagram, in a game (local ids) and in the lobby (global ids)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("pmA")), (await table.player("pmB")), (await table.player("pmC"))
        game_id = await start_open_game(a, [b, c])

        secret = text_of("the password is sesame ")
        await chat(a, secret, game_id, recipient_ids=[2])
        for player in (a, b):
            received = await line(player, secret)
            assert received.get("game_id") == game_id and received["sender"] == 1, received
            assert received.get("recipient_ids") == [2], received
        await no_line(c, secret)

        # The text's own spelling recipients_ids is accepted (S20); the server writes recipient_ids.
        other = text_of("psst ")
        await chat(c, other, game_id, recipients_ids=[1])
        received = await line(a, other)
        assert received["sender"] == 3 and received.get("recipient_ids") == [1], received
        await line(c, other)
        await no_line(b, other)

        # A recipient who is not a seat of the game is refused (chat.py: UNKNOWN_PLAYER).
        rid = await chat(a, text_of("ghost "), game_id, recipient_ids=[7])
        error = await a.client.expect("ErrorRequest", request_id=rid)
        assert error["code"] == "UNKNOWN_PLAYER", error

        # In the lobby recipient_ids are global ids.
        for player in (a, b, c):
            await enter_lobby(player)
        whisper = text_of("lobby whisper ")
        await chat(b, whisper, recipient_ids=[c.player_id])
        for player in (b, c):
            received = await line(player, whisper)
            assert received["sender"] == b.player_id, received
            assert received.get("recipient_ids") == [c.player_id], received
        await no_line(a, whisper)

    play(port, scenario)


def test_profanity_is_blocked_then_mutes_the_sender(port: int) -> None:
    """The profanity diagram: blocked lines are never relayed; the third in a row mutes the sender
    (ClientChatBlockedRequest muted=true to A and B), and A's next message is refused (S14)."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("rudeA")), (await table.player("politeB"))
        c = await table.player("politeC")
        game_id = await start_open_game(a, [b, c])

        # A blocked private line is told to its recipients only (chat.py), C hears nothing.
        rid = await chat(a, PROFANE, game_id, recipient_ids=[2])
        notice = await a.client.expect("ClientChatBlockedRequest", request_id=rid)
        assert notice.get("muted", False) is False, notice
        told = await b.client.expect("ClientChatBlockedRequest")
        assert (told["sender"], told.get("muted", False)) == (1, False), told
        await c.client.sync()
        await c.client.no_message("ClientChatBlockedRequest")

        for attempt in range(1, 3):
            rid = await chat(a, PROFANE, game_id)
            notice = await a.client.expect("ClientChatBlockedRequest", request_id=rid)
            told = await b.client.expect("ClientChatBlockedRequest")
            await c.client.expect("ClientChatBlockedRequest", sender=1)
            muted = attempt == 2  # the third blocked line
            for blocked in (notice, told):
                assert blocked.get("game_id") == game_id, blocked
                assert blocked["sender"] == 1, blocked
                assert blocked.get("text", "") == "", "the blocked text is never shown"
                assert blocked.get("muted", False) is muted, (attempt, blocked)
            assert "request_id" not in told, told
        await b.client.no_message("ClientChatRequest", sender=1)

        # Muted: a clean message is refused to A alone, and no chat reaches B.
        clean = text_of("sorry about that ")
        rid = await chat(a, clean, game_id)
        refusal = await a.client.expect(
            ("ClientChatBlockedRequest", "ErrorRequest", "ClientChatRequest"), request_id=rid
        )
        assert refusal["type"] == "ClientChatBlockedRequest", refusal
        assert refusal.get("request_id") == rid and refusal.get("muted") is True, refusal
        await no_line(b, clean)
        await b.client.no_message("ClientChatBlockedRequest")
        await c.client.no_message("ClientChatBlockedRequest")
        await c.client.no_message("ClientChatRequest", sender=1)
        # Commands still work while muted (chat.py).
        answer = await server_line(a, "/help", game_id)
        assert answer.get("code") == 6, answer
        # B was not muted by A's words.
        fine = text_of("no worries ")
        await chat(b, fine, game_id)
        await line(a, fine)

        # Nothing blocked is kept for the history.
        texts = [entry["text"] for entry in await history(b, game_id)]
        assert fine in texts and PROFANE not in texts and clean not in texts, texts

    play(port, scenario)


def test_chat_history_never_shows_private_messages(port: int) -> None:
    """The history note: GetChatHistoryRequest (a game's, and the lobby's) -> the latest public
    lines, oldest first, never a private one."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("histA")), (await table.player("histB")), (await table.player("histC"))
        outsider = await table.player("histOut")
        game_id = await start_open_game(a, [b, c])
        assert await history(a, game_id) == [], "a new game has no chat"

        first, private, second = text_of("first "), text_of("private "), text_of("second ")
        await chat(a, first, game_id)
        await line(c, first)
        await chat(b, private, game_id, recipient_ids=[1])
        await line(a, private)
        await chat(c, second, game_id, code=300)
        await line(a, second)

        for reader in (a, b, c):
            lines = await history(reader, game_id)
            assert [(entry["sender"], entry["text"], entry.get("code", 0)) for entry in lines] == [
                (1, first, 0),
                (3, second, 300),
            ], lines
            assert lines[0]["sent_at"] <= lines[1]["sent_at"], lines
        # Someone who is not in the game may not read its chat.
        rid = request_id("peek")
        await outsider.client.send({"type": "GetChatHistoryRequest", "game_id": game_id, "request_id": rid})
        refusal = await outsider.client.expect(("ErrorRequest", "ClientChatHistoryRequest"), request_id=rid)
        assert refusal["type"] == "ErrorRequest", refusal

        # S14: the last 50 lines per scope; the older ones drop out of the history.
        sent = [second]
        for number in range(50):
            speaker = (a, b, c)[number % 3]
            text = f"line {number} {first}"
            await chat(speaker, text, game_id)
            await line(speaker, text)
            sent.append(text)
        lines = await history(c, game_id)
        assert [entry["text"] for entry in lines] == sent[-50:], [entry["text"] for entry in lines]

        # The lobby's history: the public line is there (the latest), the private one never.
        for player in (a, b):
            await enter_lobby(player)
        public, whisper = text_of("lobby public "), text_of("lobby private ")
        await chat(a, public)
        await line(b, public)
        await chat(a, whisper, recipient_ids=[b.player_id])
        await line(b, whisper)
        lines = await history(b)
        texts = [entry["text"] for entry in lines]
        assert texts[-1] == public and whisper not in texts, texts
        assert lines[-1]["sender"] == a.player_id, lines
        assert len(lines) <= 50, "S14: the last 50 lines per scope"

    play(port, scenario)


def test_chat_codes(port: int) -> None:
    """Chat codes: 1-255 are the server's (refused), 0 is as no code, above 255 is relayed."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("codeA")), (await table.player("codeB"))
        game_id = await start_open_game(a, [b])

        for code in (1, 9, 255):
            text = text_of(f"code {code} ")
            rid = await chat(a, text, game_id, code=code)
            error = await a.client.expect(("ErrorRequest", "ClientChatRequest"), request_id=rid)
            assert error["type"] == "ErrorRequest", (code, error)
            assert error["code"] == "BAD_REQUEST", (code, error)
            assert error.get("request_type") == "MulticastChatRequest", error
            await no_line(b, text)

        for code in (256, 1000):
            text = text_of(f"quickchat {code} ")
            await chat(a, text, game_id, code=code)
            for player in (a, b):
                received = await line(player, text)
                assert received.get("code") == code and received["sender"] == 1, received

        dummy = text_of("code zero ")
        await chat(a, dummy, game_id, code=0)
        received = await line(b, dummy)
        assert received.get("code", 0) == 0, received

        # "The text will still pass through the profanity filter as usual."
        rid = await chat(a, PROFANE, game_id, code=4242)
        await a.client.expect("ClientChatBlockedRequest", request_id=rid)
        await b.client.expect("ClientChatBlockedRequest")
        await b.client.no_message("ClientChatRequest", code=4242)

    play(port, scenario)


def test_chat_commands(port: int) -> None:
    """/help (code 6), /statistics (7 in the lobby, 8 in a game), /report NAME (4, then the
    cooldown's 5): answered by the server (sender 0) to the sender alone, never relayed."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("cmdA")), (await table.player("cmdB"))
        game_id = await start_open_game(a, [b])
        for player in (a, b):  # the server's welcome line in the game (code 1)
            await player.client.expect("ClientChatRequest", sender=0, code=1, game_id=game_id)

        assert (await server_line(a, "/help", game_id)).get("code") == 6
        statistics_line = await server_line(a, "/statistics", game_id)
        assert statistics_line.get("code") == 8, statistics_line
        thanks = await server_line(a, f"/report {b.name} rude in game", game_id)
        assert thanks.get("code") == 4, thanks
        again = await server_line(a, f"/report {b.name} still rude", game_id)
        assert again.get("code") == 5, "one report a minute per reporter (S14)"
        # Commands are never relayed, nor kept for the history.
        await b.client.sync()
        await b.client.no_message("ClientChatRequest", sender=1)  # nothing relayed from A (seat 1)
        for code in (4, 5, 6, 8):
            await b.client.no_message("ClientChatRequest", code=code)  # nor A's answers
        assert all(not entry["text"].startswith("/") for entry in await history(b, game_id))

        for player in (a, b):
            await enter_lobby(player)
        assert (await server_line(b, "/help")).get("code") == 6
        lobby_statistics = await server_line(b, "/statistics")
        assert lobby_statistics.get("code") == 7, lobby_statistics
        # No check is done on the reported name (the text): a name nobody has is thanked too.
        assert (await server_line(b, f"/report {unique_name('nobody')}")).get("code") == 4
        for code in (4, 6, 7):  # B's answers are B's alone
            await a.client.no_message("ClientChatRequest", sender=0, code=code)

    play(port, scenario)


# --- Presence ----------------------------------------------------------------------------------------


def test_presence_register_subscribe_and_batched_updates(port: int) -> None:
    """Presence: RegisterPresenceRequest + SubscribePresenceServiceRequest, then batched
    AsyncBuddyPresencePartialUpdateRequests when monitored players sign in and out (S15)."""

    async def scenario(table: Table) -> None:
        watcher = await table.player("watcher")
        names = [unique_name("watchedX"), unique_name("watchedY"), unique_name("unwatched")]
        ids = await asyncio.gather(*(acreate_account(port, name) for name in names))
        tokens = await asyncio.gather(*(alogin(port, name) for name in names))
        x_id, y_id, _ = ids

        await watcher.client.send({"type": "RegisterPresenceRequest", "player_ids": [x_id, y_id]})
        await watcher.client.send({"type": "SubscribePresenceServiceRequest", "subscribe": True})
        # Subscribing sends the monitored players' current presence in the next batch.
        first = await batches(watcher.client, {x_id: "OFFLINE", y_id: "OFFLINE"})

        # Both sign in right after a batch: one batch (at most a second later) tells both.
        x = await sign_in(table, names[0], tokens[0])
        y = await sign_in(table, names[1], tokens[1])
        online = await batches(watcher.client, {x_id: "ONLINE", y_id: "ONLINE"})
        assert len(online) == 1, f"presence events are batched: {online}"
        assert sorted(u["player_id"] for u in online[0]["updates"]) == sorted([x_id, y_id]), online

        # A player who is not monitored changes nothing for the watcher.
        await sign_in(table, names[2], tokens[2])
        # Both sign out: one batch again.
        await x.close()
        await y.close()
        offline = await batches(watcher.client, {x_id: "OFFLINE", y_id: "OFFLINE"})
        assert len(offline) == 1, f"presence events are batched: {offline}"
        for batch in (*first, *online, *offline):
            assert {u["player_id"] for u in batch["updates"]} <= {x_id, y_id}, batch

        # RegisterPresenceRequest replaces the monitored set: Y is no longer reported.
        await watcher.client.send({"type": "RegisterPresenceRequest", "player_ids": [x_id]})
        await watcher.client.sync()
        await sign_in(table, names[1], tokens[1])
        await sign_in(table, names[0], tokens[0])
        (batch,) = await batches(watcher.client, {x_id: "ONLINE"})
        assert [u["player_id"] for u in batch["updates"]] == [x_id], batch

    play(port, scenario)


def test_switched_to_game_tells_the_opponents(port: int) -> None:
    """Switching to a Game: SwitchedToGameRequest gets no reply; switching into the game tells its
    other players at once (PlayerPresenceUpdateRequest IN_GAME); later changes (leaving the game,
    signing out) reach the players whose UI is in the game; no presence subscription is needed
    (S15; presence.py)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("swA")), (await table.player("swB")), (await table.player("swC"))
        game_id = await start_open_game(a, [b, c])
        # A buddy outside the game follows B through the presence stream (S15: IN_GAME with its id).
        friend = await table.player("swFriend")
        await friend.client.send({"type": "RegisterPresenceRequest", "player_ids": [b.player_id]})
        await friend.client.send({"type": "SubscribePresenceServiceRequest"})
        await batches(friend.client, {b.player_id: "ONLINE"})

        def presence(update: Message) -> list[tuple[int, str, int | None]]:
            assert update["game_id"] == game_id, update
            return [(u["player_id"], u["presence"], u.get("game_id")) for u in update["updates"]]

        await a.client.send({"type": "SwitchedToGameRequest", "game_id": game_id, "request_id": "sw-a"})
        for other in (b, c):
            update = await other.client.expect("PlayerPresenceUpdateRequest", 0.9, game_id=game_id)
            assert presence(update) == [(a.player_id, "IN_GAME", game_id)], update
        await b.client.send({"type": "SwitchedToGameRequest", "game_id": game_id, "request_id": "sw-b"})
        for other in (a, c):
            update = await other.client.expect("PlayerPresenceUpdateRequest", 0.9, game_id=game_id)
            assert presence(update) == [(b.player_id, "IN_GAME", game_id)], update
        (streamed,) = await batches(friend.client, {b.player_id: "IN_GAME"})
        assert streamed["updates"] == [{"player_id": b.player_id, "presence": "IN_GAME", "game_id": game_id}]
        for player, rid in ((a, "sw-a"), (b, "sw-b")):
            await player.client.sync()
            replies = [m for m in player.client.history if m.get("request_id") == rid]
            assert replies == [], f"SwitchedToGameRequest has no reply: {replies}"

        # B's UI leaves the game (no game_id): ONLINE to A, whose UI is in the game, not to C.
        await b.client.send({"type": "SwitchedToGameRequest"})
        update = await a.client.expect("PlayerPresenceUpdateRequest", BATCH_WAIT, game_id=game_id)
        assert presence(update) == [(b.player_id, "ONLINE", None)], update
        # B comes back into the game, then signs out: OFFLINE to A.
        await b.client.send({"type": "SwitchedToGameRequest", "game_id": game_id})
        update = await a.client.expect("PlayerPresenceUpdateRequest", game_id=game_id)
        assert presence(update) == [(b.player_id, "IN_GAME", game_id)], update
        await c.client.expect("PlayerPresenceUpdateRequest", game_id=game_id)  # told at once too
        await b.client.close()
        update = await a.client.expect("PlayerPresenceUpdateRequest", BATCH_WAIT, game_id=game_id)
        assert presence(update) == [(b.player_id, "OFFLINE", None)], update
        # B signs in again (its UI is not in the game yet): ONLINE.
        table.clients.append((await reconnect(b, port)).client)
        update = await a.client.expect("PlayerPresenceUpdateRequest", BATCH_WAIT, game_id=game_id)
        assert presence(update) == [(b.player_id, "ONLINE", None)], update
        await c.client.sync()
        await c.client.no_message("PlayerPresenceUpdateRequest")

    play(port, scenario)


# --- Buddy and ignore lists --------------------------------------------------------------------------


def test_buddy_list_add_list_remove(port: int) -> None:
    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("budA")), (await table.player("budB")), (await table.player("budC"))
        assert await listed(a, "Buddy") == {}

        added = await manage(a, "Buddy", "ADD", b.player_id)
        assert added["type"] == "AsyncBuddyAddedRequest" and added["player_id"] == b.player_id, added
        added = await manage(a, "Buddy", "ADD", c.player_id)
        assert added["type"] == "AsyncBuddyAddedRequest" and added["player_id"] == c.player_id, added
        offline = unique_name("budOff")
        offline_id = await acreate_account(port, offline)
        added = await manage(a, "Buddy", "ADD", offline_id)
        assert added["type"] == "AsyncBuddyAddedRequest", added
        buddies = await listed(a, "Buddy")
        assert sorted(buddies) == sorted([b.player_id, c.player_id, offline_id]), buddies
        assert buddies[b.player_id]["name"] == b.name and buddies[c.player_id]["name"] == c.name, buddies
        assert buddies[b.player_id].get("presence") == "ONLINE", buddies
        assert (buddies[offline_id]["name"], buddies[offline_id].get("presence", "OFFLINE")) == (
            offline,
            "OFFLINE",
        )
        removed = await manage(a, "Buddy", "REMOVE", offline_id)
        assert removed["type"] == "AsyncBuddyRemovedRequest", removed
        assert await listed(b, "Buddy") == {}, "buddy lists are one-way"

        # Adding a buddy again is confirmed without change; oneself and unknown players are refused.
        again = await manage(a, "Buddy", "ADD", b.player_id)
        assert again["type"] == "AsyncBuddyAddedRequest", again
        for bad in (a.player_id, 999_999_999):
            error = await manage(a, "Buddy", "ADD", bad)
            assert error["type"] == "ErrorRequest" and error["code"] == "UNKNOWN_PLAYER", error
        assert sorted(await listed(a, "Buddy")) == sorted([b.player_id, c.player_id])

        removed = await manage(a, "Buddy", "REMOVE", b.player_id)
        assert removed["type"] == "AsyncBuddyRemovedRequest" and removed["player_id"] == b.player_id, removed
        assert sorted(await listed(a, "Buddy")) == [c.player_id]
        removed = await manage(a, "Buddy", "REMOVE", b.player_id)  # not listed: confirmed all the same
        assert removed["type"] == "AsyncBuddyRemovedRequest", removed

    play(port, scenario)


def test_ignore_list_and_ignored_chat_never_arrives(port: int) -> None:
    """Ignore List: ADD, list, REMOVE; an ignored player's chat never reaches the ignorer (S14),
    in the lobby, in a game, privately, nor in the history."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("ignA")), (await table.player("ignB")), (await table.player("ignC"))
        assert await listed(a, "Ignore") == {}
        added = await manage(a, "Ignore", "ADD", b.player_id)
        assert added["type"] == "AsyncIgnoreAddedRequest" and added["player_id"] == b.player_id, added
        ignored = await listed(a, "Ignore")
        assert list(ignored) == [b.player_id] and ignored[b.player_id]["name"] == b.name, ignored
        assert await listed(b, "Ignore") == {}, "ignore lists are one-way"
        error = await manage(a, "Ignore", "ADD", a.player_id)
        assert error["type"] == "ErrorRequest" and error["code"] == "UNKNOWN_PLAYER", error

        for player in (a, b, c):
            await enter_lobby(player)
        lobby = text_of("lobby from B ")
        await chat(b, lobby)
        await line(b, lobby)
        await line(c, lobby)
        await no_line(a, lobby)
        private = text_of("private to A ")
        await chat(b, private, recipient_ids=[a.player_id])
        await line(b, private)
        await no_line(a, private)
        # The ignorer still talks to the ignored (one-way).
        hello = text_of("A speaks ")
        await chat(a, hello)
        await line(b, hello)
        assert lobby not in [entry["text"] for entry in await history(a)]
        assert lobby in [entry["text"] for entry in await history(c)]

        game_id = await start_open_game(a, [b, c])
        in_game = text_of("in game from B ")
        await chat(b, in_game, game_id)
        await line(c, in_game)
        await no_line(a, in_game)
        assert [entry["text"] for entry in await history(a, game_id)] == []
        assert [entry["text"] for entry in await history(c, game_id)] == [in_game]

        # Nor do its invitations (S14).
        await b.client.send({"type": "EngageGameWithFriendsRequest", "friend_ids": [a.player_id]})
        await b.client.expect("GameCreatedRequest", invited_by=b.player_id)
        await a.client.sync()
        await a.client.no_message("GameCreatedRequest", invited_by=b.player_id)

        removed = await manage(a, "Ignore", "REMOVE", b.player_id)
        assert removed["type"] == "AsyncIgnoreRemovedRequest" and removed["player_id"] == b.player_id, removed
        assert await listed(a, "Ignore") == {}
        back = text_of("heard again ")
        await chat(b, back, game_id)
        assert (await line(a, back))["sender"] == 2

    play(port, scenario)


# --- Server statistics -------------------------------------------------------------------------------


def test_server_statistics_once_and_subscribed(port: int) -> None:
    """Server Statistics: once (subscribe absent or false), then subscribed: an update is pushed
    after a change (S8: at most every 2 s, and only when changed)."""

    async def scenario(table: Table) -> None:
        a = await table.player("statsA")
        once = await statistics(a.client)
        assert once["connected_players"] >= 1, once
        again = await statistics(a.client, subscribe=False)
        assert again["connected_players"] == once["connected_players"], (once, again)
        b = await table.player("statsB")
        await b.client.sync()
        more = await statistics(a.client)
        assert more["connected_players"] == once["connected_players"] + 1, (once, more)
        assert more["players"] >= once["players"] + 1, (once, more)

        # "we keep hosting live data for an unconnected player": two players start a game and
        # leave; they are still live players, no longer connected ones.
        d, e = (await table.player("statsD")), (await table.player("statsE"))
        before = await statistics(a.client)
        game_id = await start_open_game(d, [e])
        started = await statistics(a.client)
        assert started["hosted_games"] == before["hosted_games"] + 1, (before, started)
        for player in (d, e):
            await player.client.close()
        # Their sign-out reaches the server a moment after the close: ask until it shows (bounded).
        deadline = asyncio.get_running_loop().time() + 2.0
        gone = await statistics(a.client)
        while gone["connected_players"] > started["connected_players"] - 2:
            assert asyncio.get_running_loop().time() < deadline, (started, gone)
            await asyncio.sleep(0.05)
            gone = await statistics(a.client)
        assert gone["connected_players"] == started["connected_players"] - 2, (started, gone)
        assert gone["players"] == started["players"], (started, gone)
        assert gone["hosted_games"] == started["hosted_games"], f"game {game_id} is still live: {gone}"

        subscribed = await statistics(a.client, subscribe=True)
        await table.player("statsC")  # one more connected player
        pushed = await a.client.expect(
            "ServerStatisticsRequest", LIST_WAIT, connected_players=subscribed["connected_players"] + 1
        )
        assert "request_id" not in pushed, "pushed copies carry no request_id"
        assert pushed["players"] >= subscribed["players"] + 1, (subscribed, pushed)

        await statistics(a.client, subscribe=False)  # answered once more, and the stream ends

    play(port, scenario)


# --- Observing ---------------------------------------------------------------------------------------


def test_observing_a_game(port: int) -> None:
    """Observable Game List and Observing a Game: subscribe, find the game, start observing (OK
    with the StatusReport), receive the game's events, stop observing, unsubscribe (S17)."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("obsA")), (await table.player("obsB"))
        watcher = await table.player("observer")
        game_id = await start_open_game(a, [b], initial_state="s0")
        hidden = await start_open_game(
            await table.player("hidA"), [await table.player("hidB")], observable=False
        )

        await enter_lobby(watcher)
        rid = request_id("sub")
        await watcher.client.send(
            {"type": "SubscribeToObservableGameListRequest", "subscribe": True, "request_id": rid}
        )
        subscribed = await watcher.client.expect("SubscribedToObservableGameListRequest", request_id=rid)
        assert subscribed["subscribed"] is True, subscribed
        deadline = asyncio.get_running_loop().time() + LIST_WAIT
        games: dict[int, Message] = {}
        while game_id not in games:
            remaining = deadline - asyncio.get_running_loop().time()
            pushed = await watcher.client.expect("ObservableGameListRequest", max(remaining, 0.01))
            games = {entry["game_id"]: entry for entry in pushed.get("games", [])}
        assert hidden not in games, "a non-observable game is not listed"
        entry = games[game_id]
        assert entry["configuration"]["max_players"] == 2, entry
        assert "state" not in entry and "password" not in entry["configuration"], "no live data"
        if entry.get("players"):
            assert {p["player_id"] for p in entry["players"]} == {a.player_id, b.player_id}, entry

        started = await observe(watcher, game_id)
        assert (started["status"], started.get("observing")) == ("OK", True), started
        report = started["status_report"]
        assert (report["game_id"], report["status"], report["turn_index"]) == (game_id, "RUNNING", 1), report
        assert report.get("state") == "s0", report

        # The observer receives the game's events: a broadcast commit, the next turn, the chat.
        await commit(a, game_id, 1, "A1", [2, 1], broadcast=True)
        update = await watcher.client.expect("GameStateUpdatedRequest", game_id=game_id)
        assert (update["state"], update["turn_index"], update.get("player_id")) == ("A1", 2, 1), update
        required = await watcher.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"]) == (2, 2), required
        text = text_of("well played ")
        await chat(b, text, game_id)
        assert (await line(watcher, text))["sender"] == 2
        # An observer chats in the game too; having no seat, it is named by its global id.
        cheer = text_of("nice move ")
        await chat(watcher, cheer, game_id)
        for player in (a, b, watcher):
            assert (await line(player, cheer))["sender"] == watcher.player_id

        stopped = await observe(watcher, game_id, start=False)
        assert (stopped["status"], stopped.get("observing", False)) == ("OK", False), stopped
        await commit(b, game_id, 2, "B2", [1, 2], broadcast=True)
        await a.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=3)
        await watcher.client.no_message(("GameStateUpdatedRequest", "ActionRequiredRequest"), game_id=game_id)

        # Observing belongs to the connection: a new one does not observe (observe.py).
        assert (await observe(watcher, game_id))["status"] == "OK"
        await watcher.client.close()
        watcher = await reconnect(watcher, port)
        table.clients.append(watcher.client)
        await commit(a, game_id, 3, "A3", [2, 1], broadcast=True)
        await b.client.expect("GameStateUpdatedRequest", game_id=game_id, turn_index=4)
        await watcher.client.no_message(("GameStateUpdatedRequest", "ActionRequiredRequest"), game_id=game_id)
        await enter_lobby(watcher)

        rid = request_id("unsub")
        await watcher.client.send(
            {"type": "SubscribeToObservableGameListRequest", "subscribe": False, "request_id": rid}
        )
        unsubscribed = await watcher.client.expect("SubscribedToObservableGameListRequest", request_id=rid)
        assert unsubscribed["subscribed"] is False, unsubscribed

    play(port, scenario)


def test_observing_refusals(port: int) -> None:
    """Observing a Game: the text's refusals, each a GameObservedRequest with its status and no
    StatusReport; the forfeiter's exception (S17)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("refA")), (await table.player("refB")), (await table.player("refC"))
        watcher = await table.player("refWatch")
        open_game = await start_open_game(a, [b])
        private = await start_open_game(a, [b], private=True, password="sesame")
        closed = await start_open_game(a, [b, c], observable=False)
        buddies_only = await start_open_game(a, [b], observers_buddies_only=True)
        await enter_lobby(a)
        await a.client.send(
            {
                "type": "LobbyCreateGameRequest",
                "configuration": {"game_type": "parlourtest", "max_players": 3},
            }
        )
        waiting = (await a.client.expect("LobbyGameCreatedRequest"))["game_id"]

        async def refusal(player: Player, game_id: int) -> str:
            reply = await observe(player, game_id)
            assert reply.get("status_report") is None, reply
            assert reply.get("observing", False) is False, reply
            status: str = reply["status"]
            return status

        assert await refusal(watcher, open_game) == "NOT_IN_LOBBY"
        await enter_lobby(watcher)
        assert await refusal(watcher, NO_GAME) == "UNKNOWN_GAME"
        assert await refusal(a, open_game) == "PLAYING_IN_GAME"
        assert await refusal(watcher, private) == "PRIVATE_GAME"
        assert await refusal(watcher, closed) == "NOT_OBSERVABLE"
        assert await refusal(watcher, waiting) == "GAME_NOT_RUNNING"
        assert await refusal(watcher, buddies_only) == "BUDDIES_ONLY"
        # A buddy of the creator may watch it.
        added = await manage(a, "Buddy", "ADD", watcher.player_id)
        assert added["type"] == "AsyncBuddyAddedRequest", added
        assert (await observe(watcher, buddies_only))["status"] == "OK"

        # A forfeiter may watch its game whatever its observability.
        await c.client.send({"type": "GameForfeitRequest", "game_id": closed})
        await c.client.expect("GameForfeitedRequest", game_id=closed, player_id=3)
        await enter_lobby(c)
        watched = await observe(c, closed)
        assert watched["status"] == "OK" and watched["status_report"]["game_id"] == closed, watched
        # A forfeited seat still hears its game's chat (chat.py: any seat state).
        text = text_of("still there? ")
        await chat(a, text, closed)
        assert (await line(c, text))["sender"] == 1

        # An OVER game may not be observed any more.
        await a.client.send(
            {"type": "GameOverRequest", "game_id": open_game, "finalScores": {"1": [1, 1], "2": [0, 2]}}
        )
        for player in (a, b):
            await player.client.expect("GameOutcomeRequest", game_id=open_game)
            await player.client.send({"type": "GameOutcomeConfirmationRequest", "game_id": open_game})
            await player.client.sync()
        assert (await a.client.report(open_game))["status"] == "OVER"
        assert await refusal(watcher, open_game) == "GAME_NOT_RUNNING"

    play(port, scenario)


# --- Multicast ---------------------------------------------------------------------------------------


def test_multicast_to_all_present_players(port: int) -> None:
    """The Multicast diagram: MulticastDataRequest(data=A) -> ClientDataRequest(data=A) to A, B, C.
    Observers get nothing (ingame/phase_requests.py: the data is the players')."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("mcA")), (await table.player("mcB")), (await table.player("mcC"))
        watcher = await table.player("mcWatch")
        game_id = await start_open_game(a, [b, c])
        await enter_lobby(watcher)
        assert (await observe(watcher, game_id))["status"] == "OK"

        await multicast(a, game_id, "A")
        for player in (a, b, c):
            delivered = await player.client.expect("ClientDataRequest", game_id=game_id)
            assert (delivered["sender"], delivered["data"]) == (1, "A"), delivered
        await watcher.client.sync()
        await watcher.client.no_message("ClientDataRequest")
        # Transient: the game did not change.
        report = await a.client.report(game_id)
        assert (report["turn_index"], report.get("turn")) == (1, 1), report

        await multicast(c, game_id, "from C")
        for player in (a, b, c):
            delivered = await player.client.expect("ClientDataRequest", game_id=game_id)
            assert (delivered["sender"], delivered["data"]) == (3, "from C"), delivered

    play(port, scenario)


def test_multicast_to_recipients(port: int) -> None:
    """MulticastDataRequest with recipient_ids (local ids): the sender and the listed seats only."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("mrA")), (await table.player("mrB")), (await table.player("mrC"))
        outsider = await table.player("mrOut")
        game_id = await start_open_game(a, [b, c])

        await multicast(a, game_id, "for B", recipient_ids=[2])
        for player in (a, b):
            delivered = await player.client.expect("ClientDataRequest", game_id=game_id)
            assert (delivered["sender"], delivered["data"]) == (1, "for B"), delivered
        await c.client.sync()
        await c.client.no_message("ClientDataRequest")

        await multicast(b, game_id, "for C", recipients_ids=[3])  # the text's spelling (S20)
        for player in (b, c):
            delivered = await player.client.expect("ClientDataRequest", game_id=game_id)
            assert (delivered["sender"], delivered["data"]) == (2, "for C"), delivered
        await a.client.sync()
        await a.client.no_message("ClientDataRequest")

        # Recipients must be seats of the game; only its players may multicast.
        for sender, recipients in ((a, [5]), (outsider, [])):
            rid = request_id("multicast")
            await sender.client.send(
                {
                    "type": "MulticastDataRequest",
                    "game_id": game_id,
                    "data": "x",
                    "recipient_ids": recipients,
                    "request_id": rid,
                }
            )
            error = await sender.client.expect(("ErrorRequest", "ClientDataRequest"), request_id=rid)
            assert error["type"] == "ErrorRequest", error
            assert error.get("request_type") == "MulticastDataRequest", error
        for player in (a, b, c):
            await player.client.no_message("ClientDataRequest", data="x")

        # Only active players multicast (ingame/phase_requests.py): not one who forfeited.
        await c.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await c.client.expect("GameForfeitedRequest", game_id=game_id, player_id=3)
        rid = request_id("forfeited")
        await c.client.send(
            {"type": "MulticastDataRequest", "game_id": game_id, "data": "y", "request_id": rid}
        )
        error = await c.client.expect(("ErrorRequest", "ClientDataRequest"), request_id=rid)
        assert error["type"] == "ErrorRequest", error
        await a.client.no_message("ClientDataRequest", data="y")

    play(port, scenario)
