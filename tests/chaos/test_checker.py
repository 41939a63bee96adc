"""The chaos run's own parts, without processes: the schedule follows from the seed and keeps
its limits, and the checker finds each broken promise in a history made to break it."""

from __future__ import annotations

import itertools
from typing import Any

from tests.chaos.checker import Stored, check
from tests.chaos.history import Event, History
from tests.chaos.nemesis import KINDS, schedule

LEASE = 3.0


def test_a_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    first = schedule(7, 180, 3, LEASE, 4)
    assert first == schedule(7, 180, 3, LEASE, 4)
    assert first != schedule(8, 180, 3, LEASE, 4)
    assert {fault.kind for fault in first} <= set(KINDS)
    assert all(fault.at >= 0 and fault.at + fault.duration <= 180 for fault in first)


def test_faults_overlap_but_never_on_one_target_and_one_node_stays_up() -> None:
    for seed in range(50):
        faults = schedule(seed, 300, 3, LEASE, 4)
        by_target: dict[str, list[tuple[float, float]]] = {}
        for fault in faults:
            by_target.setdefault(fault.target, []).append((fault.at, fault.at + fault.duration))
        for windows in by_target.values():
            windows.sort()
            assert all(end <= start for (_, end), (start, _) in itertools.pairwise(windows))
        down = [f for f in faults if f.kind in ("node-kill", "node-pause", "node-leave")]
        for fault in down:
            at = fault.at + 0.001
            out = {f.target for f in down if f.at <= at < f.at + f.duration}
            assert len(out) <= 2, (seed, fault)
        starts = sorted(fault.at for fault in faults)
        assert any(
            b < a_end
            for a_end, b in zip(
                (f.at + f.duration for f in sorted(faults, key=lambda f: f.at)), starts[1:], strict=False
            )
        ), seed


def _history(*events: tuple[float, str, str, int, dict[str, Any]]) -> History:
    history = History()
    history.events = [Event(t, kind, who, conn, 1, data) for t, kind, who, conn, data in events]
    return history


def _commit(
    t: float, rid: str, game: int, turn: int, action: str
) -> tuple[float, str, str, int, dict[str, Any]]:
    message = {
        "type": "CommitActionRequest",
        "game_id": game,
        "turn_index": turn,
        "action": action,
        "request_id": rid,
    }
    return (t, "send", "p", 1, {"m": message})


def _ack(t: float, rid: str, game: int, turn: int) -> tuple[float, str, str, int, dict[str, Any]]:
    return (
        t,
        "recv",
        "p",
        1,
        {"m": {"type": "ActionCommitedRequest", "request_id": rid, "game_id": game, "turn_index": turn + 1}},
    )


def _refused(t: float, rid: str, text: str) -> tuple[float, str, str, int, dict[str, Any]]:
    message = {"type": "ErrorRequest", "request_id": rid, "code": "INTERNAL_ERROR", "message": text}
    return (t, "recv", "p", 1, {"m": message})


def _verdict(history: History, stored: Stored) -> dict[str, list[str]]:
    verdict = check(
        history, stored, LEASE, 0.0, {"node1": "all fine"}, {"n1": {"status": "ok", "store": "ok"}}
    )
    return {kind: details for kind, details in verdict.violations.items() if details}


def test_a_kept_history_passes() -> None:
    history = _history(
        _commit(1, "c1", 5, 1, "a"), _ack(1.1, "c1", 5, 1), _commit(2, "c2", 5, 2, "b"), _ack(2.1, "c2", 5, 2)
    )
    stored = Stored({5: ("OVER", 3)}, {(5, 1): "a", (5, 2): "b"})
    assert _verdict(history, stored) == {}


def test_an_acknowledged_commit_missing_from_the_store_is_lost() -> None:
    history = _history(
        _commit(1, "c1", 5, 1, "a"), _ack(1.1, "c1", 5, 1), _commit(2, "c2", 5, 2, "b"), _ack(2.1, "c2", 5, 2)
    )
    stored = Stored({5: ("OVER", 2)}, {(5, 1): "a"})
    assert list(_verdict(history, stored)) == ["acknowledged commit lost"]


def test_two_acknowledged_moves_at_one_turn() -> None:
    history = _history(
        _commit(1, "c1", 5, 1, "a"), _ack(1.1, "c1", 5, 1), _commit(5, "c2", 5, 1, "z"), _ack(5.1, "c2", 5, 1)
    )
    stored = Stored({5: ("OVER", 2)}, {(5, 1): "z"})
    assert list(_verdict(history, stored)) == ["two moves at a turn"]


def test_a_commit_refused_as_nothing_changed_yet_stored() -> None:
    history = _history(
        _commit(1, "c1", 5, 1, "a"), _refused(1.1, "c1", "the server could not save this; nothing changed")
    )
    assert list(_verdict(history, Stored({5: ("OVER", 2)}, {(5, 1): "a"}))) == ["refused yet stored"]
    # TRY_AGAIN says as much: nothing changed.
    again = _history(
        _commit(1, "c1", 5, 1, "a"),
        (
            1.1,
            "recv",
            "p",
            1,
            {
                "m": {
                    "type": "ErrorRequest",
                    "request_id": "c1",
                    "code": "TRY_AGAIN",
                    "message": "send it again",
                }
            },
        ),
    )
    assert list(_verdict(again, Stored({5: ("OVER", 2)}, {(5, 1): "a"}))) == ["refused yet stored"]
    # Refused "may not have been saved": either outcome keeps the promise.
    maybe = _history(_commit(1, "c1", 5, 1, "a"), _refused(1.1, "c1", "this may not have been saved"))
    assert _verdict(maybe, Stored({5: ("OVER", 2)}, {(5, 1): "a"})) == {}


def test_a_game_left_running_and_a_probe_never_answered() -> None:
    history = _history((1, "note", "p", 1, {"what": "probe", "game_id": 5}))
    verdict = _verdict(history, Stored({5: ("RUNNING", 7)}, {}))
    assert sorted(verdict) == ["game not played to its end", "game stuck after the faults"]


def test_an_acknowledged_chat_line_missing_from_the_store() -> None:
    sent = {"type": "MulticastChatRequest", "game_id": 0, "text": "hello #1", "request_id": "g1"}
    echo = {"type": "ClientChatRequest", "request_id": "g1", "sender": 3, "text": "hello #1"}
    history = _history((1, "send", "p", 1, {"m": sent}), (1.1, "recv", "p", 1, {"m": echo}))
    assert list(_verdict(history, Stored())) == ["acknowledged chat line lost"]
    assert _verdict(history, Stored(chat={(0, 3, "hello #1")})) == {}


def test_a_traceback_and_a_failing_health_fail_the_run() -> None:
    verdict = check(
        History(),
        Stored(),
        LEASE,
        0.0,
        {"node2": "x\nTraceback (most recent call last):\n"},
        {"n2": {"status": "ok", "store": "failing"}},
    )
    assert sorted(kind for kind, details in verdict.violations.items() if details) == [
        "/healthz not ok after the faults",
        "traceback in a node's log",
    ]


def _crowded(t: float, *channels: str) -> tuple[float, str, str, int, dict[str, Any]]:
    return (t, "note", "census", 0, {"what": "crowded channels", "channels": dict.fromkeys(channels, 2)})


def test_a_subscription_left_behind_fails_the_run_and_a_frozen_owners_does_not() -> None:
    """A channel heard by two nodes for a few seconds is a frozen owner's (a pause); for longer
    than any fault lasts, a subscription a node forgot."""
    frozen = [_crowded(10.0 + 0.5 * n, "parlour:async/3:owner") for n in range(20)]  # 10 s
    forgotten = [_crowded(40.0 + 0.5 * n, "parlour:async/5:owner") for n in range(70)]  # 35 s
    verdict = _verdict(_history(*frozen, *forgotten), Stored())
    assert list(verdict) == ["subscription left behind"]
    assert [line.split(":")[1] for line in verdict["subscription left behind"]] == ["async/5"]


def test_a_request_left_unanswered_fails_unless_sent_while_the_store_was_away() -> None:
    """A request its client gave up on (no answer in GIVE_UP) breaks the promise; sent while
    PostgreSQL was stopped, or a node's link to it held, cut or lossy, it waited for the store
    (commits pause until it answers): counted, not failed. A link only slowed is no excuse."""

    def run(fault: str, target: str) -> dict[str, list[str]]:
        window = {"kind": fault, "target": target, "at": 1.0}
        return _verdict(
            _history(
                (1.0, "fault", "nemesis", 0, window),
                (2.0, "send", "ann", 1, {"m": {"type": "MulticastChatRequest", "request_id": "g1"}}),
                (9.0, "heal", "nemesis", 0, window),
                (17.0, "note", "ann", 1, {"what": "unanswered", "request_id": "g1"}),
            ),
            Stored(),
        )

    assert "unanswered" not in run("pg-stop", "pg")
    assert "unanswered" not in run("link-hold", "n2-pg")
    assert "unanswered" not in run("link-loss", "n1-pg")
    assert run("link-delay", "n1-pg")["unanswered"] == ["ann on n1 at 17.0s g1"]
    assert run("redis-pause", "redis")["unanswered"] == ["ann on n1 at 17.0s g1"]


def test_an_answer_later_than_the_bound_fails_unless_it_is_the_last_resort_in_time() -> None:
    """An answer later than a lease and a half (and 2 s) with no fault to delay it breaks the
    promise; the connection's node telling the outcome is unknown because the owner's answer
    was lost on its way is the last resort, bound at three leases and a third (and 2 s)."""
    from parlour.protocols.async_ws.shards.placement import UNKNOWN_OUTCOME

    lost = {
        "m": {
            "type": "ErrorRequest",
            "request_id": "c1",
            "code": "INTERNAL_ERROR",
            "message": UNKNOWN_OUTCOME,
        }
    }
    assert _verdict(_history(_commit(1, "c1", 5, 1, "a"), (10.8, "recv", "p", 1, lost)), Stored()) == {}
    late = _verdict(_history(_commit(1, "c1", 5, 1, "a"), (14.0, "recv", "p", 1, lost)), Stored())
    assert late["answered later than the bound"] == [
        "p on n1: CommitActionRequest c1 sent at 1.0s, answered after 13.0s"
    ]
    acked = _verdict(
        _history(_commit(1, "c1", 5, 1, "a"), _ack(10.8, "c1", 5, 1)), Stored({5: ("OVER", 2)}, {(5, 1): "a"})
    )
    assert acked["answered later than the bound"] == [
        "p on n1: CommitActionRequest c1 sent at 1.0s, answered after 9.8s"
    ]
