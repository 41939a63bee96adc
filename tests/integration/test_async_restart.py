"""/async games survive a SIGKILL (docs/async-decisions.md S10): ``parlour serve`` on a store file
is killed in the middle of a turn, of an invitation, and with a clock running, then restarted on the
same file (on a new port). The old session token still authenticates, WhatsNewPussycatRequest shows
each game at its last acknowledged step, and the game goes on from there.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.asyncclient import (
    AsyncClient,
    Message,
    Player,
    alogin,
    enter_lobby,
    invite,
    new_player,
    reconnect,
    request_id,
    start_open_game,
)
from tests.processes import BIN, RestartableServer, clean_env

#: One store file, served by one process at a time.
Server = RestartableServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "p.db", tmp_path / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def play(server: Server, scenario: Callable[[list[AsyncClient]], Awaitable[None]]) -> None:
    """Runs ``scenario``, closing every connection it lists at the end."""

    async def main() -> None:
        clients: list[AsyncClient] = []
        try:
            await scenario(clients)
        finally:
            for client in clients:
                await client.close()

    asyncio.run(main())


async def players(server: Server, clients: list[AsyncClient], *prefixes: str) -> list[Player]:
    made = [await new_player(server.port, prefix) for prefix in prefixes]
    clients.extend(player.client for player in made)
    return made


async def crash_and_restart(server: Server, clients: list[AsyncClient], *everyone: Player) -> None:
    """SIGKILL with every connection open, a new process on the same store, everyone back with
    the token they had (the password still works too)."""
    old = [player.client for player in everyone]
    await asyncio.to_thread(server.kill)
    for client in old:
        await client.wait_closed()
    await asyncio.to_thread(server.start)
    for player in everyone:
        await reconnect(player, server.port)
        clients.append(player.client)
    assert await alogin(server.port, everyone[0].name)


#: How often, and how far apart, a commit refused TRY_AGAIN is sent again (a shard's new owner
#: takes it within a renewal period of the lease).
TRIES = 20
RETRY_SECONDS = 0.25


async def commit(
    player: Player, game_id: int, turn_index: int, state: str, next_players: list[int], **extra: Any
) -> Message:
    """A commit that must be acknowledged with turn_index + 1 (S20). In a cluster, a game whose
    shard is changing owner answers TRY_AGAIN (nothing changed): sent again, as a client does."""
    rid = request_id("commit")
    message = {
        "type": "CommitActionRequest",
        "game_id": game_id,
        "turn_index": turn_index,
        "next_state": state,
        "next_players": next_players,
        "request_id": rid,
        **extra,
    }
    for _ in range(TRIES):
        await player.client.send(message)
        reply = await player.client.expect(("ActionCommitedRequest", "ErrorRequest"))
        if reply.get("code") != "TRY_AGAIN":
            break
        await asyncio.sleep(RETRY_SECONDS)
    assert reply["type"] == "ActionCommitedRequest", reply
    assert (reply.get("game_id"), reply.get("turn_index"), reply.get("request_id")) == (
        game_id,
        turn_index + 1,
        rid,
    ), reply
    return reply


async def seat_clock(player: Player, game_id: int, seat: int) -> float:
    await player.client.send({"type": "GetClocksRequest", "game_id": game_id})
    reply = await player.client.expect("ClocksStatusRequest", game_id=game_id)
    clocks = {entry["player_id"]: entry for entry in reply["clocks"]}
    remaining: float = clocks[seat]["remaining_seconds"]
    return remaining


def test_sigkill_in_the_middle_of_a_turn(server: Server) -> None:
    async def scenario(clients: list[AsyncClient]) -> None:
        a, b = await players(server, clients, "A", "B")
        game_id = await start_open_game(a, [b], initial_state="s0")
        await commit(a, game_id, 1, "A1", [2, 1], next_summary_data="after A")
        await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)

        await crash_and_restart(server, clients, a, b)

        report = await b.client.report(game_id)
        assert report["status"] == "RUNNING", report
        assert (report.get("turn"), report["turn_index"], report.get("state")) == (2, 2, "A1"), report
        assert report.get("summary_data") == "after A", report
        assert [
            entry.get("player_id") for entry in sorted(report["players"], key=lambda e: e["local_id"])
        ] == [
            a.player_id,
            b.player_id,
        ], report
        # The stale index is refused, the right one goes on.
        await b.client.send(
            {
                "type": "CommitActionRequest",
                "game_id": game_id,
                "turn_index": 1,
                "next_state": "x",
                "next_players": [1],
            }
        )
        await b.client.expect("ErrorRequest", code="INDEX_CONFLICT")
        await commit(b, game_id, 2, "B1", [1, 2])
        required = await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=3)
        assert required["state"] == "B1", required

    play(server, scenario)


def test_sigkill_in_the_middle_of_an_invitation(server: Server) -> None:
    async def scenario(clients: list[AsyncClient]) -> None:
        a, b, c = await players(server, clients, "host", "B", "C")
        game_id = await invite(a, [b, c], max_players=3)
        await b.client.send({"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True})
        await b.client.expect("InvitationAnsweredRequest", game_id=game_id, accept=True)

        await crash_and_restart(server, clients, a, b, c)

        report = await a.client.report(game_id)
        assert report["status"] == "NOT_STARTED", report
        # B's answer was kept: C's is the last one needed.
        await c.client.send({"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True})
        await c.client.expect("InvitationAnsweredRequest", game_id=game_id, accept=True)
        await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=1)
        assert (await c.client.report(game_id))["status"] == "RUNNING"
        await commit(a, game_id, 1, "A1", [2, 3, 1])
        await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)

    play(server, scenario)


def test_sigkill_with_a_clock_running(server: Server) -> None:
    async def scenario(clients: list[AsyncClient]) -> None:
        a, b = await players(server, clients, "A", "B")
        game_id = await start_open_game(a, [b], initial_state="s0", clock_seconds=600)
        # Let seat 1's clock run a little, so that a clock reset to its start on restart shows.
        await asyncio.sleep(1.5)
        before = await seat_clock(a, game_id, 1)
        assert 590 < before < 599, before

        await crash_and_restart(server, clients, a, b)

        report = await a.client.report(game_id)
        assert (report["status"], report.get("turn"), report["turn_index"]) == ("RUNNING", 1, 1), report
        after = await seat_clock(a, game_id, 1)
        assert 590 < after <= before, (before, after)
        assert await seat_clock(b, game_id, 2) == pytest.approx(600)
        await commit(a, game_id, 1, "A1", [2, 1])
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2, turn_index=2)
        assert required["state"] == "A1", required

    play(server, scenario)


# --- Simultaneous turns, interruptions and the social side (S10, S14) -------------------------------


async def update_user_data(player: Player, game_id: int, data: str, **extra: Any) -> Message:
    """An UpdateUserDataRequest confirmed by UserDataUpdatedRequest (stored before, S10)."""
    rid = request_id("userdata")
    await player.client.send(
        {"type": "UpdateUserDataRequest", "game_id": game_id, "user_data": data, "request_id": rid, **extra}
    )
    reply = await player.client.expect(("UserDataUpdatedRequest", "ErrorRequest"), request_id=rid)
    assert reply["type"] == "UserDataUpdatedRequest" and reply["game_id"] == game_id, reply
    return reply


def test_sigkill_in_the_middle_of_a_simultaneous_turn(server: Server) -> None:
    """A's user data was acknowledged, B's not yet: after the restart B is asked again, its data
    completes the turn and the merger A gets both."""

    async def scenario(clients: list[AsyncClient]) -> None:
        a, b = await players(server, clients, "simA", "simB")
        game_id = await start_open_game(a, [b], initial_state="s0")
        committed = await commit(
            a, game_id, 1, "toto", [1, 2], next_simultaneous=True, simultaneous_players=[1, 2]
        )
        index = committed["turn_index"]
        for player in (a, b):
            await player.client.expect("UserDataUpdateRequiredRequest", game_id=game_id, turn_index=index)
        await update_user_data(a, game_id, "a", turn_index=index)

        await crash_and_restart(server, clients, a, b)

        report = await a.client.report(game_id)
        assert (report["status"], report["turn_index"], report.get("state")) == ("RUNNING", index, "toto"), (
            report
        )
        # B still owes its data: coming back, it is asked for it (game/phases.py, resend_data).
        asked = await b.client.expect("UserDataUpdateRequiredRequest", game_id=game_id)
        assert (asked["state"], asked["turn_index"]) == ("toto", index), asked
        await a.client.no_message("ActionRequiredRequest")
        await update_user_data(b, game_id, "b", turn_index=index)
        merge = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (1, index), merge
        data = sorted((entry["player_id"], entry["data"]) for entry in merge.get("user_data") or [])
        assert data == [(1, "a"), (2, "b")], merge
        await commit(a, game_id, index, "ab", [2, 1])
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id, player_id=2)
        assert (required["turn_index"], required["state"]) == (index + 1, "ab"), required

    play(server, scenario)


def test_sigkill_during_an_interruption_window(server: Server) -> None:
    """B interrupted A's action, then the server died with the 3 s window open: after the restart
    the window ends (InterruptionOverRequest) and B merges with its interruption."""

    async def scenario(clients: list[AsyncClient]) -> None:
        a, b, c = await players(server, clients, "intA", "intB", "intC")
        game_id = await start_open_game(a, [b, c], initial_state="s0")
        committed = await commit(
            a, game_id, 1, "A", [2, 3, 1], interruption_window_duration=3000, interruption_players=[2, 3]
        )
        index = committed["turn_index"]
        await b.client.expect("GameStateUpdatedRequest", game_id=game_id, turn_index=index)
        await b.client.send(
            {
                "type": "InterruptActionRequest",
                "game_id": game_id,
                "turn_index": index,
                "turn": 1,
                "interruption_data": "Not this time",
            }
        )
        for player in (b, a):
            await player.client.expect("ActionInterruptedRequest", game_id=game_id, player_id=2)

        await crash_and_restart(server, clients, a, b, c)

        for player in (a, b, c):
            await player.client.expect("InterruptionOverRequest", 6.0, game_id=game_id, turn_index=index)
        merge = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (2, index), merge
        data = [(entry["player_id"], entry["data"]) for entry in merge.get("interruption_data") or []]
        assert data == [(2, "Not this time")], merge
        await commit(b, game_id, index, "A, interrupted", [3, 1, 2])
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id, player_id=3)
        assert (required["turn_index"], required["state"]) == (index + 1, "A, interrupted"), required

    play(server, scenario)


def test_chat_history_buddies_and_reports_survive_a_restart(server: Server) -> None:
    """Chat lines, buddy changes and reports are stored before they are acknowledged (S10, S14):
    after a SIGKILL the history (without private lines) and the buddy list are back, a mute and
    a report's cooldown still hold, and the stopped server's store exports the report."""

    reporter: dict[str, Any] = {}

    async def scenario(clients: list[AsyncClient]) -> None:
        a, b = await players(server, clients, "chatA", "chatB")
        reporter.update(id=a.player_id, reported=b.name)
        game_id = await start_open_game(a, [b], initial_state="s0")
        await a.client.send({"type": "MulticastChatRequest", "game_id": game_id, "text": "gg in game"})
        await b.client.expect("ClientChatRequest", game_id=game_id, text="gg in game")

        for player in (a, b):
            await enter_lobby(player)
        await a.client.send({"type": "MulticastChatRequest", "text": "hello lobby"})
        await b.client.expect("ClientChatRequest", text="hello lobby")
        await a.client.send(
            {"type": "MulticastChatRequest", "text": "just for you", "recipient_ids": [b.player_id]}
        )
        await b.client.expect("ClientChatRequest", text="just for you")
        await a.client.send(
            {"type": "AsyncBuddyManagementRequest", "operation": "ADD", "player_id": b.player_id}
        )
        await a.client.expect("AsyncBuddyAddedRequest", player_id=b.player_id)
        await a.client.send({"type": "MulticastChatRequest", "text": f"/report {b.name} spamming the lobby"})
        thanks = await a.client.expect("ClientChatRequest", sender=0, code=4)
        assert "Thanks" in thanks["text"], thanks
        for number in range(3):  # the third blocked line mutes B for five minutes (S14)
            await b.client.send({"type": "MulticastChatRequest", "text": f"you bastard {number}"})
            blocked = await b.client.expect("ClientChatBlockedRequest")
        assert blocked.get("muted") is True, blocked

        await crash_and_restart(server, clients, a, b)

        async def lines(player: Player, scope: int) -> list[tuple[int, str]]:
            await player.client.send({"type": "GetChatHistoryRequest", "game_id": scope})
            reply = await player.client.expect("ClientChatHistoryRequest")
            return [(entry["sender"], entry["text"]) for entry in reply.get("messages", [])]

        assert await lines(b, game_id) == [(1, "gg in game")]
        for player in (a, b):
            await enter_lobby(player)
        assert await lines(b, 0) == [(a.player_id, "hello lobby")]
        await a.client.send({"type": "AsyncBuddyListRequest"})
        buddies = (await a.client.expect("AsyncBuddyListContentRequest")).get("buddies", [])
        assert [(entry["player_id"], entry["name"]) for entry in buddies] == [(b.player_id, b.name)], buddies
        await b.client.send({"type": "AsyncBuddyListRequest"})
        assert (await b.client.expect("AsyncBuddyListContentRequest")).get("buddies", []) == []
        # B is still muted, and A still has to wait to report again.
        await b.client.send({"type": "MulticastChatRequest", "text": "sorry everyone"})
        assert (await b.client.expect("ClientChatBlockedRequest")).get("muted") is True
        await a.client.send({"type": "MulticastChatRequest", "text": f"/report {b.name} again"})
        await a.client.expect("ClientChatRequest", sender=0, code=5)
        # Chat goes on after the restart (the history's numbering included).
        await a.client.send({"type": "MulticastChatRequest", "text": "back again"})
        await b.client.expect("ClientChatRequest", text="back again")
        assert await lines(b, 0) == [(a.player_id, "hello lobby"), (a.player_id, "back again")]

    play(server, scenario)

    server.stop()
    exported = subprocess.run(
        [str(BIN / "parlour"), "db", "export", "--store", str(server.store), "-"],
        capture_output=True,
        check=True,
        env=clean_env(),
        timeout=30,
    )
    rows = [json.loads(text) for text in exported.stdout.decode().splitlines() if text.strip()]
    reports = [row["fields"] for row in rows if row["kind"] == "report"]
    assert len(reports) == 1, f"one /report, stored: {reports}"
    (report,) = reports
    assert (report["reporter"], report["reported"]) == (reporter["id"], reporter["reported"]), report
    assert "spamming the lobby" in report["text"], report
    assert report["scope"] == 0, "typed in the lobby"
