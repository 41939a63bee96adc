"""The /async service without sockets, on an injected clock: every workflow of part 1."""

from __future__ import annotations

import asyncio
import base64
import zlib
from collections import deque
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.protocols.async_ws.game.model import decode_game
from parlour.protocols.async_ws.game.rules import ServerGame
from parlour.protocols.async_ws.game.server_game import SNAPSHOT_EVERY, PluginGame
from parlour.protocols.async_ws.state.hub import AsyncLimits, deflated
from parlour.storage import GameResultRow
from tests.protocols.async_ws.failing import FailingCommit
from tests.protocols.async_ws.harness import Harness


def decode_list(text: str) -> list[dict[str, object]]:
    items: list[dict[str, object]] = msgspec.json.decode(zlib.decompress(base64.b64decode(text)))
    return items


# -- Authentication, heartbeat ---------------------------------------------------------------------


def test_requests_before_auth_are_refused_and_ping_is_echoed() -> None:
    h = Harness()
    conn = h.connect()
    h.send(conn, type="EnterLobbyRequest", request_id="r1")
    error = h.error(conn, "UNAUTHENTICATED")
    assert error["request_id"] == "r1" and error["request_type"] == "EnterLobbyRequest"
    h.send(conn, type="PingRequest", timestamp=12.5, request_id="p")
    assert h.expect(conn, "PingRequest") == {"type": "PingRequest", "timestamp": 12.5, "request_id": "p"}


def test_auth_refusals() -> None:
    h = Harness()
    _, token = h.account("ann")
    conn = h.connect()
    h.send(conn, type="AsyncAuthRequest", name="ann", sessionToken=token + "x")
    h.expect(conn, "AsyncConnectionErrorRequest", reason="BAD_CREDENTIALS")
    h.send(conn, type="AsyncAuthRequest", name="bob", sessionToken=token)
    h.expect(conn, "AsyncConnectionErrorRequest", reason="BAD_CREDENTIALS")
    h.now += 86400 * 2
    h.send(conn, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.expect(conn, "AsyncConnectionErrorRequest", reason="EXPIRED_TOKEN")


def test_failed_sign_ins_are_rate_limited() -> None:
    h = Harness()
    _, token = h.account("ann")
    conn = h.connect()
    for _ in range(5):
        h.send(conn, type="AsyncAuthRequest", name="ann", sessionToken="nope")
        h.expect(conn, "AsyncConnectionErrorRequest", reason="BAD_CREDENTIALS")
    h.send(conn, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.expect(conn, "AsyncConnectionErrorRequest", reason="RATE_LIMITED")


def test_a_second_connection_replaces_the_first() -> None:
    h = Harness()
    first, account_id = h.player("ann")
    _, token = h.service.hub.accounts[account_id], h.service.tokens.issue(account_id, "ann", h.now)[0]
    second = h.connect()
    h.send(second, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.expect(second, "AsyncConnectedRequest")
    h.expect(first, "AsyncConnectionErrorRequest", reason="REPLACED")
    assert h.closed[first].code == 1000
    h.drop(first)  # the old connection going away signs nobody out
    assert h.service.hub.online[account_id] == second


def test_disconnect_request_signs_out() -> None:
    h = Harness()
    conn, _ = h.player("ann")
    h.send(conn, type="AsyncDisconnectRequest")
    h.send(conn, type="EnterLobbyRequest")
    h.error(conn, "UNAUTHENTICATED")


def test_bad_frames_get_bad_request_and_the_connection_stays() -> None:
    h = Harness()
    conn, _ = h.player("ann")
    h.raw(conn, "{not json")
    h.error(conn, "BAD_REQUEST")
    h.raw(conn, b"\x00\x01")
    h.error(conn, "BAD_REQUEST")
    h.send(conn, type="NoSuchRequest")
    assert h.error(conn, "BAD_REQUEST")["request_type"] == "NoSuchRequest"
    h.send(conn, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 9})
    assert "max_players" in h.error(conn, "BAD_REQUEST")["message"]
    assert conn not in h.closed


def test_a_flood_closes_with_1008() -> None:
    h = Harness(AsyncLimits(requests_per_second=5))
    conn, _ = h.player("ann")
    for _ in range(20):
        h.send(conn, type="PingRequest", timestamp=1)
    h.error(conn, "RATE_LIMITED")
    assert h.closed[conn].code == 1008


def test_silent_connections_are_closed() -> None:
    h = Harness(AsyncLimits(ping_timeout=60))
    conn, _ = h.player("ann")
    h.advance(30)
    h.send(conn, type="PingRequest", timestamp=1)
    h.advance(59)
    assert conn not in h.closed
    h.advance(2)
    assert h.closed[conn].code == 1001


# -- Lobby ------------------------------------------------------------------------------------------


def test_lobby_enter_exit_and_lists() -> None:
    h = Harness(AsyncLimits(list_interval=2))
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    h.send(ann, type="EnterLobbyRequest")
    h.expect(ann, "LobbyEnteredRequest")
    players = decode_list(h.expect(ann, "LobbyPlayerListRequest")["player_list"])
    assert players == [{"player_id": ann_id, "name": "ann", "presence": "ONLINE"}]
    assert decode_list(h.expect(ann, "LobbyGameListRequest")["game_list"]) == []
    h.send(ann, type="EnterLobbyRequest")
    h.error(ann, "PLAYER_ALREADY_IN_LOBBY")
    h.send(bob, type="EnterLobbyRequest")
    h.send(
        bob,
        type="LobbyCreateGameRequest",
        configuration={"game_type": "chess", "max_players": 2, "private": True, "password": "pw"},
    )
    created = h.expect(bob, "LobbyGameCreatedRequest")
    assert "password" not in created["configuration"]
    h.advance(2)
    players = decode_list(h.expect(ann, "LobbyPlayerListRequest")["player_list"])
    assert [p["player_id"] for p in players] == [ann_id, bob_id]
    games = decode_list(h.expect(ann, "LobbyGameListRequest")["game_list"])
    assert games[0]["game_id"] == created["game_id"] and "password" not in games[0]["configuration"]
    h.advance(2)  # nothing changed: nothing pushed
    h.none(ann, "LobbyPlayerListRequest")
    h.none(ann, "LobbyGameListRequest")
    h.send(ann, type="ExitLobbyRequest")
    h.expect(ann, "LobbyExitedRequest")


def test_player_info() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    _, bob_id = h.player("bob")
    h.send(ann, type="AskPlayerInfoRequest", player_id=bob_id)
    assert h.expect(ann, "LobbyPlayerInfoRequest")["player"]["name"] == "bob"
    h.send(ann, type="AskPlayerInfoRequest", player_id=999)
    h.error(ann, "UNKNOWN_PLAYER")


def test_create_join_and_auto_start() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid)
    h.expect(ann, "LobbyNewPlayerRequest", local_id=2)
    h.expect(ann, "LobbyNewPlayerRequest", local_id=3)
    h.expect(bob, "LobbyNewPlayerRequest", local_id=3)
    for conn in (ann, bob, cid):
        report = h.expect(conn, "GameCreatedRequest", game_id=game_id)["status_report"]
        assert report["status"] == "RUNNING" and [p["local_id"] for p in report["players"]] == [1, 2, 3]
    required = h.expect(ann, "ActionRequiredRequest", game_id=game_id, player_id=1, turn_index=1)
    assert required["state"] == "s0"
    h.none(bob, "ActionRequiredRequest")


def test_join_denials() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    h.send(
        ann,
        type="LobbyCreateGameRequest",
        configuration={"game_type": "x", "max_players": 2, "private": True, "password": "pw"},
    )
    game_id = h.expect(ann, "LobbyGameCreatedRequest")["game_id"]
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id, password="no")
    h.expect(bob, "LobbyJoinDeniedRequest", cause="WRONG_PASSWORD")
    h.send(ann, type="LobbyJoinGameRequest", game_id=game_id)
    h.expect(ann, "LobbyJoinDeniedRequest", cause="ALREADY_JOINED")
    h.send(bob, type="LobbyJoinGameRequest", game_id=999)
    h.expect(bob, "LobbyJoinDeniedRequest", cause="UNKNOWN_GAME")
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id, password="pw")
    h.expect(bob, "GameCreatedRequest")
    h.send(cid, type="LobbyJoinGameRequest", game_id=game_id, password="pw")
    h.expect(cid, "LobbyJoinDeniedRequest", cause="ALREADY_STARTED")


def test_leaving_and_the_creator_leaving_aborts() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    h.send(ann, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 3})
    game_id = h.expect(ann, "LobbyGameCreatedRequest")["game_id"]
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id)
    h.send(bob, type="LobbyLeaveGameRequest", game_id=game_id)
    assert "aborted" not in h.expect(bob, "LobbyPlayerLeftGameRequest", player_id=bob_id)
    h.expect(ann, "LobbyPlayerLeftGameRequest", player_id=bob_id)
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id)
    h.send(ann, type="LobbyLeaveGameRequest", game_id=game_id)
    h.expect(ann, "LobbyPlayerLeftGameRequest", player_id=ann_id, aborted=True)
    h.expect(bob, "LobbyPlayerLeftGameRequest", player_id=ann_id, aborted=True)
    assert h.games[game_id].status == "ABORTED"


def test_early_start_and_its_denials() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    h.send(
        ann,
        type="LobbyCreateGameRequest",
        configuration={"game_type": "x", "min_players": 2, "max_players": 4},
    )
    game_id = h.expect(ann, "LobbyGameCreatedRequest")["game_id"]
    h.send(ann, type="LobbyStartGameRequest", game_id=game_id)
    h.expect(ann, "LobbyStartGameDeniedRequest", cause="NOT_ENOUGH_PLAYERS")
    h.send(bob, type="LobbyJoinGameRequest", game_id=game_id)
    h.send(bob, type="LobbyStartGameRequest", game_id=game_id)
    h.expect(bob, "LobbyStartGameDeniedRequest", cause="NOT_CREATOR")
    h.send(ann, type="LobbyStartGameRequest", game_id=game_id)
    h.expect(ann, "GameCreatedRequest")
    h.expect(bob, "GameCreatedRequest")
    h.expect(ann, "ActionRequiredRequest", turn_index=1)
    h.send(ann, type="LobbyStartGameRequest", game_id=game_id)
    h.expect(ann, "LobbyStartGameDeniedRequest", cause="ALREADY_STARTED")


def test_a_private_game_needs_a_password() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    h.send(
        ann,
        type="LobbyCreateGameRequest",
        configuration={"game_type": "x", "max_players": 2, "private": True},
    )
    assert "password" in h.error(ann, "BAD_REQUEST")["message"]


def test_too_many_offers() -> None:
    h = Harness(AsyncLimits(max_offers=3))
    ann, _ = h.player("ann")
    for _ in range(3):
        h.send(ann, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 2})
        h.expect(ann, "LobbyGameCreatedRequest")
    h.send(ann, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 2})
    h.error(ann, "TOO_MANY_OFFERS")


# -- Invitations ------------------------------------------------------------------------------------


def test_invitation_accepted_by_all_starts() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[bob_id, 0], request_id="i")
    created = h.expect(ann, "GameCreatedRequest", invited_by=ann_id, request_id="i")
    game_id = created["game_id"]
    report = created["status_report"]
    assert report["status"] == "NOT_STARTED"
    assert [p["kind"] for p in report["players"]] == ["HUMAN", "HUMAN", "ROBOT"]
    h.expect(bob, "GameCreatedRequest", invited_by=ann_id, game_id=game_id)
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    h.expect(bob, "InvitationAnsweredRequest", accept=True)
    assert h.expect(bob, "GameCreatedRequest")["status_report"]["status"] == "RUNNING"
    h.expect(ann, "ActionRequiredRequest", turn_index=1)


def test_invitation_declined_aborts_and_bad_invitations() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    cid, _ = h.player("cid")
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[0, 0])
    h.error(ann, "BAD_REQUEST")
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[12345])
    h.error(ann, "UNKNOWN_PLAYER")
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[bob_id])
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(cid, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    h.error(cid, "UNKNOWN_GAME")
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=False)
    h.expect(bob, "InvitationAnsweredRequest", accept=False)
    h.expect(ann, "GameAbortedRequest", game_id=game_id)
    assert h.games[game_id].status == "ABORTED"


# -- Turns ------------------------------------------------------------------------------------------


def three_player_game(h: Harness) -> tuple[int, int, int, int]:
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid)
    h.clear()
    return game_id, ann, bob, cid


def test_the_standard_turn_diagram() -> None:
    """The text's 3-player diagram: A, B, C, then C again; indexes 1 -> 2 -> 3 -> 4 -> 5 (S20)."""
    h = Harness()
    game_id, a, b, c = three_player_game(h)
    h.send(
        a, type="CommitActionRequest", game_id=game_id, turn_index=1, next_state="A", next_players=[2, 3, 1]
    )
    h.expect(a, "ActionCommitedRequest", turn_index=2)
    h.expect(b, "ActionRequiredRequest", turn_index=2, state="A", player_id=2)
    h.send(
        b, type="CommitActionRequest", game_id=game_id, turn_index=2, next_state="B", next_players=[3, 1, 2]
    )
    h.expect(b, "ActionCommitedRequest", turn_index=3)
    h.expect(c, "ActionRequiredRequest", turn_index=3, state="B")
    h.send(
        c, type="CommitActionRequest", game_id=game_id, turn_index=3, next_state="C", next_players=[3, 2, 1]
    )
    h.expect(c, "ActionCommitedRequest", turn_index=4)
    h.expect(c, "ActionRequiredRequest", turn_index=4, state="C")
    h.send(
        c, type="CommitActionRequest", game_id=game_id, turn_index=4, next_state="C1", next_players=[1, 2, 3]
    )
    h.expect(c, "ActionCommitedRequest", turn_index=5)
    h.expect(a, "ActionRequiredRequest", turn_index=5, state="C1")
    assert sorted(index for gid, index in h.turns if gid == game_id) == [1, 2, 3, 4]
    h.none(b, "GameStateUpdatedRequest")  # no broadcast asked


def test_broadcast_reaches_the_others() -> None:
    h = Harness()
    game_id, a, b, c = three_player_game(h)
    h.send(
        a, type="CommitActionRequest", game_id=game_id, next_state="toto", next_players=[2], broadcast=True
    )
    h.expect(a, "ActionCommitedRequest")
    h.none(a, "GameStateUpdatedRequest")
    for conn in (b, c):
        h.expect(conn, "GameStateUpdatedRequest", state="toto", turn_index=2, player_id=1)


def test_commit_errors() -> None:
    h = Harness()
    game_id, a, b, _ = three_player_game(h)
    outsider, _ = h.player("dan")
    h.send(b, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[1])
    h.error(b, "NOT_YOUR_TURN")
    h.send(a, type="CommitActionRequest", game_id=game_id, turn_index=7, next_state="x", next_players=[2])
    h.error(a, "INDEX_CONFLICT")
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[5])
    h.error(a, "UNKNOWN_PLAYER")
    h.send(outsider, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[1])
    h.error(outsider, "UNKNOWN_PLAYER")
    h.send(a, type="CommitActionRequest", game_id=999, next_state="x", next_players=[1])
    h.error(a, "UNKNOWN_GAME")
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], pause_time=60)
    h.error(a, "BAD_REQUEST")
    h.send(a, type="CommitActionRequest", game_id=game_id, next_players=[2])
    h.error(a, "BAD_REQUEST")
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x" * (300 * 1024), next_players=[2])
    h.error(a, "TOO_LARGE")
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], player_id=3)
    h.error(a, "NOT_YOUR_TURN")  # seat 3 is a human, not a robot to play for
    h.send(a, type="GameForfeitRequest", game_id=game_id)
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.error(a, "YOU_FORFEITED")


def test_several_games_at_once_and_whats_new() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    first = h.open_game(ann, bob)
    second = h.open_game(cid, ann)
    h.send(
        ann,
        type="CommitActionRequest",
        game_id=first,
        next_state="f1",
        next_players=[2],
        next_summary_data="sum",
    )
    h.expect(ann, "ActionCommitedRequest", game_id=first)
    h.send(ann, type="WhatsNewPussycatRequest")
    reports = {r["game_id"]: r for r in h.expect(ann, "GameStatusReportRequest")["status_reports"]}
    assert set(reports) == {first, second}
    assert (
        reports[first]["turn"] == 2
        and reports[first]["state"] == "f1"
        and reports[first]["summary_data"] == "sum"
    )
    assert reports[second]["turn"] == 1 and reports[second]["turn_index"] == 1
    h.send(ann, type="WhatsNewPussycatRequest", game_id=second)
    assert [r["game_id"] for r in h.expect(ann, "GameStatusReportRequest")["status_reports"]] == [second]


def test_a_returning_player_gets_its_pending_turn() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    h.drop(ann)
    token, _ = h.service.tokens.issue(ann_id, "ann", h.now)
    again = h.connect()
    h.send(again, type="AsyncAuthRequest", name="ann", sessionToken=token)
    h.expect(again, "AsyncConnectedRequest")
    h.expect(again, "ActionRequiredRequest", game_id=game_id, turn_index=1)


# -- Clocks and the idle timer ----------------------------------------------------------------------


def test_clocks_run_on_the_turn_and_get_the_increment() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, clock_seconds=60, clock_increment_seconds=5)
    required = h.expect(ann, "ActionRequiredRequest")
    assert required["player_clock"] == {"player_id": 1, "remaining_seconds": 60.0, "armed": True}
    h.now += 10
    h.send(bob, type="GetClocksRequest", game_id=game_id)
    clocks = h.expect(bob, "ClocksStatusRequest")["clocks"]
    assert clocks[0]["remaining_seconds"] == 50.0 and clocks[1]["remaining_seconds"] == 60.0
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="a", next_players=[2])
    h.send(bob, type="GetClocksRequest", game_id=game_id)
    clocks = h.expect(bob, "ClocksStatusRequest")["clocks"]
    assert clocks[0] == {"player_id": 1, "remaining_seconds": 55.0}
    assert clocks[1]["armed"] is True


def test_pause_after_commit_and_an_early_commit_cancels_the_resume() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, clock_seconds=60)
    h.clear()
    h.send(
        ann, type="CommitActionRequest", game_id=game_id, next_state="a", next_players=[2, 1], pause_time=3
    )
    h.expect(ann, "ActionCommitedRequest", pause_time=3)
    h.expect(bob, "ActionRequiredRequest", pause_time=3)
    for conn in (ann, bob):
        h.expect(conn, "ClockPausedRequest", pause_time=3, player_ids=[2])
    h.advance(2)
    h.none(bob, "ClockResumedRequest")
    h.advance(1)
    clocks = h.expect(bob, "ClockResumedRequest")["clocks"]
    assert clocks[1]["remaining_seconds"] == 60.0 and clocks[1]["armed"] is True
    h.expect(ann, "ClockResumedRequest")
    h.send(
        bob, type="CommitActionRequest", game_id=game_id, next_state="b", next_players=[1, 2], pause_time=3
    )
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="c", next_players=[2, 1])
    h.advance(5)
    h.none(ann, "ClockResumedRequest")  # the early commit cancelled the resume


def test_idle_timer_steps_then_a_robot_turn() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, idle_time=40)
    h.clear()
    h.advance(20)
    for conn in (ann, bob):
        h.expect(conn, "PlayerIdleProgressRequest", progress=50, player_ids=[1])
    h.advance(10)
    h.expect(bob, "PlayerIdleProgressRequest", progress=75)
    h.advance(10)
    h.expect(bob, "PlayerIdleProgressRequest", progress=100)
    h.expect(bob, "PlayerTimeoutRequest", offender_id=1, status="IDLE", turn_index=1)
    # Both may commit; the first wins and the other gets NOT_YOUR_TURN (the text's warning).
    h.send(bob, type="CommitActionRequest", game_id=game_id, player_id=1, next_state="r", next_players=[2])
    h.expect(bob, "ActionCommitedRequest", turn_index=2)
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="late", next_players=[2])
    h.error(ann, "NOT_YOUR_TURN")
    report = decode_game(h.games[game_id].doc)
    assert report.seats[0].state == "ACTIVE"  # an idle player stays in the game


def test_an_exhausted_clock_replaces_the_player() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid, clock_seconds=30)
    h.clear()
    h.advance(29)
    h.none(bob, "PlayerReplacedRequest")
    h.advance(1)
    for conn in (ann, bob, cid):
        h.expect(conn, "PlayerReplacedRequest", player_id=1, reason="TIMED_OUT")
    h.expect(bob, "PlayerTimeoutRequest", offender_id=1, status="TIMED_OUT")
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.error(ann, "YOU_RAN_OUT_OF_TIME")


# -- Forfeit, hot-swap, abort, game over ------------------------------------------------------------


def test_forfeit_and_hot_swap_by_the_last_committer() -> None:
    """The text's robot diagram: A commits, B must be played by a robot, A plays it."""
    h = Harness()
    game_id, a, b, c = three_player_game(h)
    h.send(b, type="GameForfeitRequest", game_id=game_id)
    for conn in (a, b, c):
        h.expect(conn, "GameForfeitedRequest", player_id=2)
        h.expect(conn, "PlayerReplacedRequest", player_id=2, reason="FORFEITED")
    h.send(a, type="CommitActionRequest", game_id=game_id, turn_index=1, next_state="A", next_players=[2, 3])
    h.expect(a, "ActionCommitedRequest", turn_index=2)
    h.expect(a, "PlayerTimeoutRequest", offender_id=2, turn_index=2, state="A", status="FORFEITED")
    h.none(c, "PlayerTimeoutRequest")
    h.send(c, type="CommitActionRequest", game_id=game_id, player_id=2, next_state="B?", next_players=[3])
    h.error(c, "NOT_YOUR_TURN")  # only the player asked plays the robot's turn
    h.send(
        a,
        type="CommitActionRequest",
        game_id=game_id,
        turn_index=2,
        player_id=2,
        next_state="B",
        next_players=[3],
    )
    h.expect(a, "ActionCommitedRequest", turn_index=3)
    h.expect(c, "ActionRequiredRequest", turn_index=3)


def test_a_robot_turn_moves_to_a_present_player_when_the_one_asked_leaves() -> None:
    h = Harness()
    game_id, a, b, c = three_player_game(h)
    h.send(b, type="GameForfeitRequest", game_id=game_id)
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="A", next_players=[2, 3, 1])
    h.expect(a, "PlayerTimeoutRequest", offender_id=2)
    h.drop(a)
    h.expect(c, "PlayerTimeoutRequest", offender_id=2, turn_index=2)
    h.send(c, type="CommitActionRequest", game_id=game_id, player_id=2, next_state="B", next_players=[3])
    h.expect(c, "ActionCommitedRequest", turn_index=3)


def test_hot_swap_asks_an_absent_player_in_next_players_order() -> None:
    """Nobody else is connected when the idle timer runs out: the next non-robot in
    ``next_players`` is chosen, and gets the robot's turn when it comes back."""
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid, idle_time=40)
    h.drop(bob)
    h.drop(cid)
    h.advance(40)
    h.none(ann, "PlayerTimeoutRequest")
    assert h.service.hub.games[game_id].delegate == 2
    again = h.connect()
    token, _ = h.service.tokens.issue(bob_id, "bob", h.now)
    h.send(again, type="AsyncAuthRequest", name="bob", sessionToken=token)
    h.expect(again, "PlayerTimeoutRequest", offender_id=1, status="IDLE", turn_index=1)
    h.send(again, type="WhatsNewPussycatRequest", game_id=game_id)
    report = h.expect(again, "GameStatusReportRequest")["status_reports"][0]
    assert report["turn"] == 1 and report["active_player"] == 2


def test_abort_when_nobody_active_is_left_and_penalties() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, ranked=True)
    h.send(ann, type="GameForfeitRequest", game_id=game_id)
    h.send(bob, type="GameForfeitRequest", game_id=game_id)
    aborted = h.expect(ann, "GameAbortedRequest", game_id=game_id)
    assert {p["player_id"] for p in aborted["penalties"]} == {1, 2}
    assert all(p["rating_change"] < 0 for p in aborted["penalties"])
    assert all(p["shown"]["change"] < 0 and p["shown"]["provisional"] for p in aborted["penalties"])
    results = [r for r in h.records if isinstance(r, GameResultRow)]
    assert [(r.seat, r.rank, r.games) for r in results] == [(1, None, 1), (2, None, 1)]
    assert h.games[game_id].status == "ABORTING"
    h.send(ann, type="GameAbortedConfirmationRequest", game_id=game_id)
    assert h.games[game_id].status == "ABORTING"
    h.send(bob, type="GameAbortedConfirmationRequest", game_id=game_id)
    assert h.games[game_id].status == "ABORTED"


def test_game_over_outcome_ratings_and_confirmations() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    game_id = h.open_game(ann, bob, ranked=True, game_type="chess")
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [12, 2]})
    h.error(ann, "BAD_REQUEST")
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [12, 2], "2": [23, 1]})
    for conn in (ann, bob):
        outcome = h.expect(conn, "GameOutcomeRequest", is_ranked=True)["outcome"]
        assert [(o["player_id"], o["rank"]) for o in outcome] == [(1, 2), (2, 1)]
        assert outcome[0]["rating_change"] < 0 < outcome[1]["rating_change"]
        # As people read it (docs/ratings.md): from 1500, provisional after one game.
        assert [o["shown"] for o in outcome] == [
            {"rating": 1422, "provisional": True, "change": -78},
            {"rating": 1578, "provisional": True, "change": 78},
        ]
    assert h.ratings[(bob_id, "chess")].games == 1
    # Each seat's result is stored with the game's end, for the players' profiles.
    results = [r for r in h.records if isinstance(r, GameResultRow)]
    assert [(r.game_id, r.seat, r.account_id, r.name, r.rank, r.score, r.games) for r in results] == [
        (game_id, 1, ann_id, "ann", 2, 12.0, 1),
        (game_id, 2, bob_id, "bob", 1, 23.0, 1),
    ]
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.error(ann, "UNKNOWN_GAME")  # no commits after the game is over
    h.send(bob, type="WhatsNewPussycatRequest", game_id=game_id)
    report = h.expect(bob, "GameStatusReportRequest")["status_reports"][0]
    assert report["status"] == "OUTCOME" and report["outcome_not_seen"] == [1, 2]
    h.send(ann, type="GameOutcomeConfirmationRequest", game_id=game_id)
    h.send(bob, type="GameOutcomeConfirmationRequest", game_id=game_id)
    assert h.games[game_id].status == "OVER"
    h.send(ann, type="AskPlayerInfoRequest", player_id=ann_id)
    player = h.expect(ann, "LobbyPlayerInfoRequest")["player"]
    assert player["games_played"] == 1
    assert player["shown_ratings"] == {"chess": {"rating": 1422, "provisional": True}}


def test_outcome_turns_over_after_the_retention() -> None:
    h = Harness(AsyncLimits(outcome_retention=100))
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [1, 1], "2": [0, 2]})
    h.advance(99)
    assert h.games[game_id].status == "OUTCOME"
    h.advance(1)
    assert h.games[game_id].status == "OVER"


# -- Durability -------------------------------------------------------------------------------------


def test_a_restart_resumes_every_game_where_it_was() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    game_id = h.open_game(ann, bob, clock_seconds=600)
    h.now += 10
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="a", next_players=[2])
    h.now += 5
    restarted = h.restart(downtime=3600)  # down for an hour: the clock is not charged for it
    b2 = restarted.connect()
    token, _ = restarted.service.tokens.issue(bob_id, "bob", restarted.now)
    restarted.send(b2, type="AsyncAuthRequest", name="bob", sessionToken=token)
    restarted.expect(b2, "AsyncConnectedRequest")
    required = restarted.expect(b2, "ActionRequiredRequest", turn_index=2, state="a")
    assert required["player_clock"]["remaining_seconds"] == pytest.approx(595)
    restarted.send(b2, type="GetClocksRequest", game_id=game_id)
    clocks = restarted.expect(b2, "ClocksStatusRequest")["clocks"]
    assert clocks[0]["remaining_seconds"] == pytest.approx(590)
    assert clocks[1]["remaining_seconds"] <= 600
    restarted.send(
        b2, type="CommitActionRequest", game_id=game_id, turn_index=2, next_state="b", next_players=[1]
    )
    restarted.expect(b2, "ActionCommitedRequest", turn_index=3)
    # New games never reuse an id.
    a2 = restarted.connect()
    restarted.send(
        a2,
        type="AsyncAuthRequest",
        name="ann",
        sessionToken=restarted.service.tokens.issue(ann_id, "ann", restarted.now)[0],
    )
    restarted.send(a2, type="LobbyCreateGameRequest", configuration={"game_type": "x", "max_players": 2})
    assert restarted.expect(a2, "LobbyGameCreatedRequest")["game_id"] > game_id


def test_store_failure_returns_the_game_to_what_is_stored() -> None:
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    stored_row = h.games[game_id]
    effects = h.service.received(
        ann,
        msgspec.json.encode(
            {"type": "CommitActionRequest", "game_id": game_id, "next_state": "a", "next_players": [2]}
        ).decode(),
        h.now,
    )
    records = [r for e in effects if hasattr(e, "records") for r in e.records]  # type: ignore[attr-defined]
    h.run(h.service.store_failed(records, [ann], AsyncReload(async_games={game_id: stored_row}), h.now))
    h.error(ann, "INTERNAL_ERROR")
    assert h.service.hub.games[game_id].turn_index == 1
    h.send(ann, type="CommitActionRequest", game_id=game_id, turn_index=1, next_state="a", next_players=[2])
    h.expect(ann, "ActionCommitedRequest", turn_index=2)


def test_a_refused_commit_is_answered_once_echoing_its_request_id() -> None:
    """The runtime calls the Store's ``refused`` (the request's own answer) and leaves that
    connection out of store_failed's: one INTERNAL_ERROR, with the request's id and game."""
    from parlour.core.effects import Store
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    stored_row = h.games[game_id]
    frame = {
        "type": "CommitActionRequest",
        "game_id": game_id,
        "next_state": "a",
        "next_players": [2],
        "request_id": "c-1",
    }
    effects = h.service.received(ann, msgspec.json.encode(frame).decode(), h.now)
    store = effects[0]
    assert isinstance(store, Store) and store.refused is not None
    store.refused(True)
    h.run(h.service.store_failed(store.records, [], AsyncReload(async_games={game_id: stored_row}), h.now))
    error = h.error(ann, "INTERNAL_ERROR")
    assert (error["request_id"], error["game_id"], error["request_type"]) == (
        "c-1",
        game_id,
        "CommitActionRequest",
    ), error
    assert "nothing changed" in error["message"]
    h.none(ann, "ErrorRequest")
    h.none(bob, "ActionRequiredRequest")
    assert h.service.hub.games[game_id].turn_index == 1


def test_a_request_held_behind_a_failed_commit_is_answered_try_again_echoing_its_request_id(
    tmp_path: Path,
) -> None:
    """While a commit fails, requests that store nothing (reads) are held behind it and refused
    with it: their answers, built on what was not stored, are dropped, and each is told
    TRY_AGAIN once, echoing its request_id; the commit's sender is told INTERNAL_ERROR, echoing
    its own. Asked again, a read is answered from what the store holds."""
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    h.clear()
    failing = FailingCommit(h, tmp_path / "async.db")
    commit = {"game_id": game_id, "next_state": "a", "next_players": [2], "request_id": "c-1"}

    async def scenario() -> None:
        await failing.fail(lambda: failing.send(ann, type="CommitActionRequest", **commit))
        failing.send(bob, type="WhatsNewPussycatRequest", game_id=game_id, request_id="w-1")
        failing.send(bob, type="WhatsNewPussycatRequest", request_id="w-2")
        failing.send(ann, type="GetClocksRequest", game_id=game_id, request_id="k-1")
        await failing.recover()

    asyncio.run(scenario())
    error = h.error(ann, "INTERNAL_ERROR")
    assert (error["request_id"], error["request_type"]) == ("c-1", "CommitActionRequest"), error
    told = [(ann, "k-1", "GetClocksRequest"), (bob, "w-1", "WhatsNewPussycatRequest")]
    for conn, request_id, kind in [*told, (bob, "w-2", "WhatsNewPussycatRequest")]:
        error = h.expect(conn, "ErrorRequest", code="TRY_AGAIN", request_id=request_id)
        assert error["request_type"] == kind and "store failed" in error["message"], error
    for conn in (ann, bob):
        assert h.inbox[conn] == deque(), h.inbox[conn]
    h.send(bob, type="WhatsNewPussycatRequest", game_id=game_id, request_id="w-3")
    report = h.expect(bob, "GameStatusReportRequest", request_id="w-3")["status_reports"]
    assert [entry["turn_index"] for entry in report] == [1]


def test_lists_are_deflated_json() -> None:
    assert decode_list(deflated([{"a": 1}])) == [{"a": 1}]


# -- Server rules (S9) ------------------------------------------------------------------------------


def test_server_rules_play_a_whole_fish_game_with_robots_for_the_absent() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, game_type="fish", rules="fish")
    for _ in range(500):
        game = h.service.hub.games[game_id]
        if game.status != "RUNNING":
            break
        conn = ann if game.turn == 1 else bob
        required = h.expect(conn, "ActionRequiredRequest", game_id=game_id, turn_index=game.turn_index)
        assert required["legal_actions"] and msgspec.json.decode(required["state"])["you"]["id"] == game.turn
        h.send(
            conn,
            type="CommitActionRequest",
            game_id=game_id,
            turn_index=game.turn_index,
            action="no such move",
        )
        h.error(conn, "BAD_REQUEST")
        h.send(conn, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[1])
        h.error(conn, "BAD_REQUEST")
        h.send(conn, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][-1])
        h.expect(conn, "ActionCommitedRequest", turn_index=required["turn_index"] + 1)
        h.expect(ann if conn == bob else bob, "GameStateUpdatedRequest", player_id=required["player_id"])
    game = h.service.hub.games[game_id]
    assert game.status == "OUTCOME"
    outcome = h.expect(ann, "GameOutcomeRequest")["outcome"]
    assert sorted(entry["rank"] for entry in outcome)[0] == 1
    assert len(h.turns) == len(game.actions)


def test_server_rules_robots_play_their_seats_and_a_restart_replays() -> None:
    h = Harness()
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    configuration = {"game_type": "tsuro", "rules": "tsuro", "max_players": 3, "min_players": 3}
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[0, bob_id], configuration=configuration)
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    game = h.service.hub.games[game_id]
    assert game.status == "RUNNING" and game.turn == 1
    required = h.expect(ann, "ActionRequiredRequest", game_id=game_id)
    assert msgspec.json.decode(required["state"])["you"]["hand"]
    h.send(ann, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0])
    h.expect(ann, "ActionCommitedRequest")
    game = h.service.hub.games[game_id]
    assert game.status == "RUNNING" and game.turn == 3 and len(game.actions) == 2  # the robot played at once
    for conn in (ann, bob):
        h.expect(conn, "GameStateUpdatedRequest", player_id=2)
    spectator = msgspec.json.decode(game.state)
    assert "you" not in spectator  # what is stored as the state hides every hand
    restarted = h.restart()
    assert rules_of(restarted, game_id).view(3) == rules_of(h, game_id).view(3)
    assert restarted.service.hub.games[game_id].actions == game.actions
    token, _ = restarted.service.tokens.issue(bob_id, "bob", restarted.now)
    conn = restarted.connect()
    restarted.send(conn, type="AsyncAuthRequest", name="bob", sessionToken=token)
    required = restarted.expect(conn, "ActionRequiredRequest", game_id=game_id, player_id=3)
    restarted.send(conn, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0])
    restarted.expect(conn, "ActionCommitedRequest")
    assert ann_id != bob_id


def test_server_rules_refuse_a_seat_count_the_game_does_not_allow() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    h.send(
        ann,
        type="LobbyCreateGameRequest",
        configuration={"game_type": "tsuro", "rules": "tsuro", "max_players": 8},
    )
    assert "players" in h.error(ann, "BAD_REQUEST")["message"]


def rules_of(h: Harness, game_id: int) -> ServerGame:
    """The rules adapter of a running server-rules game."""
    game = h.service.games.game(game_id)
    assert game is not None and game.rules is not None
    return game.rules


def test_server_rules_take_options_and_a_robot_level_that_survive_a_restart() -> None:
    """Parlour's extensions of GameConfiguration: the plugin's options (Apologies ADULT) and the
    level robot seats play at, stored with the game."""
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    configuration = {
        "game_type": "apologies",
        "rules": "apologies",
        "max_players": 3,
        "min_players": 3,
        "options": {"mode": "ADULT"},
        "robot_level": "hard",
    }
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[0, bob_id], configuration=configuration)
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    rules = rules_of(h, game_id)
    assert rules.level == "hard" and rules.options == {"mode": "ADULT"}
    assert msgspec.json.decode(rules.view(None))["mode"] == "ADULT"
    restarted = h.restart()
    again = rules_of(restarted, game_id)
    assert again.level == "hard" and again.options == {"mode": "ADULT"}
    assert again.actions == rules.actions and again.view(2) == rules.view(2)
    for bad, word in (
        ({"options": {"mode": "EXPERT"}}, "mode"),
        ({"options": {"colour": "red"}}, "colour"),
        ({"robot_level": "expert"}, "robot_level"),
        ({"rules": "client", "robot_level": "hard"}, "server rules"),
    ):
        h.send(ann, type="LobbyCreateGameRequest", configuration={**configuration, **bad})
        assert word in h.error(ann, "BAD_REQUEST")["message"], bad


def test_a_long_server_rules_game_restarts_from_its_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored record carries the game's latest snapshot: a restart replays only the actions
    after it, and the game goes on as it would have."""
    h = Harness()
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    configuration = {"game_type": "apologies", "rules": "apologies", "max_players": 3, "min_players": 3}
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[0, bob_id], configuration=configuration)
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    game = h.service.hub.games[game_id]
    while game.status == "RUNNING" and len(game.actions) < 3 * SNAPSHOT_EVERY + 5:
        conn = ann if game.turn == 1 else bob
        required = h.expect(conn, "ActionRequiredRequest", game_id=game_id, turn_index=game.turn_index)
        h.send(conn, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][-1])
        h.expect(conn, "ActionCommitedRequest")
        game = h.service.hub.games[game_id]
    assert game.status == "RUNNING" and game.snapshot is not None
    applied = 0
    apply = PluginGame.apply

    def counted(self: PluginGame[Any, Any], action: str) -> None:
        nonlocal applied
        applied += 1
        apply(self, action)

    monkeypatch.setattr(PluginGame, "apply", counted)
    restarted = h.restart()
    assert 0 <= applied < SNAPSHOT_EVERY < len(game.actions)
    before, after = rules_of(h, game_id), rules_of(restarted, game_id)
    assert after.actions == before.actions
    assert [after.view(seat) for seat in (None, 1, 2, 3)] == [before.view(seat) for seat in (None, 1, 2, 3)]
    seat = before.to_move()
    assert seat is not None and after.robot_action(seat) == before.robot_action(seat)
