"""Quick play through the /async service (quickplay.py): queues joined and left by messages, the
games they make, robots after the wait, status pushes on the ticker, sign-out and restart."""

from __future__ import annotations

from parlour.protocols.async_ws.lobby.quickplay import STATUS_EVERY
from parlour.protocols.async_ws.state.hub import AsyncLimits
from parlour.storage import RatingRow
from tests.protocols.async_ws.harness import Harness


def join(h: Harness, conn: int, game_type: str = "fish", seats: int = 2, **fields: object) -> None:
    h.send(conn, type="QuickPlayJoinRequest", game_type=game_type, seats=seats, **fields)


def rate(h: Harness, account_id: int, game_type: str, mu: float) -> None:
    h.service.hub.accounts.rate(
        RatingRow(
            account_id=account_id,
            game_type=game_type,
            mu=mu,
            sigma=3.0,
            games=10,
            updated=0.0,
            ordinal=mu - 9.0,
        )
    )


def test_two_players_queue_and_land_in_the_same_started_game() -> None:
    h = Harness()
    (ann, ann_id), (bob, bob_id) = h.player("ann"), h.player("bob")
    join(h, ann, request_id="q1")
    status = h.expect(ann, "QuickPlayStatusRequest", request_id="q1")
    assert status["queues"] == [
        {
            "game_type": "fish",
            "seats": 2,
            "waited_seconds": 0.0,
            "rating": 25.0,
            "window_low": 22.0,
            "window_high": 28.0,
            "shown_low": 1412,
            "shown_high": 1588,
        }
    ]
    h.advance(2.0)
    join(h, bob)
    created = h.expect(bob, "GameCreatedRequest")
    matched = h.expect(bob, "QuickPlayMatchedRequest")
    assert matched["game_id"] == created["game_id"] == h.expect(ann, "QuickPlayMatchedRequest")["game_id"]
    assert h.expect(ann, "GameCreatedRequest")["game_id"] == matched["game_id"]
    report = created["status_report"]
    assert report["status"] == "RUNNING" and report["configuration"]["rules"] == "fish"
    assert [seat.get("player_id") for seat in report["players"]] == [ann_id, bob_id]  # longest wait first
    row = h.games[matched["game_id"]]
    assert row.status == "RUNNING"  # stored before shown, as any started game
    assert len(h.service.hub.matchmaker) == 0


def test_bad_requests_get_the_protocol_errors() -> None:
    h = Harness(AsyncLimits(max_games=1))
    (ann, _), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann, game_type="chess")
    assert "unknown game type" in h.error(ann, "BAD_REQUEST")["message"]
    join(h, ann, game_type="tsuro", seats=9)  # past the schema's 8
    h.error(ann, "BAD_REQUEST")
    join(h, ann, game_type="fish", seats=5)  # fish is played by 2 to 4
    assert "2 to 4" in h.error(ann, "BAD_REQUEST")["message"]
    h.send(ann, type="QuickPlayLeaveRequest", request_id="l1")
    assert h.error(ann, "NOT_QUEUED")["request_id"] == "l1"
    join(h, ann, request_id="j1")
    h.expect(ann, "QuickPlayStatusRequest", request_id="j1")
    join(h, ann, request_id="j2")
    error = h.error(ann, "ALREADY_QUEUED")
    assert (error["request_id"], error["request_type"]) == ("j2", "QuickPlayJoinRequest")
    h.send(ann, type="QuickPlayLeaveRequest", game_type="apologies")
    h.error(ann, "NOT_QUEUED")
    # At the games limit one may not queue (a game found could not be played).
    join(h, bob, game_type="apologies", robots_after=0)
    h.expect(bob, "QuickPlayMatchedRequest")
    join(h, bob, game_type="apologies")
    h.error(bob, "TOO_MANY_OFFERS")
    # Not signed in: the protocol's answer to every request.
    anonymous = h.connect()
    join(h, anonymous)
    h.error(anonymous, "UNAUTHENTICATED")


def test_leaving_a_queue_and_the_status_pushes_on_the_ticker() -> None:
    h = Harness()
    (ann, _), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann)
    join(h, ann, game_type="apologies")
    h.clear()
    h.advance(STATUS_EVERY)
    pushed = h.expect(ann, "QuickPlayStatusRequest")
    assert "request_id" not in pushed
    fish, apologies = pushed["queues"]
    assert (fish["game_type"], apologies["game_type"]) == ("fish", "apologies")
    assert fish["waited_seconds"] == STATUS_EVERY
    assert fish["window_high"] - fish["window_low"] > 6.0  # wider than when it joined
    h.send(ann, type="QuickPlayLeaveRequest", game_type="fish", request_id="l")
    left = h.expect(ann, "QuickPlayStatusRequest", request_id="l")
    assert [queue["game_type"] for queue in left["queues"]] == ["apologies"]
    join(h, bob)  # fish: ann left it
    h.none(bob, "QuickPlayMatchedRequest")
    h.send(ann, type="QuickPlayLeaveRequest")
    assert "queues" not in h.expect(ann, "QuickPlayStatusRequest")  # none: the default, left out
    h.clear()
    h.advance(STATUS_EVERY)
    h.none(ann, "QuickPlayStatusRequest")  # waits nowhere: nothing pushed
    h.expect(bob, "QuickPlayStatusRequest")


def test_the_window_widens_until_distant_ratings_meet() -> None:
    h = Harness()
    (ann, ann_id), (bob, bob_id) = h.player("ann"), h.player("bob")
    rate(h, ann_id, "apologies", 20.0)
    rate(h, bob_id, "apologies", 30.0)
    join(h, ann, game_type="apologies")
    join(h, bob, game_type="apologies")
    assert h.expect(bob, "QuickPlayStatusRequest")["queues"][0]["rating"] == 30.0
    h.none(bob, "QuickPlayMatchedRequest")
    h.advance(13.0)  # 3 + 0.5 x 13 = 9.5 < 10
    h.none(ann, "QuickPlayMatchedRequest")
    h.advance(1.0)  # ann's window: 3 + 0.5 x 14 = 10
    assert h.expect(ann, "QuickPlayMatchedRequest")["waited_seconds"] == 14.0
    assert h.expect(bob, "QuickPlayMatchedRequest")["waited_seconds"] == 14.0


def test_several_queues_one_game_and_the_others_end() -> None:
    h = Harness()
    (ann, _), (bob, _), (cid, _) = h.player("ann"), h.player("bob"), h.player("cid")
    join(h, ann, game_type="fish")
    join(h, ann, game_type="apologies")
    join(h, ann, game_type="fish", seats=3)
    join(h, bob, game_type="apologies")
    matched = h.expect(ann, "QuickPlayMatchedRequest")
    assert matched["game_type"] == "apologies"
    assert len(h.service.hub.matchmaker) == 0  # ann's fish queues ended with it
    join(h, cid, game_type="fish")
    h.none(cid, "QuickPlayMatchedRequest")  # ann no longer waits for fish
    h.send(ann, type="QuickPlayLeaveRequest", game_type="fish")
    h.error(ann, "NOT_QUEUED")


def test_robots_take_the_empty_seats_after_the_wait() -> None:
    h = Harness()
    (ann, ann_id), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann, game_type="fish", seats=3, robots_after=10)
    join(h, bob, game_type="fish", seats=3)  # never with robots
    assert h.expect(ann, "QuickPlayStatusRequest")["queues"][0]["robots_in_seconds"] == 10.0
    h.advance(9.0)
    h.none(ann, "QuickPlayMatchedRequest")
    h.advance(1.0)
    matched = h.expect(ann, "QuickPlayMatchedRequest")
    assert (matched["robots"], matched["seats"]) == (2, 3)
    report = h.expect(ann, "GameCreatedRequest")["status_report"]
    assert [seat["kind"] for seat in report["players"]] == ["HUMAN", "ROBOT", "ROBOT"]
    assert report["players"][0]["player_id"] == ann_id
    h.none(bob, "QuickPlayMatchedRequest")  # bob said never: he still waits
    assert list(h.service.hub.matchmaker.players()) == [h.service.hub.accounts.named("bob").id]


def test_signing_out_leaves_every_queue() -> None:
    h = Harness()
    (ann, _), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann)
    join(h, ann, game_type="apologies")
    h.drop(ann)
    assert len(h.service.hub.matchmaker) == 0
    join(h, bob)
    h.none(bob, "QuickPlayMatchedRequest")


def test_a_restart_tells_waiting_players_to_queue_again() -> None:
    """Queues are not stored: a stopping server tells each waiting player (ended:
    SERVER_STOPPING), and the restarted one knows no queue; queueing again works."""
    h = Harness()
    (ann, ann_id), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann)
    join(h, bob, game_type="tsuro", seats=3)
    h.clear()
    h.run(h.service.shutdown(h.now))
    for conn in (ann, bob):
        assert h.expect(conn, "QuickPlayStatusRequest") == {
            "type": "QuickPlayStatusRequest",
            "ended": "SERVER_STOPPING",
        }
        assert conn in h.closed
    after = h.restart(downtime=5.0)
    assert len(after.service.hub.matchmaker) == 0
    conn = after.connect()
    token, _ = after.service.tokens.issue(ann_id, "ann", after.now)
    after.send(conn, type="AsyncAuthRequest", name="ann", sessionToken=token)
    after.expect(conn, "AsyncConnectedRequest")
    after.send(conn, type="QuickPlayLeaveRequest")
    after.error(conn, "NOT_QUEUED")
    join(after, conn)
    assert after.expect(conn, "QuickPlayStatusRequest")["queues"][0]["game_type"] == "fish"


def test_a_stopping_hub_of_a_cluster_tells_waiting_players_once() -> None:
    """In a cluster the stopping hub's farewell tells every waiting player (the node's proxy
    keeps it whole, wherever they are connected); its shutdown then tells nobody again."""
    h = Harness()
    (ann, _), (bob, _) = h.player("ann"), h.player("bob")
    join(h, ann)
    join(h, bob, game_type="tsuro", seats=3)
    h.clear()
    h.run(h.service.farewell(h.now))
    for conn in (ann, bob):
        assert h.expect(conn, "QuickPlayStatusRequest")["ended"] == "SERVER_STOPPING"
        assert conn not in h.closed
    assert len(h.service.hub.matchmaker) == 0
    h.run(h.service.shutdown(h.now))
    for conn in (ann, bob):
        h.none(conn, "QuickPlayStatusRequest")
        assert conn in h.closed


def test_a_player_at_the_games_limit_when_matched_leaves_the_queues() -> None:
    """A match whose player reached the games limit while waiting (an invitation accepted) is
    not made: that player is told and leaves; the partner waits on, its wait kept."""
    h = Harness(AsyncLimits(max_games=1))
    (ann, ann_id), (bob, _), (cid, cid_id) = h.player("ann"), h.player("bob"), h.player("cid")
    rate(h, ann_id, "fish", 10.0)
    join(h, ann)
    join(h, bob)  # 25 against 10: not yet
    h.send(cid, type="EngageGameWithFriendsRequest", friend_ids=[ann_id])
    game_id = h.expect(ann, "GameCreatedRequest")["game_id"]
    h.send(ann, type="AnswerInvitationRequest", game_id=game_id, accept=True)
    h.clear()
    h.advance(30.0)  # the windows meet now, but ann plays her one game
    assert h.expect(ann, "QuickPlayStatusRequest") == {
        "type": "QuickPlayStatusRequest",
        "ended": "TOO_MANY_GAMES",
    }
    h.none(bob, "QuickPlayMatchedRequest")
    [ticket] = h.service.hub.matchmaker.tickets(h.service.hub.accounts.named("bob").id)
    assert ticket.since == 1_000_000.0
    assert cid_id not in set(h.service.hub.matchmaker.players())
