"""Robot strength and speed: ``search`` against three ``greedy`` (RewardV1) robots, both modes.

Prints search's win rate with its 95% confidence interval next to parity, greedy's own rate in a
greedy-only field measured in the same run (the baseline), and decision times. The line-up rotates
every game, so each robot plays every seat equally often.

    python bench/robots.py [--games 2000] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys

from parlour.games.apologies.model import Mode
from parlour.simulate import simulate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games per mode and line-up")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for mode in Mode:
        options = {"mode": mode}
        baseline = simulate("apologies", ["greedy"] * 4, args.games, args.seed, options, workers=args.workers)
        report = simulate(
            "apologies",
            ["search", "greedy", "greedy", "greedy"],
            args.games,
            args.seed,
            options,
            workers=args.workers,
        )
        search = report.by_seat[0]
        timing = {t.robot: t for t in report.timing}
        print(
            f"{mode.value:8s} search wins {search.win_rate:6.1%} [{search.ci_low:.1%}, {search.ci_high:.1%}] "
            f"of {args.games} vs 3 greedy (parity 25%; greedy in a greedy field "
            f"{baseline.by_seat[0].win_rate:.1%}); ratio to parity {search.win_rate / 0.25:.2f}x; "
            f"decision median {timing['search'].median_ms:.3f} ms p99 {timing['search'].p99_ms:.2f} ms "
            f"(greedy p99 {timing['greedy'].p99_ms:.2f} ms); target >= 33% and median <= 5 ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
