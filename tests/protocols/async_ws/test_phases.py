"""Simultaneous turns, interruptions and multicast on /async (ingame/phase_requests.py), one test per sequence
diagram of the text's "In game" sections, every refusal, the timers of each phase, restarts in the
middle of one, and what observers get (the Scalable Server text; docs/async-decisions.md S9, S10,
S17, S20)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from parlour.protocols.async_ws import service
from parlour.protocols.async_ws.game.model import AsyncGame, decode_game
from parlour.protocols.async_ws.game.outbound import Outbound
from parlour.protocols.async_ws.ingame.phase_requests import MAX_WINDOW_MS, PHASE_HANDLERS
from tests.protocols.async_ws.harness import Harness


@pytest.fixture(autouse=True)
def phase_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead merges PHASE_HANDLERS into the service's table; until then the tests do."""
    for kind, handler in PHASE_HANDLERS.items():
        monkeypatch.setitem(service.HANDLERS, kind, handler)


def three(h: Harness, **config: Any) -> tuple[int, int, int, int]:
    """A running game of ann (1), bob (2) and cid (3); ann's turn 1."""
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid, **config)
    h.clear()
    return game_id, ann, bob, cid


def with_robot(h: Harness, **config: Any) -> tuple[int, int, int]:
    """ann (1) invites bob (2) and a robot (3); ann's turn 1."""
    ann, _ = h.player("ann")
    bob, bob_id = h.player("bob")
    configuration = {"game_type": "test", "max_players": 3, **config}
    h.send(ann, type="EngageGameWithFriendsRequest", friend_ids=[bob_id, 0], configuration=configuration)
    game_id: int = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(bob, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    h.clear()
    return game_id, ann, bob


def observer(h: Harness, game_id: int, name: str = "eve") -> int:
    conn, account_id = h.player(name)
    h.service.hub.observers.add(game_id, account_id)
    return conn


def live(h: Harness, game_id: int) -> AsyncGame:
    return h.service.hub.games[game_id]


def simultaneous(h: Harness, conn: int, game_id: int, players: list[int], **fields: Any) -> None:
    fields.setdefault("next_state", "toto")
    h.send(
        conn,
        type="CommitActionRequest",
        game_id=game_id,
        next_simultaneous=True,
        simultaneous_players=players,
        **fields,
    )


def window(h: Harness, conn: int, game_id: int, players: list[int], **fields: Any) -> None:
    fields.setdefault("next_state", "A")
    fields.setdefault("next_players", [2, 3, 1])
    h.send(
        conn,
        type="CommitActionRequest",
        game_id=game_id,
        interruption_window_duration=fields.pop("ms", 3000),
        interruption_players=players,
        **fields,
    )


def data(*pairs: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"player_id": local, "data": text} for local, text in pairs]


def clocks(h: Harness, conn: int, game_id: int) -> list[dict[str, Any]]:
    h.send(conn, type="GetClocksRequest", game_id=game_id)
    found: list[dict[str, Any]] = h.expect(conn, "ClocksStatusRequest")["clocks"]
    return found


# -- Simultaneous turns -----------------------------------------------------------------------------


def test_the_simultaneous_turn_diagram_with_a_robot_seat_played_by_a() -> None:
    h = Harness()
    game_id, a, b = with_robot(h)
    simultaneous(h, a, game_id, [1, 2, 3], turn_index=1)
    assert [m["type"] for m in h.inbox[a]] == [
        "ActionCommitedRequest",
        "UserDataUpdateRequiredRequest",
        "PlayerTimeoutRequest",
    ]
    h.expect(a, "ActionCommitedRequest", turn_index=2)
    h.expect(a, "UserDataUpdateRequiredRequest", state="toto", turn_index=2)
    h.expect(b, "UserDataUpdateRequiredRequest", state="toto", turn_index=2)
    h.expect(
        a,
        "PlayerTimeoutRequest",
        offender_id=3,
        status="ROBOT",
        turn_index=2,
        expected="UpdateUserDataRequest",
    )
    h.none(b, "PlayerTimeoutRequest")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a", request_id="u1")
    h.expect(a, "UserDataUpdatedRequest", turn_index=2, request_id="u1")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b", turn_index=2)
    h.expect(b, "UserDataUpdatedRequest")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="c?", player_id=3)
    h.error(b, "NOT_YOUR_TURN")  # only the player asked plays the robot
    h.none(a, "ActionRequiredRequest")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="c", player_id=3)
    h.expect(a, "UserDataUpdatedRequest")
    required = h.expect(a, "ActionRequiredRequest", player_id=1, turn_index=2)
    assert required["user_data"] == data((1, "a"), (2, "b"), (3, "c"))
    h.none(b, "ActionRequiredRequest")
    # The merge is administrative: no `next_players`, and the next array stays [1, 2, 3].
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="abcfoobar", next_simultaneous=False)
    h.expect(a, "ActionCommitedRequest", turn_index=3)
    again = h.expect(a, "ActionRequiredRequest", turn_index=3, state="abcfoobar")
    assert "user_data" not in again
    assert live(h, game_id).next_players == [1, 2, 3] and live(h, game_id).phase == "TURN"
    assert sorted(index for gid, index in h.turns if gid == game_id) == [1, 2]


def test_a_robot_merger_is_played_through_player_timeout_with_the_user_data() -> None:
    h = Harness()
    game_id, a, b = with_robot(h)
    simultaneous(h, a, game_id, [1, 2], next_players=[3, 1, 2])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    notice = h.expect(a, "PlayerTimeoutRequest", offender_id=3, status="ROBOT", turn_index=2)
    assert notice["user_data"] == data((1, "a"), (2, "b")) and "expected" not in notice
    h.none(a, "ActionRequiredRequest")
    h.send(b, type="CommitActionRequest", game_id=game_id, player_id=3, next_state="m")
    h.error(b, "NOT_YOUR_TURN")
    h.send(a, type="CommitActionRequest", game_id=game_id, player_id=3, next_state="m", next_players=[2, 1])
    h.expect(a, "ActionCommitedRequest", turn_index=3)
    h.expect(b, "ActionRequiredRequest", turn_index=3, state="m")


def test_a_merger_who_forfeits_is_replaced_by_a_live_player_with_the_user_data() -> None:
    """The text's second merge diagram: A forfeits, B gets PlayerTimeoutRequest(user_data)."""
    h = Harness()
    game_id, a, b, _ = three(h)
    simultaneous(h, a, game_id, [1, 2])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.expect(a, "ActionRequiredRequest", user_data=data((1, "a"), (2, "b")))
    h.send(a, type="GameForfeitRequest", game_id=game_id)
    h.expect(b, "PlayerTimeoutRequest", offender_id=1, status="FORFEITED", user_data=data((1, "a"), (2, "b")))
    h.send(b, type="CommitActionRequest", game_id=game_id, player_id=1, next_state="abcfoobar")
    h.expect(b, "ActionCommitedRequest", turn_index=3)


def test_an_absent_merger_is_replaced_by_a_present_player_of_the_turn() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    simultaneous(h, a, game_id, [2, 3], next_players=[1, 2, 3])
    h.drop(a)
    h.send(c, type="UpdateUserDataRequest", game_id=game_id, user_data="c")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.expect(b, "ActionRequiredRequest", player_id=2, user_data=data((2, "b"), (3, "c")))
    h.send(b, type="CommitActionRequest", game_id=game_id, next_state="bc")
    h.expect(b, "ActionCommitedRequest", turn_index=3)
    assert live(h, game_id).turn == 1  # the next array is unchanged: A's turn when she returns
    a2 = h.back("ann")
    h.expect(a2, "ActionRequiredRequest", turn_index=3, state="bc")


def test_broadcast_user_data_reaches_the_other_players_and_observers() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    eve = observer(h, game_id)
    simultaneous(h, a, game_id, [1, 2])
    h.clear()
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a", broadcast=True)
    h.expect(a, "UserDataUpdatedRequest")
    h.none(a, "GameUserDataUpdatedRequest")
    for conn in (b, c, eve):
        h.expect(conn, "GameUserDataUpdatedRequest", player=1, user_data="a")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.none(a, "GameUserDataUpdatedRequest")  # no broadcast asked


def test_pause_in_a_simultaneous_turn_and_each_clock_stops_with_its_data() -> None:
    h = Harness()
    game_id, a, b, c = three(h, clock_seconds=60)
    simultaneous(h, a, game_id, [1, 2], next_players=[2, 1], pause_time=3)
    h.expect(a, "ActionCommitedRequest", pause_time=3)
    h.expect(a, "UserDataUpdateRequiredRequest", pause_time=3)
    h.expect(b, "UserDataUpdateRequiredRequest", pause_time=3)
    for conn in (a, b, c):
        h.expect(conn, "ClockPausedRequest", pause_time=3, player_ids=[1, 2])
        h.none(conn, "ClockPausedRequest")  # only one, to everyone
    h.advance(3)
    for conn in (a, b, c):
        resumed = h.expect(conn, "ClockResumedRequest")["clocks"]
        h.none(conn, "ClockResumedRequest")
        assert resumed[0] == {"player_id": 1, "remaining_seconds": 60.0, "armed": True}
        assert resumed[1] == {"player_id": 2, "remaining_seconds": 60.0, "armed": True}
        assert resumed[2] == {"player_id": 3, "remaining_seconds": 60.0}
    h.now += 2
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.now += 5
    now = clocks(h, c, game_id)
    assert now[1] == {"player_id": 2, "remaining_seconds": 58.0}  # B played: its clock stopped
    assert now[0]["remaining_seconds"] == 53.0 and now[0]["armed"] is True  # A's still runs


def test_data_given_during_the_pause_leaves_the_others_paused_and_a_quick_merge_cancels_the_resume() -> None:
    h = Harness()
    game_id, a, b, _ = three(h, clock_seconds=60)
    simultaneous(h, a, game_id, [1, 2], pause_time=5)
    h.advance(1)
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    assert clocks(h, a, game_id)[0] == {
        "player_id": 1,
        "remaining_seconds": 60.0,
        "paused": True,
        "armed": True,
    }
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.expect(a, "ActionRequiredRequest", user_data=data((1, "a"), (2, "b")))
    h.clear()
    h.advance(10)
    h.none(a, "ClockResumedRequest")
    assert clocks(h, b, game_id)[1]["remaining_seconds"] == 60.0


def test_an_absent_player_is_played_by_another_and_may_still_answer_first() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    h.drop(c)
    simultaneous(h, a, game_id, [1, 3])
    h.expect(a, "PlayerTimeoutRequest", offender_id=3, status="ABSENT", expected="UpdateUserDataRequest")
    c2 = h.back("cid")
    h.expect(c2, "UserDataUpdateRequiredRequest", turn_index=2, state="toto")
    h.send(c2, type="UpdateUserDataRequest", game_id=game_id, user_data="mine")
    h.expect(c2, "UserDataUpdatedRequest")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="robot", player_id=3)
    h.error(a, "NOT_YOUR_TURN")  # someone already answered for seat 3
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.expect(a, "ActionRequiredRequest", user_data=data((1, "a"), (3, "mine")))
    h.none(b, "UserDataUpdateRequiredRequest")


def test_a_player_asked_to_play_a_seat_who_leaves_hands_it_to_a_present_one() -> None:
    h = Harness()
    game_id, a, b = with_robot(h)
    simultaneous(h, a, game_id, [2, 3])
    h.expect(a, "PlayerTimeoutRequest", offender_id=3, expected="UpdateUserDataRequest")
    h.drop(a)
    h.expect(b, "PlayerTimeoutRequest", offender_id=3, status="ROBOT", expected="UpdateUserDataRequest")
    a2 = h.back("ann")
    h.none(a2, "PlayerTimeoutRequest")  # B has it now, and B is here
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="c", player_id=3)
    h.expect(b, "UserDataUpdatedRequest")


def test_game_over_may_replace_the_merge() -> None:
    h = Harness()
    game_id, a, b, _ = three(h)
    simultaneous(h, a, game_id, [1, 2])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.expect(a, "ActionRequiredRequest")
    scores = {"1": [3, 1], "2": [2, 2], "3": [1, 3]}
    h.send(a, type="GameOverRequest", game_id=game_id, finalScores=scores, final_state="end")
    h.expect(b, "GameOutcomeRequest")
    game = live(h, game_id)
    assert game.status == "OUTCOME" and game.phase == "TURN" and game.user_data is None
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="late")
    h.error(b, "UNKNOWN_GAME")  # nothing is processed after the game is over


def test_a_merge_may_begin_another_simultaneous_turn() -> None:
    h = Harness()
    game_id, a, b, _ = three(h)
    simultaneous(h, a, game_id, [1, 2])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    simultaneous(h, a, game_id, [2], next_state="round 2", turn_index=2)
    h.expect(a, "ActionCommitedRequest", turn_index=3)
    h.expect(b, "UserDataUpdateRequiredRequest", turn_index=3, state="round 2")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b2", turn_index=3)
    h.expect(a, "ActionRequiredRequest", turn_index=3, user_data=data((2, "b2")))


# -- Errors -----------------------------------------------------------------------------------------


def test_simultaneous_and_interruption_commit_refusals() -> None:
    h = Harness()
    game_id, a, _, _ = three(h)
    for players in ([], [4], [1, 1]):
        simultaneous(h, a, game_id, players)
        h.error(a, "BAD_REQUEST")
    h.send(
        a,
        type="CommitActionRequest",
        game_id=game_id,
        next_state="x",
        next_players=[2],
        simultaneous_players=[2],
    )
    h.error(a, "BAD_REQUEST")
    simultaneous(h, a, game_id, [2], interruption_window_duration=1000, interruption_players=[2])
    h.error(a, "BAD_REQUEST")  # the two do not combine (refused when decoded)
    for players in ([], [4], [2, 2], [1, 2]):
        window(h, a, game_id, players)
        h.error(a, "BAD_REQUEST")
    window(h, a, game_id, [2], ms=MAX_WINDOW_MS + 1)
    h.error(a, "BAD_REQUEST")
    h.send(
        a,
        type="CommitActionRequest",
        game_id=game_id,
        next_state="x",
        next_players=[2],
        interruption_players=[2],
    )
    h.error(a, "BAD_REQUEST")
    window(h, a, game_id, [2], next_players=[])
    h.error(a, "BAD_REQUEST")
    simultaneous(h, a, game_id, [2], next_players=[7])
    h.error(a, "UNKNOWN_PLAYER")
    assert live(h, game_id).turn_index == 1 and not h.turns  # nothing was committed


def test_user_data_refusals() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    dan, _ = h.player("dan")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.error(a, "NOT_YOUR_TURN")  # no simultaneous turn yet
    simultaneous(h, a, game_id, [1, 2])
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.error(a, "NOT_YOUR_TURN")  # the game waits for user data
    h.send(c, type="UpdateUserDataRequest", game_id=game_id, user_data="c")
    h.error(c, "NOT_YOUR_TURN")  # not part of it
    h.send(c, type="UpdateUserDataRequest", game_id=game_id, user_data="for b", player_id=2)
    h.error(c, "NOT_YOUR_TURN")  # not asked to play seat 2
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a", turn_index=1)
    h.error(a, "INDEX_CONFLICT")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a", player_id=8)
    h.error(a, "UNKNOWN_PLAYER")
    h.send(dan, type="UpdateUserDataRequest", game_id=game_id, user_data="d")
    h.error(dan, "UNKNOWN_PLAYER")
    h.send(a, type="UpdateUserDataRequest", game_id=999, user_data="a")
    h.error(a, "UNKNOWN_GAME")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="x" * (300 * 1024))
    h.error(a, "TOO_LARGE")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.expect(a, "UserDataUpdatedRequest")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="again")
    assert "already" in h.error(a, "NOT_YOUR_TURN")["message"]
    h.send(b, type="GameForfeitRequest", game_id=game_id)
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.error(b, "YOU_FORFEITED")
    # B's seat went to a robot played by A, the last committer.
    h.expect(a, "PlayerTimeoutRequest", offender_id=2, status="FORFEITED", expected="UpdateUserDataRequest")


def test_server_rules_refuse_simultaneous_turns_and_interruptions() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, game_type="fish", rules="fish")
    action = h.expect(ann, "ActionRequiredRequest")["legal_actions"][0]
    h.send(
        ann,
        type="CommitActionRequest",
        game_id=game_id,
        action=action,
        next_simultaneous=True,
        simultaneous_players=[1, 2],
    )
    h.error(ann, "BAD_REQUEST")
    h.send(
        ann,
        type="CommitActionRequest",
        game_id=game_id,
        action=action,
        interruption_window_duration=1000,
        interruption_players=[2],
    )
    h.error(ann, "BAD_REQUEST")
    h.send(bob, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.error(bob, "BAD_REQUEST")
    h.send(bob, type="InterruptActionRequest", game_id=game_id, turn_index=1, turn=1)
    h.error(bob, "BAD_REQUEST")
    h.send(ann, type="CommitActionRequest", game_id=game_id, action=action)
    h.expect(ann, "ActionCommitedRequest", turn_index=2)


# -- Timers in a simultaneous turn and in its merge -------------------------------------------------


def test_idle_timer_in_the_simultaneous_turn_and_in_the_merge() -> None:
    h = Harness()
    game_id, a, b, _ = three(h, idle_time=40)
    simultaneous(h, a, game_id, [1, 2], next_players=[1, 2, 3])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.clear()
    h.advance(20)
    for conn in (a, b):
        h.expect(conn, "PlayerIdleProgressRequest", progress=50, player_ids=[2])
    h.advance(20)
    h.expect(a, "PlayerIdleProgressRequest", progress=75, player_ids=[2])
    h.expect(a, "PlayerIdleProgressRequest", progress=100, player_ids=[2])
    h.expect(a, "PlayerTimeoutRequest", offender_id=2, status="IDLE", expected="UpdateUserDataRequest")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="robot b", player_id=2)
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="late b")
    h.error(b, "NOT_YOUR_TURN")
    assert live(h, game_id).seats[1].state == "ACTIVE"  # an idle player stays in the game
    h.expect(a, "ActionRequiredRequest", user_data=data((1, "a"), (2, "robot b")))
    h.clear()
    h.advance(40)  # the merge has its own idle timer
    h.expect(b, "PlayerIdleProgressRequest", progress=100, player_ids=[1])
    h.expect(
        b, "PlayerTimeoutRequest", offender_id=1, status="IDLE", user_data=data((1, "a"), (2, "robot b"))
    )
    h.send(b, type="CommitActionRequest", game_id=game_id, player_id=1, next_state="merged")
    h.expect(b, "ActionCommitedRequest", turn_index=3)


def test_clock_exhaustion_in_the_simultaneous_turn_and_in_the_merge() -> None:
    h = Harness()
    game_id, a, b, c = three(h, clock_seconds=30)
    simultaneous(h, a, game_id, [1, 2])
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.clear()
    h.advance(29)
    h.none(a, "PlayerReplacedRequest")
    h.advance(1)
    for conn in (a, b, c):
        h.expect(conn, "PlayerReplacedRequest", player_id=2, reason="TIMED_OUT")
    h.expect(a, "PlayerTimeoutRequest", offender_id=2, status="TIMED_OUT", expected="UpdateUserDataRequest")
    h.send(b, type="UpdateUserDataRequest", game_id=game_id, user_data="b")
    h.error(b, "YOU_RAN_OUT_OF_TIME")
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="robot b", player_id=2)
    h.expect(a, "ActionRequiredRequest", player_id=1, user_data=data((1, "a"), (2, "robot b")))
    assert clocks(h, c, game_id)[0]["remaining_seconds"] == 30.0  # A gave its data at once
    h.clear()
    h.advance(30)
    h.expect(c, "PlayerReplacedRequest", player_id=1, reason="TIMED_OUT")
    h.expect(
        c, "PlayerTimeoutRequest", offender_id=1, status="TIMED_OUT", user_data=data((1, "a"), (2, "robot b"))
    )
    h.send(c, type="CommitActionRequest", game_id=game_id, player_id=1, next_state="m")
    h.expect(c, "ActionCommitedRequest", turn_index=3)


def test_every_clock_running_out_aborts_the_simultaneous_turn() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob, clock_seconds=30)
    simultaneous(h, ann, game_id, [1, 2])
    h.advance(30)
    h.expect(ann, "GameAbortedRequest")
    game = live(h, game_id)
    assert game.status == "ABORTING" and game.phase == "TURN" and not game.simultaneous


# -- Interruptions ----------------------------------------------------------------------------------


def test_the_interruption_diagram() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    window(h, a, game_id, [2, 3], turn_index=1, next_players=[2, 3, 1])
    h.expect(a, "ActionCommitedRequest", turn_index=2)
    for conn in (a, b, c):
        h.expect(
            conn,
            "GameStateUpdatedRequest",
            state="A",
            turn_index=2,
            player_id=1,
            interruption_window_duration=3000,
        )
    h.none(b, "ActionRequiredRequest")
    h.send(
        b,
        type="InterruptActionRequest",
        game_id=game_id,
        turn_index=2,
        turn=1,
        interruption_data="Not this time",
    )
    assert h.inbox[b][0]["type"] == "ActionInterruptedRequest"  # the interrupter first
    for conn in (b, a, c):
        h.expect(
            conn,
            "ActionInterruptedRequest",
            turn_index=2,
            turn=1,
            player_id=2,
            interruption_data="Not this time",
        )
    h.send(
        c,
        type="InterruptActionRequest",
        game_id=game_id,
        turn_index=2,
        turn=1,
        interruption_data="I protest too",
    )
    for conn in (c, a, b):
        h.expect(conn, "ActionInterruptedRequest", player_id=3, interruption_data="I protest too")
    # Both interrupters have answered: the window closes without waiting for its end.
    for conn in (a, b, c):
        h.expect(conn, "InterruptionOverRequest", turn_index=2)
    required = h.expect(b, "ActionRequiredRequest", player_id=2, turn_index=2, state="A")
    assert required["interruption_data"] == data((2, "Not this time"), (3, "I protest too"))
    h.none(a, "ActionRequiredRequest")
    h.send(b, type="CommitActionRequest", game_id=game_id, turn_index=2, next_state="resolved")
    h.expect(b, "ActionCommitedRequest", turn_index=3)
    h.expect(b, "ActionRequiredRequest", turn_index=3, state="resolved")  # next_players unchanged: [2, 3, 1]


def test_the_window_closes_when_its_time_is_out() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    window(h, a, game_id, [2, 3])
    h.send(c, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, interruption_data="no")
    h.advance(2)
    h.none(a, "InterruptionOverRequest")
    h.advance(1)
    for conn in (a, b, c):
        h.expect(conn, "InterruptionOverRequest", turn_index=2)
    # B, first of next_players, merges the one interruption.
    h.expect(b, "ActionRequiredRequest", interruption_data=data((3, "no")))


def test_no_interruption_the_turn_continues_with_the_next_player() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    window(h, a, game_id, [2, 3], pause_time=2)
    h.expect(a, "ActionCommitedRequest", turn_index=2, pause_time=2)
    h.advance(3)
    for conn in (a, b, c):
        h.expect(conn, "InterruptionOverRequest", turn_index=2)
    required = h.expect(b, "ActionRequiredRequest", player_id=2, turn_index=2, pause_time=2)
    assert "interruption_data" not in required
    h.expect(a, "ClockPausedRequest", pause_time=2, player_ids=[2])  # the commit's pause, after the window


def test_declines_close_the_window_early() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    window(h, a, game_id, [2, 3])
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, no_more_interruption=True)
    h.none(a, "ActionInterruptedRequest")
    h.none(a, "InterruptionOverRequest")  # C may still interrupt
    h.send(
        b,
        type="InterruptActionRequest",
        game_id=game_id,
        turn_index=2,
        turn=1,
        interruption_data="changed my mind",
    )
    h.expect(b, "InterruptActionErrorRequest", reason="ALREADY_INTERRUPTED")
    h.send(c, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, no_more_interruption=True)
    for conn in (a, b, c):
        h.expect(conn, "InterruptionOverRequest", turn_index=2)
    h.expect(b, "ActionRequiredRequest", turn_index=2)


def test_interruption_refusals() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=1, turn=1, request_id="i0")
    h.expect(b, "InterruptActionErrorRequest", reason="WINDOW_CLOSED", turn_index=1, request_id="i0")
    window(h, a, game_id, [2])
    h.send(a, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.error(a, "NOT_YOUR_TURN")  # the window is open
    h.send(c, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1)
    h.expect(c, "InterruptActionErrorRequest", reason="NOT_ALLOWED")  # not an interrupter
    h.send(a, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1)
    h.expect(a, "InterruptActionErrorRequest", reason="NOT_ALLOWED")
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=3)
    h.expect(b, "InterruptActionErrorRequest", reason="NOT_ALLOWED")  # not the interrupted seat
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=1, turn=1)
    h.expect(b, "InterruptActionErrorRequest", reason="WINDOW_CLOSED")  # an older turn
    dan, _ = h.player("dan")
    h.send(dan, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1)
    h.error(dan, "UNKNOWN_PLAYER")
    h.send(b, type="InterruptActionRequest", game_id=999, turn_index=2, turn=1)
    h.error(b, "UNKNOWN_GAME")
    h.send(
        b,
        type="InterruptActionRequest",
        game_id=game_id,
        turn_index=2,
        turn=1,
        interruption_data="x" * (300 * 1024),
    )
    h.error(b, "TOO_LARGE")
    # Late: the window is due but not yet closed by the ticker; it closes, then the refusal.
    h.now += 3
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, interruption_data="late")
    assert [m["type"] for m in h.inbox[b]][-3:] == [
        "InterruptionOverRequest",
        "ActionRequiredRequest",
        "InterruptActionErrorRequest",
    ]
    h.expect(b, "InterruptActionErrorRequest", reason="WINDOW_CLOSED")
    h.none(a, "ActionInterruptedRequest")


def test_robot_and_inactive_interrupters_cannot_answer_so_the_window_closes_at_once() -> None:
    h = Harness()
    game_id, a, b = with_robot(h)
    window(h, a, game_id, [3], next_players=[2, 3, 1])
    h.expect(a, "GameStateUpdatedRequest", interruption_window_duration=3000)
    h.expect(a, "InterruptionOverRequest", turn_index=2)
    h.expect(b, "ActionRequiredRequest", turn_index=2)


def test_window_time_is_the_committers_and_the_merge_is_the_mergers() -> None:
    h = Harness()
    game_id, a, b, c = three(h, clock_seconds=60)
    window(h, a, game_id, [2, 3])
    h.now += 1
    first = clocks(h, c, game_id)
    assert first[0] == {"player_id": 1, "remaining_seconds": 59.0, "armed": True}
    assert first[1] == {"player_id": 2, "remaining_seconds": 60.0}
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, interruption_data="b")
    h.advance(2)
    h.expect(b, "ActionRequiredRequest", interruption_data=data((2, "b")))
    h.now += 5
    after = clocks(h, c, game_id)
    assert after[0] == {"player_id": 1, "remaining_seconds": 57.0}
    assert after[1] == {"player_id": 2, "remaining_seconds": 55.0, "armed": True}


def test_the_committers_clock_may_run_out_in_the_window() -> None:
    h = Harness()
    game_id, a, b, c = three(h, clock_seconds=2)
    window(h, a, game_id, [2, 3], ms=10_000)
    h.advance(2)
    for conn in (a, b, c):
        h.expect(conn, "PlayerReplacedRequest", player_id=1, reason="TIMED_OUT")
    h.none(b, "InterruptionOverRequest")  # the window goes on
    h.send(c, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, interruption_data="c")
    h.advance(8)
    h.expect(b, "InterruptionOverRequest")
    h.expect(b, "ActionRequiredRequest", interruption_data=data((3, "c")))


# -- Multicast --------------------------------------------------------------------------------------


def test_multicast_to_all_present_players() -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    eve = observer(h, game_id)
    stored = len(h.records)
    h.send(a, type="MulticastDataRequest", game_id=game_id, data="A")
    assert h.inbox[a][0] == {"type": "ClientDataRequest", "game_id": game_id, "sender": 1, "data": "A"}
    for conn in (a, b, c):
        h.expect(conn, "ClientDataRequest", sender=1, data="A")
    h.none(eve, "ClientDataRequest")
    assert len(h.records) == stored  # transient: nothing is stored


def test_multicast_to_recipients_and_a_notification_for_the_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness()
    game_id, a, b, c = three(h)
    notified: list[tuple[Outbound, int, str]] = []
    monkeypatch.setattr(
        Outbound, "notify_data", lambda out, player_id, text, now: notified.append((out, player_id, text))
    )
    h.send(a, type="MulticastDataRequest", game_id=game_id, data="A", recipient_ids=[2])
    h.expect(a, "ClientDataRequest", data="A")
    h.expect(b, "ClientDataRequest", data="A", sender=1)
    h.none(c, "ClientDataRequest")
    h.drop(c)
    h.send(b, type="MulticastDataRequest", game_id=game_id, data="B", recipients_ids=[3], notification="look")
    h.expect(b, "ClientDataRequest", data="B", sender=2)
    running = h.service.hub.games.game(game_id)
    assert running is not None
    assert notified == [(running.outbound, live(h, game_id).seats[2].player_id, "look")]
    h.send(b, type="MulticastDataRequest", game_id=game_id, data="B2")  # no notification asked
    assert len(notified) == 1


def test_multicast_refusals() -> None:
    h = Harness()
    game_id, a, b, _ = three(h)
    dan, _ = h.player("dan")
    h.send(dan, type="MulticastDataRequest", game_id=game_id, data="D")
    h.error(dan, "UNKNOWN_PLAYER")
    h.send(a, type="MulticastDataRequest", game_id=999, data="A")
    h.error(a, "UNKNOWN_GAME")
    h.send(a, type="MulticastDataRequest", game_id=game_id, data="A", recipient_ids=[5])
    h.error(a, "UNKNOWN_PLAYER")
    h.send(a, type="MulticastDataRequest", game_id=game_id, data="x" * (300 * 1024))
    h.error(a, "TOO_LARGE")
    h.send(b, type="GameForfeitRequest", game_id=game_id)
    h.send(b, type="MulticastDataRequest", game_id=game_id, data="B")
    h.error(b, "YOU_FORFEITED")


# -- Restarts ---------------------------------------------------------------------------------------


def test_a_restart_in_the_middle_of_a_simultaneous_turn() -> None:
    h = Harness()
    game_id, a, _, _ = three(h, clock_seconds=600)
    simultaneous(h, a, game_id, [1, 2], next_players=[1, 2, 3])
    h.now += 10
    h.send(a, type="UpdateUserDataRequest", game_id=game_id, user_data="a")
    h.now += 5
    restarted = h.restart(downtime=3600)
    stored = decode_game(h.games[game_id].doc)
    assert stored.phase == "SIMULTANEOUS" and [e.user_data for e in stored.simultaneous] == ["a", None]
    b2 = restarted.back("bob")
    restarted.expect(b2, "UserDataUpdateRequiredRequest", turn_index=2, state="toto")
    bob_clock = clocks(restarted, b2, game_id)[1]
    assert bob_clock["armed"] is True and bob_clock["remaining_seconds"] == pytest.approx(585)
    restarted.send(b2, type="UpdateUserDataRequest", game_id=game_id, user_data="b", turn_index=2)
    restarted.expect(b2, "UserDataUpdatedRequest")
    # A, first of next_players, is not back: B, present and of the turn, merges.
    restarted.expect(b2, "ActionRequiredRequest", player_id=2, user_data=data((1, "a"), (2, "b")))


def test_a_restart_in_the_middle_of_an_interruption_window() -> None:
    h = Harness()
    game_id, a, _, _ = three(h)
    window(h, a, game_id, [2, 3])
    h.advance(1)
    restarted = h.restart(downtime=600)  # the window does not close while the server is down
    b2, c2 = restarted.back("bob"), restarted.back("cid")
    restarted.advance(1)
    restarted.none(b2, "InterruptionOverRequest")
    restarted.send(
        b2, type="InterruptActionRequest", game_id=game_id, turn_index=2, turn=1, interruption_data="b"
    )
    restarted.expect(c2, "ActionInterruptedRequest", player_id=2)
    restarted.advance(1)
    restarted.expect(c2, "InterruptionOverRequest", turn_index=2)
    restarted.expect(b2, "ActionRequiredRequest", interruption_data=data((2, "b")))


def test_shift_moves_every_deadline() -> None:
    h = Harness()
    game_id, a, _, _ = three(h)
    window(h, a, game_id, [2, 3])
    game = live(h, game_id)
    started = game.turn_started
    game.shift(60)
    assert game.turn_started == started + 60
    game.status = "OUTCOME"
    game.shift(60)
    assert game.turn_started == started + 60  # only running games have deadlines to move


def test_older_stored_games_decode_with_the_turn_phase() -> None:
    h = Harness()
    game_id, _, _, _ = three(h)
    fields = msgspec.msgpack.decode(h.games[game_id].doc)
    for name in ("phase", "simultaneous", "window", "interrupters", "answered", "interruptions", "user_data"):
        fields.pop(name)
    old = decode_game(msgspec.msgpack.encode(fields))
    assert old.phase == "TURN" and old.simultaneous == [] and old.user_data is None


# -- Observers --------------------------------------------------------------------------------------


def test_observers_get_the_phases_events_under_client_rules() -> None:
    h = Harness()
    game_id, a, b = with_robot(h)
    eve = observer(h, game_id)
    simultaneous(h, a, game_id, [1, 2, 3])
    h.expect(eve, "UserDataUpdateRequiredRequest", state="toto", turn_index=2)
    h.expect(eve, "PlayerTimeoutRequest", offender_id=3, expected="UpdateUserDataRequest")
    h.none(eve, "ActionCommitedRequest")
    for conn, seat in ((a, None), (b, None), (a, 3)):
        h.send(conn, type="UpdateUserDataRequest", game_id=game_id, user_data="d", player_id=seat)
    h.expect(eve, "ActionRequiredRequest", player_id=1, user_data=data((1, "d"), (2, "d"), (3, "d")))
    window(h, a, game_id, [2], next_players=[2, 1])
    h.expect(eve, "GameStateUpdatedRequest", interruption_window_duration=3000)
    h.send(b, type="InterruptActionRequest", game_id=game_id, turn_index=3, turn=1, interruption_data="no")
    h.expect(eve, "ActionInterruptedRequest", player_id=2)
    h.expect(eve, "InterruptionOverRequest", turn_index=3)
    h.expect(eve, "ActionRequiredRequest", player_id=2, interruption_data=data((2, "no")))


def test_observers_get_the_spectator_view_under_server_rules() -> None:
    h = Harness()
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    cid, _ = h.player("cid")
    game_id = h.open_game(ann, bob, cid, game_type="tsuro", rules="tsuro", min_players=3)
    eve = observer(h, game_id)
    required = h.expect(ann, "ActionRequiredRequest", player_id=1)
    h.send(ann, type="CommitActionRequest", game_id=game_id, action=required["legal_actions"][0])
    h.expect(ann, "ActionCommitedRequest")
    seat_view = msgspec.json.decode(h.expect(bob, "ActionRequiredRequest", player_id=2)["state"])
    assert seat_view["you"]["hand"]
    watched = h.expect(eve, "ActionRequiredRequest", player_id=2)
    assert "you" not in msgspec.json.decode(watched["state"]) and "legal_actions" not in watched
    update = h.expect(eve, "GameStateUpdatedRequest", player_id=1)
    assert update["state"] == live(h, game_id).state and "you" not in msgspec.json.decode(update["state"])
    assert "you" in msgspec.json.decode(h.expect(bob, "GameStateUpdatedRequest", player_id=1)["state"])
