"""What the hot path records: plain counters and bucketed histograms, no locks, no exporter.

The transports and the runtime add to these with a dictionary lookup, a ``bisect`` and an
integer increment; :mod:`parlour.metrics.collector` turns them into Prometheus families only
when ``/metrics`` is scraped. prometheus-client's own ``Histogram.observe`` takes a lock and
updates every bucket at or above the value, which is fine for a scrape-rate metric and a cost
per frame for a game server, hence these.

Nothing here imports the services, prometheus-client or asyncio. The transport records into
it through the interfaces it declares (parlour.transport.metering); app.py hands it over.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from parlour.storage.records import AsyncTurnRow, MoveRow, Record

__all__ = [
    "BATCH_BUCKETS",
    "LATENCY_BUCKETS",
    "Meter",
    "Probe",
    "Tally",
    "TimedRobot",
]

#: Seconds. A request handled in memory takes tens of microseconds; a robot's search or a
#: commit that syncs to disk takes milliseconds; anything past a second is an outage.
LATENCY_BUCKETS: tuple[float, ...] = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
)
#: Records in one commit: one move is a few records, a busy loop iteration gathers dozens.
BATCH_BUCKETS: tuple[float, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)

#: The records that are one move each (an Apologies/Fish/Tsuro move, an /async turn).
MOVES = (MoveRow, AsyncTurnRow)

#: Turns a received frame into the label of its message type (a bounded set of names).
Classify = Callable[[Any], str]


class Tally:
    """A histogram's running state: how many values fell at or below each bound, and their sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float] = LATENCY_BUCKETS) -> None:
        self.bounds = tuple(bounds)
        #: One slot per bound, and a last one for values above them all (+Inf).
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        # bisect_left: the first bound >= value, i.e. Prometheus' "le" (less than or equal).
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """(upper bound, values at or below it) for each bound and "+Inf", as exposition wants."""
        result: list[tuple[str, int]] = []
        running = 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            result.append(("+Inf" if bound == float("inf") else repr(float(bound)), running))
        return result


class Probe:
    """What one listener's service receives: handling time per message type, connections
    opened, and transport-level failures (a service that raised, bad UTF-8)."""

    __slots__ = ("classify", "errors", "latency", "opened", "protocol")

    def __init__(self, protocol: str, classify: Classify) -> None:
        self.protocol = protocol
        self.classify = classify
        self.latency: dict[str, Tally] = {}
        self.opened = 0
        self.errors: dict[str, int] = {}

    def observe(self, message: Any, seconds: float) -> None:
        kind = self.classify(message)
        tally = self.latency.get(kind)
        if tally is None:
            tally = self.latency[kind] = Tally(LATENCY_BUCKETS)
        tally.observe(seconds)

    def failed(self, reason: str) -> None:
        self.errors[reason] = self.errors.get(reason, 0) + 1


class Meter:
    """Everything the runtime and the listeners of one server record (one per app, so tests
    can run several servers in one process)."""

    def __init__(self) -> None:
        #: By the id of the service a listener hands frames to.
        self._probes: dict[int, Probe] = {}
        self.commit_seconds = Tally(LATENCY_BUCKETS)
        self.batch_records = Tally(BATCH_BUCKETS)
        #: Moves and /async turns committed to the store.
        self.moves = 0
        #: Commits the store refused.
        self.commit_failures = 0
        #: Robot decision time, by game.
        self.robots: dict[str, Tally] = {}

    def watch(self, service: object, protocol: str, classify: Classify) -> Probe:
        """Measure what ``service`` receives, under the label ``protocol``."""
        probe = self._probes[id(service)] = Probe(protocol, classify)
        return probe

    def probe(self, service: object) -> Probe | None:
        """The probe of ``service`` (looked up once per connection), None if it is not watched."""
        return self._probes.get(id(service))

    @property
    def probes(self) -> list[Probe]:
        return list(self._probes.values())

    def committed(self, records: Sequence[Record], seconds: float) -> None:
        """One batch committed (parlour.transport.metering.RuntimeMeter)."""
        self.commit_seconds.observe(seconds)
        self.batch_records.observe(len(records))
        self.moves += sum(1 for record in records if type(record) in MOVES)

    def commit_failed(self) -> None:
        self.commit_failures += 1

    def robot(self, game: str) -> Tally:
        tally = self.robots.get(game)
        if tally is None:
            tally = self.robots[game] = Tally(LATENCY_BUCKETS)
        return tally


def robot_timer(meter: Meter) -> Callable[[str, Callable[[], Any]], Any]:
    """For services that ask a robot through a callable (the /async hub's ``robot_timer``):
    each decision timed into the meter's tally of its game."""

    def timed(game: str, decide: Callable[[], Any]) -> Any:
        started = perf_counter()
        try:
            return decide()
        finally:
            meter.robot(game).observe(perf_counter() - started)

    return timed


class TimedRobot:
    """A robot (parlour.games.base.Robot) whose every decision is timed into ``tally``: the
    composition root wraps the services' robots with it, so no pure module reads a clock."""

    __slots__ = ("name", "robot", "slow", "tally")

    def __init__(self, robot: Any, tally: Tally) -> None:
        self.robot = robot
        self.name: str = robot.name
        #: A slow robot decides in the robots' process (parlour.core.turns), untimed here.
        self.slow: bool = getattr(robot, "slow", False)
        self.tally = tally

    def choose(self, state: Any, seat: Any, moves: Sequence[Any], rng: Any) -> Any:
        started = perf_counter()
        try:
            return self.robot.choose(state, seat, moves, rng)
        finally:
            self.tally.observe(perf_counter() - started)
