"""Command line: ``parlour serve`` and friends. The composition root lives here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parlour", description="A server for turn-based board games.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="start the server")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        print("parlour serve: the websocket server is not built yet", file=sys.stderr)
        return 2
    return 0  # pragma: no cover - argparse rejects unknown commands
