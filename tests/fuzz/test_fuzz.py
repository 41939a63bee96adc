"""The seeded short run of the frame fuzzer that ``make test`` includes (``make fuzz`` is the
long one): 600 hostile frames per protocol against one real server."""

from __future__ import annotations

from tests.fuzz.driver import PROTOCOLS, fuzz

SEED = 20_161
FRAMES = 600


def test_every_listener_survives_seeded_hostile_frames() -> None:
    report = fuzz(SEED, FRAMES, PROTOCOLS)
    print("\n".join(report.lines()))
    assert all(tally.frames == FRAMES for tally in report.tallies), report.lines()
    assert all(tally.probe_rounds > 0 for tally in report.tallies), "a well-behaved client never got through"
    assert not report.failures(), "\n".join(report.lines())
