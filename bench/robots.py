"""Robot strength and speed: each game's strongest robot against its greedy baseline.

- Apologies (STANDARD and ADULT): ``rollout`` against three ``greedy`` (RewardV1) robots, target
  >= 40% (parity 25%), p99 decision <= 20 ms;
- Fish: ``alphabeta`` against ``greedy`` in 2-player games, target >= 75%, p99 <= 100 ms;
- Tsuro: ``lookahead`` against two ``greedy`` robots, target >= 45% (parity 33%), p99 <= 100 ms.

Each line prints the win rate with its 95% confidence interval, the greedy robot's own rate in a
greedy-only field measured in the same run (the baseline: parity, up to noise), the ratio to
parity, and decision times (wall clock, so a loaded machine shows in the p99). The line-up rotates
every game, so each robot plays every seat equally often. The default seed was not used to tune
the robots.

    python bench/robots.py [--games 1000] [--fish-games 500] [--workers 2] [--only apologies] [--mode ADULT]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from parlour.games.apologies.model import Mode
from parlour.simulate import simulate

#: (label, game, line-up, options, target win rate, p99 target in ms)
RUNS: list[tuple[str, str, list[str], dict[str, Any], float, float]] = [
    (
        "apologies STANDARD",
        "apologies",
        ["rollout", "greedy", "greedy", "greedy"],
        {"mode": Mode.STANDARD},
        0.40,
        20,
    ),
    (
        "apologies ADULT",
        "apologies",
        ["rollout", "greedy", "greedy", "greedy"],
        {"mode": Mode.ADULT},
        0.40,
        20,
    ),
    ("fish", "fish", ["alphabeta", "greedy"], {}, 0.75, 100),
    ("tsuro", "tsuro", ["lookahead", "greedy", "greedy"], {}, 0.45, 100),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="Apologies games per mode")
    parser.add_argument("--fish-games", type=int, default=500, help="Fish and Tsuro games")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", choices=["apologies", "fish", "tsuro"], help="one game only")
    parser.add_argument("--mode", choices=["STANDARD", "ADULT"], help="one Apologies mode only")
    args = parser.parse_args()
    for label, game, seats, options, target, p99_target in RUNS:
        if (args.only and game != args.only) or (
            args.mode and options.get("mode", Mode(args.mode)).value != args.mode
        ):
            continue
        games = args.games if game == "apologies" else args.fish_games
        baseline = simulate(game, ["greedy"] * len(seats), games, args.seed, options, workers=args.workers)
        report = simulate(game, seats, games, args.seed, options, workers=args.workers)
        best = report.by_seat[0]
        timing = {t.robot: t for t in report.timing}[seats[0]]
        parity = 1 / len(seats)
        print(
            f"{label:18s} {seats[0]} wins {best.win_rate:6.1%} [{best.ci_low:.1%}, {best.ci_high:.1%}] of {games} "
            f"vs {len(seats) - 1} greedy (parity {parity:.0%}; greedy in a greedy field "
            f"{baseline.by_seat[0].win_rate:.1%}); ratio to parity {best.win_rate / parity:.2f}x; "
            f"decision median {timing.median_ms:.3f} ms p99 {timing.p99_ms:.2f} ms; "
            f"target >= {target:.0%} and p99 <= {p99_target:.0f} ms",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
