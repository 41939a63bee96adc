"""Simultaneous turns and interruptions (the Scalable Server text "Simultaneous Game Turn",
"Interruptions") over the wire, against a real ``parlour serve``.

One test per sequence diagram, on docs/async-decisions.md (S19, S20) and the choices documented
in async_ws/ingame/phase_requests.py: a robot's simultaneous seat is asked of a client with
``PlayerTimeoutRequest(expected="UpdateUserDataRequest")``; the merger is the first of
``next_players`` if present (else the first present player of the phase); the merge keeps the turn
index of the commit that opened the phase (``ActionCommitedRequest.turn_index``); the window closes
when its time is up or as soon as every interrupter answered; late interruptions get
``InterruptActionErrorRequest``. The server and the harness are test_async_workflows.py's.
"""

from __future__ import annotations

import time
from typing import Any

from tests.asyncclient import Message, Player, enter_lobby, invite, reconnect, request_id, start_open_game
from tests.integration import test_async_workflows as workflows
from tests.integration.test_async_workflows import Table, commit, commit_message, play, refused

#: The module's ``parlour serve`` on a fresh store: test_async_workflows.py's fixture.
port = workflows.port


def pairs(entries: list[Message] | None) -> list[tuple[int, str]]:
    """``user_data`` / ``interruption_data`` as (local id, data), in the order sent."""
    assert entries is not None, "the data to merge is missing"
    return [(entry["player_id"], entry["data"]) for entry in entries]


async def update_user_data(player: Player, game_id: int, data: str, **extra: Any) -> Message:
    """UpdateUserDataRequest that must be confirmed by UserDataUpdatedRequest (S20)."""
    rid = request_id("userdata")
    await player.client.send(
        {"type": "UpdateUserDataRequest", "game_id": game_id, "user_data": data, "request_id": rid, **extra}
    )
    reply = await player.client.expect(("UserDataUpdatedRequest", "ErrorRequest"), request_id=rid)
    assert reply["type"] == "UserDataUpdatedRequest", reply
    assert reply["game_id"] == game_id, reply
    return reply


async def interrupt(player: Player, game_id: int, turn_index: int, turn: int, data: str, **extra: Any) -> str:
    rid = request_id("interrupt")
    await player.client.send(
        {
            "type": "InterruptActionRequest",
            "game_id": game_id,
            "turn_index": turn_index,
            "turn": turn,
            "interruption_data": data,
            "request_id": rid,
            **extra,
        }
    )
    return rid


async def interrupt_refused(player: Player, game_id: int, turn_index: int, turn: int) -> str:
    """An InterruptActionRequest answered by InterruptActionErrorRequest (not accepted); its reason."""
    rid = await interrupt(player, game_id, turn_index, turn, "too late?")
    reply = await player.client.expect(("InterruptActionErrorRequest", "ErrorRequest"), request_id=rid)
    assert reply["type"] == "InterruptActionErrorRequest", reply
    assert (reply["game_id"], reply["turn_index"]) == (game_id, turn_index), reply
    accepted = [m for m in player.client.inbox if m.get("interruption_data") == "too late?"]
    assert accepted == [], f"a refused interruption was relayed: {accepted}"
    reason: str = reply["reason"]
    return reason


async def observe(player: Player, game_id: int) -> None:
    """``player`` (in the lobby) starts observing ``game_id`` (S17)."""
    await player.client.send({"type": "StartObserveGameRequest", "game_id": game_id})
    observed = await player.client.expect("GameObservedRequest", game_id=game_id)
    assert observed["status"] == "OK", observed


# --- Simultaneous turns ------------------------------------------------------------------------------


def test_simultaneous_turn_with_a_robot_seat(port: int) -> None:
    """The first "Simultaneous Game Turn" diagram (A, B and the robot C), with A playing C's part,
    A's update broadcast (the third diagram), and the merge by A with every seat's data."""

    async def scenario(table: Table) -> None:
        a, b = (await table.player("simA")), (await table.player("simB"))
        game_id = await invite(a, [b, None])  # seat 3 is an invited robot
        await b.client.send({"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True})
        await b.client.expect("InvitationAnsweredRequest", game_id=game_id)
        await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=1)
        watcher = await table.player("simWatch")
        await enter_lobby(watcher)
        await observe(watcher, game_id)

        # "simultaneous_players are invalid": BAD_REQUEST, and nothing changes (phases.py).
        for bad in ([], [1, 1, 2], [1, 5]):
            await refused(
                a,
                commit_message(
                    game_id, 1, next_players=[1, 2, 3], next_simultaneous=True, simultaneous_players=bad
                ),
                "BAD_REQUEST",
            )
        await refused(
            a, commit_message(game_id, 1, next_players=[1, 2, 3], simultaneous_players=[1, 2]), "BAD_REQUEST"
        )

        committed = await commit(
            a, game_id, 1, "toto", [1, 2, 3], next_simultaneous=True, simultaneous_players=[1, 2, 3]
        )
        index = committed["turn_index"]  # 2: the simultaneous turn's index
        for player in (a, b):
            required = await player.client.expect("UserDataUpdateRequiredRequest", game_id=game_id)
            assert (required["state"], required["turn_index"]) == ("toto", index), required
        robot = await a.client.expect("PlayerTimeoutRequest", game_id=game_id, offender_id=3)
        assert robot.get("expected") == "UpdateUserDataRequest", robot
        assert (robot["status"], robot["state"], robot["turn_index"]) == ("ROBOT", "toto", index), robot
        await b.client.no_message("PlayerTimeoutRequest")
        report = await b.client.report(game_id)
        assert (report["status"], report["turn_index"]) == ("RUNNING", index), report

        # A's data, broadcast to the others (GameUserDataUpdatedRequest), then B's.
        await update_user_data(a, game_id, "a", turn_index=index, broadcast=True)
        for other in (b, watcher):  # the broadcast diagram: the other players and the observers
            told = await other.client.expect("GameUserDataUpdatedRequest", game_id=game_id)
            assert (told["player"], told["user_data"]) == (1, "a"), told
        await update_user_data(b, game_id, "b", turn_index=index)
        await a.client.no_message("GameUserDataUpdatedRequest")  # B's was not broadcast
        await a.client.no_message("ActionRequiredRequest")  # C has not given its data yet

        # A plays the robot C.
        await update_user_data(a, game_id, "c", turn_index=index, player_id=3)

        # The merger (first of next_players, present) gets every seat's data.
        merge = await a.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (1, index), merge
        assert sorted(pairs(merge.get("user_data"))) == [(1, "a"), (2, "b"), (3, "c")], merge
        await b.client.no_message("ActionRequiredRequest")
        await commit(a, game_id, index, "abcfoobar", [2, 3, 1], next_simultaneous=False)
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (
            2,
            index + 1,
            "abcfoobar",
        )
        assert required.get("user_data") is None, "an ordinary turn again"
        report = await a.client.report(game_id)
        assert (report.get("turn"), report["turn_index"], report.get("state")) == (2, index + 1, "abcfoobar")

    play(port, scenario)


def test_simultaneous_merge_by_a_live_player_when_the_merger_forfeits(port: int) -> None:
    """The second "Simultaneous Game Turn" diagram: the merger A forfeits, a live player gets
    PlayerTimeoutRequest(offender_id=A) with the user data and commits the merge for A."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("mgA")), (await table.player("mgB")), (await table.player("mgC"))
        game_id = await start_open_game(a, [b, c])
        committed = await commit(
            a, game_id, 1, "s1", [1, 2, 3], next_simultaneous=True, simultaneous_players=[1, 2, 3]
        )
        index = committed["turn_index"]
        for player, data in ((a, "a"), (b, "b"), (c, "c")):
            await player.client.expect("UserDataUpdateRequiredRequest", game_id=game_id, turn_index=index)
            await update_user_data(player, game_id, data)
        merge = await a.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=index)
        assert sorted(pairs(merge.get("user_data"))) == [(1, "a"), (2, "b"), (3, "c")], merge

        await a.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await a.client.expect("GameForfeitedRequest", game_id=game_id, player_id=1)
        robot = await b.client.expect("PlayerTimeoutRequest", game_id=game_id, offender_id=1)
        assert robot.get("expected", "CommitActionRequest") == "CommitActionRequest", robot
        assert robot["turn_index"] == index, robot
        assert sorted(pairs(robot.get("user_data"))) == [(1, "a"), (2, "b"), (3, "c")], robot
        await c.client.no_message("PlayerTimeoutRequest")

        await commit(b, game_id, index, "abcfoobar", [2, 3, 1], player_id=1)
        required = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (
            2,
            index + 1,
            "abcfoobar",
        )

    play(port, scenario)


def test_simultaneous_seat_of_an_absent_player(port: int) -> None:
    """A simultaneous seat whose player is not connected is asked of a client
    (PlayerTimeoutRequest ABSENT, expected UpdateUserDataRequest); the player comes back, is asked
    for its data and answers first: the delegate's late answer gets NOT_YOUR_TURN (phases.py)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("absA")), (await table.player("absB")), (await table.player("absC"))
        game_id = await start_open_game(a, [b, c])
        # A's UI is in the game, so A is told when C's connection is gone (S15): only then is C
        # absent for the server, and the turn can begin without it.
        await a.client.send({"type": "SwitchedToGameRequest", "game_id": game_id})
        await c.client.sync()
        await c.client.close()
        gone = await a.client.expect("PlayerPresenceUpdateRequest", game_id=game_id)
        assert [(u["player_id"], u["presence"]) for u in gone["updates"]] == [(c.player_id, "OFFLINE")], gone
        committed = await commit(
            a, game_id, 1, "s1", [1, 2, 3], next_simultaneous=True, simultaneous_players=[1, 2, 3]
        )
        index = committed["turn_index"]
        delegated = await a.client.expect("PlayerTimeoutRequest", game_id=game_id, offender_id=3)
        assert (delegated["status"], delegated.get("expected")) == ("ABSENT", "UpdateUserDataRequest"), (
            delegated
        )
        assert delegated["turn_index"] == index, delegated
        await b.client.no_message("PlayerTimeoutRequest")

        c = await reconnect(c, port)
        table.clients.append(c.client)
        asked = await c.client.expect("UserDataUpdateRequiredRequest", game_id=game_id)
        assert (asked["state"], asked["turn_index"]) == ("s1", index), asked
        await update_user_data(c, game_id, "c from C")
        await refused(
            a,
            {"type": "UpdateUserDataRequest", "game_id": game_id, "user_data": "c from A", "player_id": 3},
            "NOT_YOUR_TURN",
        )
        await update_user_data(a, game_id, "a")
        await update_user_data(b, game_id, "b")
        merge = await a.client.expect("ActionRequiredRequest", game_id=game_id, turn_index=index)
        assert sorted(pairs(merge.get("user_data"))) == [(1, "a"), (2, "b"), (3, "c from C")], merge

    play(port, scenario)


# --- Interruptions -----------------------------------------------------------------------------------


def test_interruptions_by_two_players_then_merge(port: int) -> None:
    """The "Interruptions" diagram: A commits an interruptible action, B and C interrupt it,
    InterruptionOverRequest to all, and B (first of next_players) merges with interruption_data."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("intA")), (await table.player("intB")), (await table.player("intC"))
        game_id = await start_open_game(a, [b, c])
        watcher = await table.player("intWatch")
        await enter_lobby(watcher)
        await observe(watcher, game_id)

        # An interruption window without interrupters, or interrupters without a window: BAD_REQUEST.
        await refused(
            a,
            commit_message(game_id, 1, next_players=[2, 3, 1], interruption_window_duration=1000),
            "BAD_REQUEST",
        )
        await refused(
            a, commit_message(game_id, 1, next_players=[2, 3, 1], interruption_players=[2, 3]), "BAD_REQUEST"
        )

        # The window closes as soon as both interrupters answered (phases.py): its length only
        # bounds the wait, so a generous one keeps the test deterministic and still fast.
        committed = await commit(
            a, game_id, 1, "A", [2, 3, 1], interruption_window_duration=1000, interruption_players=[2, 3]
        )
        index = committed["turn_index"]
        for player in (a, b, c, watcher):
            update = await player.client.expect("GameStateUpdatedRequest", game_id=game_id)
            assert update["interruption_window_duration"] == 1000, update
            assert (update["turn_index"], update["state"], update.get("player_id")) == (index, "A", 1), update

        await interrupt(b, game_id, index, 1, "Not this time")
        for player in (b, a, c, watcher):
            interrupted = await player.client.expect("ActionInterruptedRequest", game_id=game_id, player_id=2)
            assert (interrupted["turn_index"], interrupted["turn"]) == (index, 1), interrupted
            assert interrupted["interruption_data"] == "Not this time", interrupted
        # The refusals inside the window (phases.py): B again, the committer itself, a wrong turn.
        assert await interrupt_refused(b, game_id, index, 1) == "ALREADY_INTERRUPTED"
        assert await interrupt_refused(a, game_id, index, 1) == "NOT_ALLOWED"
        assert await interrupt_refused(c, game_id, index, 2) == "NOT_ALLOWED"
        for player in (a, b, c):
            await player.client.no_message("InterruptionOverRequest", within=0.05)

        await interrupt(c, game_id, index, 1, "I protest too")
        for player in (c, a, b):
            interrupted = await player.client.expect("ActionInterruptedRequest", game_id=game_id, player_id=3)
            assert (interrupted["turn_index"], interrupted["turn"]) == (index, 1), interrupted
            assert interrupted["interruption_data"] == "I protest too", interrupted
        for player in (a, b, c, watcher):
            await player.client.expect("InterruptionOverRequest", game_id=game_id, turn_index=index)

        merge = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (2, index), merge
        assert pairs(merge.get("interruption_data")) == [(2, "Not this time"), (3, "I protest too")], merge
        await a.client.no_message("ActionRequiredRequest")
        await c.client.no_message("ActionRequiredRequest")
        await commit(b, game_id, index, "A, interrupted", [3, 1, 2])
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (
            3,
            index + 1,
            "A, interrupted",
        )

    play(port, scenario)


def test_interruption_window_ends_and_a_late_interruption_is_refused(port: int) -> None:
    """A 300 ms window: B interrupts, C does not; when the time is up InterruptionOverRequest
    reaches everyone, B merges B's interruption, and C's late interruption gets
    InterruptActionErrorRequest (WINDOW_CLOSED)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("lateA")), (await table.player("lateB")), (await table.player("lateC"))
        game_id = await start_open_game(a, [b, c])
        committed = await commit(
            a, game_id, 1, "A", [2, 3, 1], interruption_window_duration=300, interruption_players=[2, 3]
        )
        index = committed["turn_index"]
        opened = await b.client.expect("GameStateUpdatedRequest", game_id=game_id, turn_index=index)
        opened_at = time.monotonic()
        assert opened["interruption_window_duration"] == 300, opened
        await interrupt(b, game_id, index, 1, "Stop")
        await b.client.expect("ActionInterruptedRequest", game_id=game_id, player_id=2)

        for player in (a, b, c):
            await player.client.expect("InterruptionOverRequest", 3.0, game_id=game_id, turn_index=index)
        assert time.monotonic() - opened_at > 0.2, "C had not answered: the window lasts its 300 ms"
        assert await interrupt_refused(c, game_id, index, 1) == "WINDOW_CLOSED"
        await a.client.no_message("ActionInterruptedRequest", player_id=3)

        merge = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (2, index), merge
        assert pairs(merge.get("interruption_data")) == [(2, "Stop")], merge
        await commit(b, game_id, index, "A, stopped", [1, 2, 3])
        await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=index + 1)
        # A window that was never opened for this index is closed too.
        assert await interrupt_refused(c, game_id, index + 1, 1) == "WINDOW_CLOSED"

    play(port, scenario)


def test_interruption_declined_by_everyone_goes_on_without_merge(port: int) -> None:
    """``no_more_interruption``: when every interrupter declines, the window closes at once and the
    next player plays as after any commit, with no interruption data (phases.py)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("noA")), (await table.player("noB")), (await table.player("noC"))
        game_id = await start_open_game(a, [b, c])
        committed = await commit(
            a, game_id, 1, "A", [3, 1, 2], interruption_window_duration=10_000, interruption_players=[2, 3]
        )
        index = committed["turn_index"]
        for player in (b, c):
            await player.client.expect("GameStateUpdatedRequest", game_id=game_id, turn_index=index)
            await interrupt(player, game_id, index, 1, "ignored", no_more_interruption=True)
        for player in (a, b, c):
            # Far sooner than the 10 s window: every interrupter answered.
            await player.client.expect("InterruptionOverRequest", 2.0, game_id=game_id, turn_index=index)
            await player.client.no_message("ActionInterruptedRequest", within=0)
        required = await c.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (required["player_id"], required["turn_index"], required["state"]) == (3, index, "A"), required
        assert required.get("interruption_data") is None, required
        await commit(c, game_id, index, "C", [1, 2, 3])
        await a.client.expect("ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=index + 1)

    play(port, scenario)


def test_an_interrupter_who_forfeits_closes_the_window(port: int) -> None:
    """An interrupter who forfeits during the window has no answer left to give: once the others
    answered, the window closes at once and the merge follows (phases.py, seat_left)."""

    async def scenario(table: Table) -> None:
        a, b, c = (await table.player("ffA")), (await table.player("ffB")), (await table.player("ffC"))
        game_id = await start_open_game(a, [b, c])
        committed = await commit(
            a, game_id, 1, "A", [2, 3, 1], interruption_window_duration=10_000, interruption_players=[2, 3]
        )
        index = committed["turn_index"]
        await b.client.expect("GameStateUpdatedRequest", game_id=game_id, turn_index=index)
        await interrupt(b, game_id, index, 1, "Objection")
        await a.client.expect("ActionInterruptedRequest", game_id=game_id, player_id=2)
        await a.client.no_message("InterruptionOverRequest", within=0.1)  # C may still answer

        await c.client.send({"type": "GameForfeitRequest", "game_id": game_id})
        await c.client.expect("GameForfeitedRequest", game_id=game_id, player_id=3)
        for player in (a, b):
            await player.client.expect("InterruptionOverRequest", 2.0, game_id=game_id, turn_index=index)
        merge = await b.client.expect("ActionRequiredRequest", game_id=game_id)
        assert (merge["player_id"], merge["turn_index"]) == (2, index), merge
        assert pairs(merge.get("interruption_data")) == [(2, "Objection")], merge

    play(port, scenario)
