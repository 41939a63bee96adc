"""The seeded short run of the frame fuzzer that ``make test`` includes (``make fuzz`` is the
long one): 2,000 hostile frames per protocol against one real server."""

from __future__ import annotations

import subprocess

import pytest

from tests.fuzz.driver import PROTOCOLS, fuzz
from tests.processes import BIN, clean_env

SEED = 20_161
FRAMES = 2_000


def _hardened() -> bool:
    """Whether this build has issue 16's decoder limits and identity checks (branch ``harden``,
    whose settings include ``requests_per_second``): the oracle expects them, so until they are
    merged the run is expected to find their classes (deep nesting, huge numbers on TCP,
    requests in another connection's player's name)."""
    done = subprocess.run(
        [str(BIN / "parlour"), "serve", "--help"], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    return "--requests-per-second" in done.stdout


# Still failing while its oracle is reconciled with the protocol texts (a Tsuro ejection is a
# state in RECEIVE_GAME_STATE, not a message) and the invalid-UTF-8 wait on TCP is fixed.
@pytest.mark.xfail(reason="oracle and TCP invalid UTF-8 being fixed (branch fuzz2)", strict=False)
def test_every_listener_survives_seeded_hostile_frames() -> None:
    report = fuzz(SEED, FRAMES, PROTOCOLS)
    print("\n".join(report.lines()))
    assert all(tally.frames == FRAMES for tally in report.tallies), report.lines()
    assert all(tally.probe_rounds > 0 for tally in report.tallies), "a well-behaved client never got through"
    assert not report.failures(), "\n".join(report.lines())
