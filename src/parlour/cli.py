"""Command line: ``parlour serve``. Every setting has a flag (see parlour.settings)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from parlour.settings import ROBOT_CHOICES, SettingError, Settings, load_settings

__all__ = ["build_parser", "main"]

_DEFAULTS = Settings()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parlour", description="A server for turn-based board games.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="start the server",
        description="Start the server. Settings come from defaults, then --config FILE, then "
        "PARLOUR_<NAME> environment variables, then these flags.",
    )
    serve.add_argument("--config", type=Path, help="a TOML file with a [parlour] table of settings")
    for field in fields(Settings):
        default = getattr(_DEFAULTS, field.name)
        kind = {"int": int, "float": float}.get(str(field.type), str)
        serve.add_argument(
            f"--{field.name.replace('_', '-')}",
            dest=field.name,
            type=kind,
            default=None,
            choices=ROBOT_CHOICES if field.name == "robot" else None,
            help=f"(default: {default})",
        )
    return parser


def _run(main: Coroutine[Any, Any, int]) -> int:
    """Run on uvloop where it is installed (a faster event loop), else on asyncio's own."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but optional in principle
        return asyncio.run(main)
    return uvloop.run(main)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        overrides = {field.name: getattr(args, field.name) for field in fields(Settings)}
        try:
            settings = load_settings(args.config, overrides=overrides)
        except SettingError as error:
            print(f"parlour: {error}", file=sys.stderr)
            return 2
        logging.basicConfig(
            level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        from parlour.app import run_server

        try:
            return _run(run_server(settings))
        except OSError as error:
            print(
                f"parlour: cannot listen on {settings.host}:{settings.port}: {error.strerror}",
                file=sys.stderr,
            )
            return 1
    return 2  # pragma: no cover - argparse requires a command
