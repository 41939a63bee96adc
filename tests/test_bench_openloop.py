"""The open loop of bench/cluster.py (bench/_openloop.py): its schedule, and latency counted from
the time a commit was due, for the commits answered and for those never answered."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from bench import _openloop as openloop
from bench._openloop import ACKED, PROMPT, Game, OpenLoad, Schedule, Window, percentile


class FakeSeat:
    """A seat's connection: frames the test queues, commits the load sends."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.sent: list[bytes] = []

    async def recv(self) -> bytes:
        return await self.inbox.get()

    def send(self, frame: bytes) -> None:
        self.sent.append(frame)


def kind_of(frame: bytes) -> bytes:
    return frame.partition(b":")[0]


def turn_of(frame: bytes) -> int:
    return int(frame.partition(b":")[2] or 0)


def commit(game_id: int, other: int, turn: int) -> bytes:
    return b"commit %d %d %d" % (game_id, other, turn)


def test_the_games_commits_are_evenly_interleaved_and_found_from_a_moment() -> None:
    schedule = Schedule(games=4, rate=8.0, origin=100.0)
    assert schedule.interval == 0.5  # each game commits twice a second
    dues = sorted(schedule.due(game, k) for game in range(4) for k in range(2))
    assert dues == pytest.approx([100 + i * 0.125 for i in range(8)])
    for game in range(4):
        for moment in (99.0, 100.0, 100.3, 101.26, 107.0):
            k = schedule.first_at_or_after(game, moment)
            assert schedule.due(game, k) >= moment - 1e-9
            assert k == 0 or schedule.due(game, k - 1) < moment
    schedule.retime(16.0, 200.0)
    assert (schedule.phase, schedule.interval, schedule.due(0, 0)) == (1, 0.25, 200.0)


def test_latency_is_counted_from_the_due_time_and_unanswered_commits_count_what_they_waited() -> None:
    async def scenario() -> tuple[OpenLoad, list[FakeSeat], Window, list[float]]:
        seats = [FakeSeat(), FakeSeat()]
        game = Game(0, 7, (seats[0], seats[1]))  # type: ignore[arg-type]
        now = time.perf_counter()
        # One commit a second, the first due 10.5 s ago: the load is late from the start.
        schedule = Schedule(games=1, rate=1.0, origin=now - 10.5)
        game.phase = schedule.phase  # counting from the schedule's first slot
        load = OpenLoad([game], schedule, kind_of, turn_of, commit, frozenset({b"ErrorRequest"}))
        window = load.window = Window(schedule.origin, schedule.origin + 5.0)  # slots 0..4
        load.start()
        seats[0].inbox.put_nowait(PROMPT + b":1")
        while not seats[0].sent:
            await asyncio.sleep(0)
        seats[0].inbox.put_nowait(ACKED)
        while load.acked < 1:
            await asyncio.sleep(0)
        stopped = time.perf_counter()
        late = load.unanswered(window, stopped)
        await load.stop()
        return load, seats, window, late

    load, seats, window, late = asyncio.run(scenario())
    # Sent at once (it was overdue), to the other seat, on the prompt's turn.
    assert seats[0].sent == [b"commit 7 2 1"]
    assert load.sent == 1 and not load.errors
    # Its latency runs from its due time, 10.5 s before the test began, not from its send.
    assert len(window.latencies) == 1 and window.latencies[0] >= 10.5
    assert window.acked == {0: 1}
    # Slots 1..4 were due in the window and never answered: each counts what it had waited.
    assert len(late) == 4
    assert all(wait >= 10.5 - k for k, wait in zip(range(1, 5), late, strict=True))
    assert percentile([*window.latencies, *late], 0.99) >= 10.5


def test_a_refusal_stops_the_seat_and_is_reported() -> None:
    async def scenario() -> list[str]:
        seat = FakeSeat()
        game = Game(0, 1, (seat, FakeSeat()))  # type: ignore[arg-type]
        load = OpenLoad(
            [game],
            Schedule(1, 1.0, time.perf_counter()),
            kind_of,
            turn_of,
            commit,
            frozenset({b"ErrorRequest"}),
        )
        load.start()
        seat.inbox.put_nowait(b"ErrorRequest:0")
        while not load.errors:
            await asyncio.sleep(0)
        await load.stop()
        return load.errors

    errors: Any = asyncio.run(scenario())
    assert errors == ["ErrorRequest:0"]


def test_a_try_again_sends_the_same_commit_again_and_its_latency_keeps_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(openloop, "RETRY_SECONDS", 0.0)

    async def scenario() -> tuple[OpenLoad, FakeSeat, Window]:
        seat = FakeSeat()
        game = Game(0, 3, (seat, FakeSeat()))  # type: ignore[arg-type]
        schedule = Schedule(games=1, rate=1.0, origin=time.perf_counter() - 2.0)
        game.phase = schedule.phase
        load = OpenLoad([game], schedule, kind_of, turn_of, commit, frozenset({b"ErrorRequest"}))
        window = load.window = Window(schedule.origin, schedule.origin + 1.0)
        load.start()
        seat.inbox.put_nowait(PROMPT + b":4")
        seat.inbox.put_nowait(b'ErrorRequest:{"code":"TRY_AGAIN"}')
        while len(seat.sent) < 2:
            await asyncio.sleep(0)
        seat.inbox.put_nowait(ACKED)
        while load.acked < 1:
            await asyncio.sleep(0)
        await load.stop()
        return load, seat, window

    load, seat, window = asyncio.run(scenario())
    assert seat.sent == [b"commit 3 2 4", b"commit 3 2 4"]
    assert (load.sent, load.retries, load.errors) == (1, 1, [])
    assert len(window.latencies) == 1 and window.latencies[0] >= 2.0


def test_a_stale_refusal_is_counted_and_the_seat_plays_on() -> None:
    async def scenario() -> tuple[OpenLoad, FakeSeat]:
        seat = FakeSeat()
        game = Game(0, 5, (seat, FakeSeat()))  # type: ignore[arg-type]
        schedule = Schedule(games=1, rate=1.0, origin=time.perf_counter() - 5.0)
        game.phase = schedule.phase
        load = OpenLoad([game], schedule, kind_of, turn_of, commit, frozenset({b"ErrorRequest"}))
        load.start()
        seat.inbox.put_nowait(PROMPT + b":2")
        seat.inbox.put_nowait(b'ErrorRequest:{"code":"INDEX_CONFLICT"}')
        seat.inbox.put_nowait(PROMPT + b":4")
        while len(seat.sent) < 2:
            await asyncio.sleep(0)
        await load.stop()
        return load, seat

    load, seat = asyncio.run(scenario())
    assert (load.refused, load.errors) == (1, [])
    assert seat.sent == [b"commit 5 2 2", b"commit 5 2 4"]
