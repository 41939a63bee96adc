"""An open-loop turn load for ``/async``: commits at a fixed offered rate, not as fast as the
server answers.

A closed loop (bench/async.py: commit on every prompt at once) measures the most a server
carries, but under it a slower server is simply offered less: its queueing never shows. Here
every game commits on a schedule: with G games and an offered rate of R commits/s, game g's k-th
commit is due at ``origin + (g / G + k) * G / R`` (the games' turns evenly interleaved). A seat
that gets its prompt before its commit is due waits for that time; one that gets it late (the
server, or the game's previous turn, was slow) sends at once. Latency is counted from the time
the commit was *due*, not sent, to its acknowledgement, so time spent queued before the send is
counted too (coordinated omission, as wrk2 corrects it). A commit due in the measured window
that is still unacknowledged when the load stops counts with the time it had waited by then.

The schedule can be retimed (a new rate from a new origin) while the games play: the
calibration offers one rate after another to the same games.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench._wsclient import WireClient

__all__ = ["Game", "OpenLoad", "Schedule", "Window", "percentile"]

PROMPT = b"ActionRequiredRequest"
ACKED = b"ActionCommitedRequest"
#: A refusal that asks for the request again (a game's shard between owners): the commit is
#: sent again after a short wait, its latency still running from its due time.
TRY_AGAIN = b'"TRY_AGAIN"'
RETRY_SECONDS = 0.02
#: A commit refused as stale (out of turn, or for a turn already played): after a shard changed
#: owner (a lease lapsed), the restored game prompts again for a turn whose commit was already
#: stored, and a commit sent again may find its turn gone. Counted, not fatal: the game goes
#: on, and the commit refused counts as unanswered if it was due in the window.
STALE = (b'"NOT_YOUR_TURN"', b'"INDEX_CONFLICT"')


@dataclass
class Schedule:
    """When each game's commits are due, at ``rate`` commits/s over ``games`` games."""

    games: int
    rate: float
    origin: float
    #: Bumped by every retiming: a game counts its commits afresh in a new phase.
    phase: int = 0

    @property
    def interval(self) -> float:
        """The time between two commits of one game."""
        return self.games / self.rate

    def due(self, game: int, k: int) -> float:
        return self.origin + (game / self.games + k) * self.interval

    def first_at_or_after(self, game: int, moment: float) -> int:
        """The index of the game's first commit due at or after ``moment`` (0 at the earliest)."""
        return max(0, math.ceil((moment - self.origin) / self.interval - game / self.games - 1e-9))

    def retime(self, rate: float, origin: float) -> None:
        self.rate, self.origin = rate, origin
        self.phase += 1


@dataclass
class Window:
    """The measured window: commits due in ``[start, end)``."""

    start: float
    end: float
    #: Latency (s, from due to acknowledged) of each acknowledged commit due in the window.
    latencies: list[float] = field(default_factory=list)
    #: Acknowledged commits due in the window, by game.
    acked: dict[int, int] = field(default_factory=dict)
    #: Commits acknowledged while the window ran (whatever their due time).
    acked_during: int = 0

    def holds(self, due: float) -> bool:
        return self.start <= due < self.end


@dataclass
class Game:
    """One game's two seats and where it is in the schedule."""

    index: int
    game_id: int
    seats: tuple[WireClient, WireClient]
    #: The schedule's phase this game counts in, and its next commit's index in that phase.
    phase: int = -1
    next_k: int = 0
    #: The due time of each seat's commit awaiting its acknowledgement, and the commit.
    outstanding: dict[int, float] = field(default_factory=dict)
    commits: dict[int, bytes] = field(default_factory=dict)


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (nearest rank), nan if there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


class OpenLoad:
    """Plays ``games`` on ``schedule``; ``kind_of``, ``turn_of`` and ``commit`` read a frame's
    type and turn index and build a commit (bench/async.py's wire helpers)."""

    def __init__(
        self,
        games: list[Game],
        schedule: Schedule,
        kind_of: Callable[[bytes], bytes],
        turn_of: Callable[[bytes], int],
        commit: Callable[[int, int, int], bytes],
        failures: frozenset[bytes],
    ) -> None:
        self.games = games
        self.schedule = schedule
        self.kind_of, self.turn_of, self.commit, self.failures = kind_of, turn_of, commit, failures
        self.window: Window | None = None
        self.errors: list[str] = []
        #: Commits sent, acknowledged, sent again after a TRY_AGAIN, refused as stale.
        self.sent = self.acked = self.retries = self.refused = 0
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        for game in self.games:
            for seat in (1, 2):
                self._tasks.append(asyncio.create_task(self._seat(game, seat)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _seat(self, game: Game, seat: int) -> None:
        ws = game.seats[seat - 1]
        perf = time.perf_counter
        schedule = self.schedule
        try:
            while True:
                frame = await ws.recv()
                kind = self.kind_of(frame)
                if kind == PROMPT:
                    if game.phase != schedule.phase:
                        game.phase = schedule.phase
                        game.next_k = schedule.first_at_or_after(game.index, perf())
                    due = schedule.due(game.index, game.next_k)
                    game.next_k += 1
                    wait = due - perf()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    game.outstanding[seat] = due
                    game.commits[seat] = self.commit(game.game_id, 3 - seat, self.turn_of(frame))
                    ws.send(game.commits[seat])
                    self.sent += 1
                elif kind == ACKED:
                    due = game.outstanding.pop(seat, None)
                    self.acked += 1
                    window = self.window
                    if window is None or due is None:
                        continue
                    now = perf()
                    if window.start <= now < window.end:
                        window.acked_during += 1
                    if window.holds(due):
                        window.latencies.append(now - due)
                        window.acked[game.index] = window.acked.get(game.index, 0) + 1
                elif TRY_AGAIN in frame and seat in game.outstanding:
                    self.retries += 1
                    await asyncio.sleep(RETRY_SECONDS)
                    ws.send(game.commits[seat])
                elif kind == b"ErrorRequest" and any(code in frame for code in STALE):
                    self.refused += 1
                    game.outstanding.pop(seat, None)
                elif kind in self.failures:
                    self.errors.append(frame[:300].decode(errors="replace"))
                    return
        except ConnectionError as error:
            self.errors.append(f"connection lost: {error}")

    def unanswered(self, window: Window, stopped: float) -> list[float]:
        """What each commit due in the window but not acknowledged by ``stopped`` had waited by
        then: a game plays its turns in order, so its missing ones are its last due."""
        waited: list[float] = []
        schedule = self.schedule
        for game in self.games:
            first = schedule.first_at_or_after(game.index, window.start)
            end = schedule.first_at_or_after(game.index, window.end)
            for k in range(first + window.acked.get(game.index, 0), end):
                waited.append(max(0.0, stopped - schedule.due(game.index, k)))
        return waited


@dataclass
class Measured:
    """One window's figures, client side, and what ``probe`` read before and after it."""

    offered: float
    elapsed: float
    acked: int
    latencies: list[float]
    late: int
    errors: list[str]
    retries: int
    refused: int
    before: Any
    after: Any

    @property
    def rate(self) -> float:
        return self.acked / self.elapsed

    def percentile_ms(self, share: float) -> float:
        return percentile(self.latencies, share) * 1000


async def measure(
    load: OpenLoad, seconds: float, grace: float, probe: Callable[[], Awaitable[Any]]
) -> Measured:
    """Measure ``seconds`` of ``load`` as it plays: ``probe()`` (server-side counters) just
    before and just after, then ``grace`` seconds for the window's last commits to be answered."""
    perf = time.perf_counter
    before = await probe()
    start = perf()
    window = load.window = Window(start, start + seconds)
    await asyncio.sleep(max(0.0, window.end - perf()))
    after = await probe()
    await asyncio.sleep(grace)
    stopped = perf()
    load.window = None
    late = load.unanswered(window, stopped)
    return Measured(
        offered=load.schedule.rate,
        elapsed=window.end - window.start,
        acked=window.acked_during,
        latencies=window.latencies + late,
        late=len(late),
        errors=list(load.errors),
        retries=load.retries,
        refused=load.refused,
        before=before,
        after=after,
    )
