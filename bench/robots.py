"""Robot strength and speed: each game's strongest robot against its greedy baseline.

- Apologies (STANDARD and ADULT): ``rollout`` against three ``greedy`` (RewardV1) robots, target
  >= 40% (parity 25%), p99 decision <= 20 ms;
- Fish: ``alphabeta`` against ``greedy`` in 2-player games, target >= 75%, p99 <= 100 ms;
- Tsuro: ``lookahead`` against two ``greedy`` robots, target >= 45% (parity 33%), p99 <= 100 ms.

Each run prints the win rate with its 95% confidence interval, the greedy robot's own rate in a
greedy-only field measured in the same run (the baseline: parity, up to noise), the ratio to
parity, and decision times (wall clock, so a loaded machine shows in the p99). The line-up rotates
every game, so each robot plays every seat equally often. The default seed was not used to tune
the robots. A second line gives the decisions' CPU time (the thread's), over a few more games: on
a shared machine the wall clock also counts the time the process waited for a core.

    python bench/robots.py [--games 1000] [--fish-games 500] [--workers 2] [--only apologies] [--mode ADULT]
"""

from __future__ import annotations

import argparse
import sys
import time
from random import Random
from typing import Any

from parlour.games.apologies.model import Mode
from parlour.games.registry import plugin
from parlour.robots.registry import robot
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


def cpu_times(game: str, seats: list[str], options: dict[str, Any], games: int, seed: int) -> list[float]:
    """The first robot's decision times in CPU seconds of its thread (``time.thread_time``),
    sorted: what a decision costs, whatever else the machine is running."""
    rules = plugin(game)
    found: list[float] = []
    for number in range(games):
        rng = Random(seed * 7919 + number)
        lineup = [robot(game, seats[(seat - number) % len(seats)]) for seat in range(len(seats))]
        state = rules.new_game(len(seats), options, rng)
        while rules.outcome(state) is None:
            seat = rules.to_move(state)
            legal = rules.legal_moves(state, seat)
            started = time.thread_time()
            move = lineup[seat].choose(state, seat, legal, rng)
            if lineup[seat].name == seats[0]:
                found.append(time.thread_time() - started)
            state = rules.apply(state, move, rng)
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="Apologies games per mode")
    parser.add_argument("--fish-games", type=int, default=500, help="Fish and Tsuro games")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", choices=["apologies", "fish", "tsuro"], help="one game only")
    parser.add_argument("--mode", choices=["STANDARD", "ADULT"], help="one Apologies mode only")
    parser.add_argument("--cpu-games", type=int, default=30, help="games timed in CPU time")
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
            f"decision median {timing.median_ms:.3f} ms p99 {timing.p99_ms:.2f} ms (wall clock); "
            f"target >= {target:.0%} and p99 <= {p99_target:.0f} ms",
            flush=True,
        )
        cpu = cpu_times(game, seats, options, args.cpu_games, args.seed)
        print(
            f"{label:18s} {seats[0]} CPU time per decision over {args.cpu_games} games ({len(cpu)} decisions): "
            f"median {cpu[len(cpu) // 2] * 1000:.2f} ms p99 {cpu[int(len(cpu) * 0.99)] * 1000:.2f} ms",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
