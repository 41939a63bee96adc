"""Timestamps as the wire writes them, formatted with a second's text kept and the milliseconds'
looked up: the same text as ``datetime`` gives, across seconds and back."""

from __future__ import annotations

from datetime import UTC, datetime
from random import Random

from parlour.protocols.apologies_ws.render import timestamp, timestamp_bytes


def _reference(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S},{moment.microsecond // 1000:03d}+0000"


def test_timestamps_are_those_datetime_writes() -> None:
    rng = Random(9)
    values = [1_800_000_000.0, 1_800_000_000.9995, 1_800_000_000.9999996, 1_800_000_001.0004999, 0.0, -0.25]
    values += [1_800_000_000 + rng.random() * 5 for _ in range(2_000)]  # a few seconds, back and forth
    values += [rng.uniform(0, 4e9) for _ in range(500)]
    for seconds in values:
        assert timestamp(seconds) == _reference(seconds), seconds
        assert timestamp_bytes(seconds) == _reference(seconds).encode()
