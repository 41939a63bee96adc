"""Command line: ``parlour serve``. Every setting has a flag (see parlour.settings)."""

from __future__ import annotations

import argparse
import asyncio
import gc
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
    sim = commands.add_parser(
        "simulate",
        help="play robot games in-process and compare the robots",
        description="Play robot games in-process (no network) and print wins per seat with 95% "
        "confidence intervals, mean game length and decision times per robot.",
    )
    sim.add_argument("--game", default="apologies", help="game to play (default: apologies)")
    sim.add_argument("--mode", choices=["STANDARD", "ADULT"], default="STANDARD", help="Apologies mode")
    sim.add_argument("--seats", default="search,greedy,greedy,greedy", help="robot per seat, comma-separated")
    sim.add_argument("--games", type=int, default=200, help="number of games (default: 200)")
    sim.add_argument("--seed", type=int, default=7, help="base random seed (default: 7)")
    sim.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    sim.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    sim.add_argument("--quiet", action="store_true", help="no progress bar")
    sim.add_argument(
        "--fixed-seats",
        action="store_true",
        help="keep the line-up in its seats (default: rotate every game)",
    )
    db = commands.add_parser(
        "db",
        help="check, export, import or back up a store",
        description="Operate on a store (a file or a PostgreSQL database), also while a server is serving from it.",
    )
    store = argparse.ArgumentParser(add_help=False)  # --store, shared by every db command
    store.add_argument(
        "--store",
        default=_DEFAULTS.store,
        metavar="PATH",
        help=f"the store's file or postgresql:// URL (default: the store setting's default, {_DEFAULTS.store})",
    )
    actions = db.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    check = actions.add_parser(
        "check", parents=[store], help="integrity check and row counts (exit 1: a problem)"
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    for name, does, where in (
        ("export", "write every row as JSON lines", "the file to create (- for stdout)"),
        ("import", "read an export into a new, empty store", "the export (- for stdin)"),
        ("backup", "copy the whole store consistently, even while it is in use", "the file to create"),
    ):
        actions.add_parser(name, parents=[store], help=does).add_argument("file", metavar="FILE", help=where)
    return parser


def _simulate(args: argparse.Namespace) -> int:
    from parlour.simulate import progress_bar, simulate

    seats = [name.strip() for name in args.seats.split(",") if name.strip()]
    options: dict[str, Any] = {}
    if args.game == "apologies":
        from parlour.games.apologies.model import Mode

        options["mode"] = Mode(args.mode)
    if args.games < 1:
        print("parlour: --games must be at least 1", file=sys.stderr)
        return 2
    try:
        report = simulate(
            args.game,
            seats,
            args.games,
            args.seed,
            options,
            workers=max(1, args.workers),
            progress=None if args.quiet else progress_bar(),
            rotate=not args.fixed_seats,
        )
    except (KeyError, ValueError) as error:
        print(f"parlour: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json is not None:
        args.json.write_text(report.to_json())
    return 0


#: The cyclic garbage collector's thresholds for a server (CPython's defaults: 700, 10, 10).
GC_THRESHOLDS = (50_000, 20, 100)


def _tune_gc() -> None:
    """Collect garbage less often: a busy server allocates a great many short-lived containers
    (moves, events, effects) while it holds many long-lived records, and with the defaults the
    collector spent about a sixth of a loaded server's time walking them. What exists once the
    server is set up (modules, tables) is frozen out of collections altogether."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _run(main: Coroutine[Any, Any, int]) -> int:
    """Run on uvloop where it is installed (a faster event loop), else on asyncio's own."""
    _tune_gc()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but optional in principle
        return asyncio.run(main)
    return uvloop.run(main)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "db":
        from parlour.dbcli import run

        return run(args)
    if args.command == "serve":
        overrides = {field.name: getattr(args, field.name) for field in fields(Settings)}
        try:
            settings = load_settings(args.config, overrides=overrides)
        except SettingError as error:
            print(f"parlour: {error}", file=sys.stderr)
            return 2
        from parlour.jsonlog import configure_logging

        configure_logging(settings.log_level, settings.log_format)
        # websockets logs every plain HTTP answer as a "rejected" handshake: not news here.
        logging.getLogger("websockets").setLevel(logging.WARNING)
        from parlour.app import run_server
        from parlour.storage import StoreRefused

        try:
            return _run(run_server(settings))
        except StoreRefused as error:
            print(f"parlour: {error}", file=sys.stderr)
            return 1
        except OSError as error:
            print(
                f"parlour: cannot listen on {settings.host}:{settings.port}: {error.strerror}",
                file=sys.stderr,
            )
            return 1
    return 2  # pragma: no cover - argparse requires a command
