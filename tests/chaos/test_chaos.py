"""A short chaos run of the real cluster, as part of the suite: a new seed each time (printed,
and kept in the run's report), so that the suite keeps sampling schedules nobody wrote down.
``PARLOUR_CHAOS_SEED`` fixes it to replay one; ``make chaos`` makes the long runs."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pg import missing_reason
from tests.redisserver import redis_binary

#: Its bounds (an answer within two leases and 5 s of the last fault) are the cluster's on this
#: machine, not on one that another test keeps busy: it runs after the parallel phase.
pytestmark = pytest.mark.alone

#: Faults for this long, on this many players and games: a few minutes in all.
MINUTES = 0.4
PLAYERS = 10
GAMES = 5
#: Short games only: every game started must be played to its end after the faults, and an
#: Apologies game of robots and players can take minutes (the long runs play all three).
GAMES_OF = "fish,tsuro"


@pytest.mark.timeout(660)
def test_a_short_chaos_run_keeps_every_promise(tmp_path: Path) -> None:
    reason = missing_reason() or (None if redis_binary() else "redis-server is not installed")
    if reason is not None:
        pytest.skip(reason)
    seed = int(os.environ.get("PARLOUR_CHAOS_SEED") or random.SystemRandom().randrange(1, 1_000_000))
    print(
        f"chaos seed {seed} (replay: PARLOUR_CHAOS_SEED={seed}, or make chaos SEED={seed} MINUTES={MINUTES:g})"
    )
    folder = tmp_path / f"seed-{seed}"
    command = [sys.executable, "-m", "tests.chaos", "--seed", str(seed), "--minutes", str(MINUTES)]
    command += [
        "--players",
        str(PLAYERS),
        "--games",
        str(GAMES),
        "--games-of",
        GAMES_OF,
        "--out",
        str(folder),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[2]
    )
    print(done.stdout[-20000:])
    assert done.returncode == 0, f"seed {seed}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
