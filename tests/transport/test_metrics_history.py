"""The dashboard's last hour (parlour.metrics.history): rates and percentiles between two
readings, with the time passed in; and the collector's reading of a live service."""

from __future__ import annotations

from parlour.metrics.history import History, Reading, merged, p99
from parlour.metrics.tally import LATENCY_BUCKETS, Tally

EMPTY = (0,) * (len(LATENCY_BUCKETS) + 1)


def reading(at: float, moves: int = 0, commits: int = 0, errors: int = 0, **more: object) -> Reading:
    fields: dict[str, object] = {
        "connections": 3,
        "players": 2,
        "games": 1,
        "requests": EMPTY,
        "store": EMPTY,
        **more,
    }
    return Reading(at=at, moves=moves, commits=commits, errors=errors, **fields)  # type: ignore[arg-type]


def test_p99_is_the_upper_bound_of_the_bucket_it_falls_in() -> None:
    fast, slow = Tally(), Tally()
    for _ in range(99):
        fast.observe(0.0004)  # the 0.0005 bucket
    slow.observe(0.2)  # the 0.25 bucket
    assert p99(merged([fast, slow])) == 0.0005
    for _ in range(10):
        slow.observe(3.0)  # past every bound
    assert p99(merged([fast, slow])) == LATENCY_BUCKETS[-1]
    assert p99(EMPTY) is None


def test_a_sample_holds_the_gauges_the_rates_and_the_interval_percentiles() -> None:
    history = History(span=30.0, interval=10.0)
    assert history.sample(reading(100.0, moves=5, commits=2)) is None  # starts the first interval
    before = Tally()
    before.observe(0.002)
    after = Tally()
    after.observe(0.002)
    for _ in range(200):
        after.observe(0.04)  # observed in the interval: the 0.05 bucket
    history.sample(reading(100.0, requests=merged([before])))  # a time gone back is skipped
    sample = history.sample(reading(110.0, moves=25, commits=12, errors=1, requests=merged([after])))
    assert sample is not None
    assert (sample.moves_per_second, sample.commits_per_second, sample.errors_per_second) == (2.0, 1.0, 0.1)
    assert (sample.connections, sample.players, sample.games) == (3, 2, 1)
    assert sample.request_p99 == 0.05 and sample.store_p99 is None
    # Counters that start again (a new owner) give no negative rates; the span keeps 3 samples.
    for at in (120.0, 130.0, 140.0):
        history.sample(reading(at, moves=0))
    columns = history.as_json()
    assert columns["at"] == [120.0, 130.0, 140.0] and columns["moves_per_second"] == [0.0, 0.0, 0.0]
    assert set(columns) >= {
        "connections",
        "players",
        "games",
        "request_p99",
        "store_p99",
        "errors_per_second",
    }
