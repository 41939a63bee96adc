"""``python -m tests.fuzz [--frames N] [--seed S] [--protocol NAME ...]``: fuzz a fresh server,
print the counts per class and outcome and every oracle failure; exit 1 on any failure."""

from __future__ import annotations

import argparse
import sys

from tests.fuzz.driver import PROTOCOLS, fuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--frames", type=int, default=100_000, help="cases per protocol (default 100000)")
    parser.add_argument("--seed", type=int, default=None, help="replay a run (default: a new random seed)")
    parser.add_argument(
        "--protocol",
        action="append",
        choices=PROTOCOLS,
        help="fuzz only this protocol (repeatable; default all)",
    )
    parser.add_argument("--server-flag", action="append", default=[], help="an extra `parlour serve` flag")
    args = parser.parse_args(argv)
    report = fuzz(args.seed, args.frames, args.protocol or PROTOCOLS, args.server_flag, progress=True)
    print("\n".join(report.lines()))
    return 1 if report.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
