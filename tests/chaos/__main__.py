"""``python -m tests.chaos --seed N --minutes M``: a chaos run of the whole cluster (run.py).

As root, the run goes into a network namespace of its own (``unshare -n``): its loopback is its
alone, so that nothing it does can reach or disturb anything else on the machine. Without root
it runs on the machine's loopback and says so.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tests.chaos.run import chaos

NAMESPACE = "PARLOUR_CHAOS_NAMESPACE"


def _in_namespace() -> None:
    """Run this same command again inside a new network namespace, with its loopback up."""
    inner = " ".join(
        [
            "ip link set lo up &&",
            "exec",
            *(f"'{part}'" for part in [sys.executable, "-m", "tests.chaos", *sys.argv[1:]]),
        ]
    )
    env = {**os.environ, NAMESPACE: "a network namespace of its own (unshare -n)"}
    sys.exit(subprocess.call(["unshare", "-n", "sh", "-c", inner], env=env))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=None, help="the run's seed (random if absent)")
    parser.add_argument("--minutes", type=float, default=3.0, help="how long the faults last")
    parser.add_argument("--players", type=int, default=24)
    parser.add_argument("--games", type=int, default=12, help="games kept in play while the faults last")
    parser.add_argument(
        "--games-of",
        default="",
        help="the game types played, comma-separated (default: fish, tsuro and apologies)",
    )
    parser.add_argument("--out", type=Path, default=None, help="where the run's files go (var/chaos/seed-N)")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 1_000_000)
        sys.argv += ["--seed", str(args.seed)]
    if os.geteuid() == 0 and NAMESPACE not in os.environ and shutil.which("unshare") and shutil.which("ip"):
        _in_namespace()
    folder = args.out or Path("var/chaos") / f"seed-{args.seed}"
    # Stopped from outside (a timeout, ^C in another shell): the run stops what it started.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    kinds = [kind for kind in args.games_of.split(",") if kind] or None
    verdict = chaos(args.seed, args.minutes, folder, args.players, args.games, kinds=kinds)
    print(f"files: {folder}")
    sys.exit(0 if verdict.ok else 1)


if __name__ == "__main__":
    main()
