"""The last hour of the server's own figures, sampled by the server (the admin
dashboard's charts, ``GET /api/admin/dashboard``).

A ``Reading`` is what the collector reads at one moment (gauges as they are, counters and
histograms as running totals); ``History.sample`` turns two successive readings into one
``Sample``: the gauges, rates per second over the interval, and the 99th percentiles of what
was observed in it (a histogram's counts at the sample minus those at the one before; the
percentile is the upper bound of the bucket it falls in, as Prometheus' ``histogram_quantile``
would say at best). Time is passed in; app.py samples every ``SAMPLE_SECONDS``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from parlour.metrics.tally import LATENCY_BUCKETS, Tally

__all__ = ["HOUR", "SAMPLE_SECONDS", "History", "Reading", "Sample", "p99"]

#: How often the server samples itself, and how far back the dashboard looks.
SAMPLE_SECONDS: Final = 10.0
HOUR: Final = 3600.0


class Reading(NamedTuple):
    """Gauges now, and running totals since the start."""

    at: float
    connections: int
    players: int
    games: int
    moves: int
    commits: int
    errors: int
    #: Request handling times of every protocol and type, merged: counts per bucket.
    requests: tuple[int, ...]
    #: Store commit times: counts per bucket.
    store: tuple[int, ...]


class Sample(NamedTuple):
    at: float
    connections: int
    players: int
    games: int
    moves_per_second: float
    commits_per_second: float
    errors_per_second: float
    #: Seconds; None when nothing was observed in the interval.
    request_p99: float | None
    store_p99: float | None


def merged(tallies: Iterable[Tally], bounds: Sequence[float] = LATENCY_BUCKETS) -> tuple[int, ...]:
    """The counts per bucket of several tallies with the same bounds, added up."""
    total = [0] * (len(bounds) + 1)
    for tally in tallies:
        for index, count in enumerate(tally.counts):
            total[index] += count
    return tuple(total)


def p99(counts: Sequence[int], bounds: Sequence[float] = LATENCY_BUCKETS) -> float | None:
    """The upper bound of the bucket the 99th percentile falls in (the last bound for values
    past them all); None for no values."""
    total = sum(counts)
    if total == 0:
        return None
    wanted = 0.99 * total
    running = 0
    for index, count in enumerate(counts):
        running += count
        if running >= wanted:
            return float(bounds[min(index, len(bounds) - 1)])
    return float(bounds[-1])  # pragma: no cover - running reaches total


class History:
    """The samples of the last ``span`` seconds, oldest first."""

    def __init__(self, span: float = HOUR, interval: float = SAMPLE_SECONDS) -> None:
        self.samples: deque[Sample] = deque(maxlen=max(1, round(span / interval)))
        self._last: Reading | None = None

    def sample(self, reading: Reading) -> Sample | None:
        """Keep the sample ending at ``reading`` (none for the first reading, which only starts
        the first interval)."""
        last = self._last
        if last is not None and reading.at <= last.at:
            return None  # no time has passed (a clock stepped back): the interval goes on
        self._last = reading
        if last is None:
            return None
        seconds = reading.at - last.at

        def rate(now: int, before: int) -> float:
            # A counter that went back (a new owner's service in a cluster) starts again.
            return round(max(0, now - before) / seconds, 3)

        def window(now: tuple[int, ...], before: tuple[int, ...]) -> list[int]:
            return [max(0, a - b) for a, b in zip(now, before, strict=True)]

        sample = Sample(
            at=reading.at,
            connections=reading.connections,
            players=reading.players,
            games=reading.games,
            moves_per_second=rate(reading.moves, last.moves),
            commits_per_second=rate(reading.commits, last.commits),
            errors_per_second=rate(reading.errors, last.errors),
            request_p99=p99(window(reading.requests, last.requests)),
            store_p99=p99(window(reading.store, last.store)),
        )
        self.samples.append(sample)
        return sample

    def as_json(self) -> dict[str, Any]:
        """The samples as columns (what a chart library takes): ``{"at": [...], ...}``."""
        return {field: [getattr(sample, field) for sample in self.samples] for field in Sample._fields}
