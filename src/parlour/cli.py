"""Command line: ``parlour serve``. Every setting has a flag (see parlour.settings)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from parlour.games.registry import GAMES
from parlour.robots.registry import robots
from parlour.settings import CHOICES, HELP, SettingError, Settings, load_settings

__all__ = ["build_parser", "main"]

_DEFAULTS = Settings()


#: The line-up ``parlour simulate`` plays when ``--seats`` is not given: each game's strongest
#: robot against its greedy baseline, as many seats as the game is usually played with.
DEFAULT_SEATS = {
    "apologies": "rollout,greedy,greedy,greedy",
    "fish": "alphabeta,greedy",
    "tsuro": "lookahead,greedy,greedy",
}


def _version() -> str:
    try:
        return version("parlour")
    except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
        return "unknown"


def _setting_help(name: str, default: object) -> str:
    """The flag's sentence, its choices and its default; ``%`` is escaped for argparse."""
    text = HELP.get(name, "")
    if name in CHOICES:
        text += f" One of: {', '.join(CHOICES[name])}."
    shown = "empty" if default == "" else default
    if name == "auth_jwt_key" or name == "notify_webhook_url":
        shown = "empty"  # a secret's default is empty; never echo one from anywhere else
    return f"{text} (default: {shown})".strip().replace("%", "%%")


def _metavar(name: str, kind: str) -> str:
    """What a flag takes, in a word: a port, a number of seconds, a count, a file or some text."""
    if name.endswith("port"):
        return "PORT"
    if name == "store":
        return "FILE|none"
    return {"int": "N", "float": "SECONDS"}.get(kind, "TEXT")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parlour",
        description="A server for online turn-based board games: Apologies, Hey, That's My Fish! and Tsuro.",
    )
    parser.add_argument("--version", action="version", version=f"parlour {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="start the server",
        description="Start the server (http://127.0.0.1:8080/ by default). Settings come from "
        "defaults, then --config FILE, then PARLOUR_<NAME> environment variables, then these flags. "
        "Times are in seconds.",
    )
    serve.add_argument(
        "--config", type=Path, metavar="FILE", help="A TOML file with a [parlour] table of settings."
    )
    for field in fields(Settings):
        default = getattr(_DEFAULTS, field.name)
        kind: Callable[[str], Any] = {"int": int, "float": float}.get(str(field.type), str)
        if field.name == "log_level":
            kind = str.upper  # INFO or info alike, as in a config file
        serve.add_argument(
            f"--{field.name.replace('_', '-')}",
            dest=field.name,
            type=kind,
            default=None,
            choices=CHOICES.get(field.name),
            metavar=None if field.name in CHOICES else _metavar(field.name, str(field.type)),
            help=_setting_help(field.name, default),
        )
    sim = commands.add_parser(
        "simulate",
        help="play robot games in-process and compare the robots",
        description="Play robot games in-process (no network) and print wins per seat with 95% "
        "confidence intervals, mean game length and decision times per robot.",
    )
    sim.add_argument(
        "--game", choices=sorted(GAMES), default="apologies", help="The game to play (default: apologies)."
    )
    sim.add_argument(
        "--mode",
        choices=["STANDARD", "ADULT"],
        default=None,
        help="The Apologies mode (default: STANDARD); the other games have none.",
    )
    sim.add_argument(
        "--seats",
        metavar="ROBOT,ROBOT,...",
        help="The robot of each seat, comma-separated (default: "
        + "; ".join(f"{game}: {seats}" for game, seats in DEFAULT_SEATS.items())
        + "). Robots: "
        + "; ".join(f"{game}: {', '.join(sorted(robots(game)))}" for game in sorted(GAMES))
        + ".",
    )
    sim.add_argument("--games", type=int, default=200, metavar="N", help="Games to play (default: 200).")
    sim.add_argument("--seed", type=int, default=7, metavar="N", help="The base random seed (default: 7).")
    sim.add_argument(
        "--workers", type=int, default=1, metavar="N", help="Worker processes to play on (default: 1)."
    )
    sim.add_argument("--json", type=Path, metavar="FILE", help="Also write the results as JSON to FILE.")
    sim.add_argument("--quiet", action="store_true", help="Draw no progress bar.")
    sim.add_argument(
        "--ladder",
        choices=sorted(GAMES),
        metavar="GAME",
        help="Play every robot of GAME against the others (robots drawn at random for each game, as "
        "many seats as --seats names or the default line-up has) and print an OpenSkill ladder.",
    )
    sim.add_argument(
        "--fixed-seats",
        action="store_true",
        help="Keep the line-up in its seats (default: it turns by one seat every game).",
    )
    # How `parlour serve --workers N` starts each worker (parlour.workers): its settings come on
    # its standard input. Given no help, it is not listed among the commands.
    commands.add_parser("worker", description="A worker of parlour serve --workers: not run by hand.")
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
    admin = commands.add_parser(
        "admin",
        help="grant or revoke an account's admin role",
        description="Give an /async account the admin role, or take it back, in a store (also while a "
        "server is serving from it: the next admin request sees the change). Each is audited.",
    )
    roles = admin.add_subparsers(dest="admin_command", required=True, metavar="COMMAND")
    for name, does in (("grant", "make the account an admin"), ("revoke", "make the admin a player again")):
        role = roles.add_parser(name, parents=[store], help=does)
        role.add_argument("name", metavar="NAME", help="the account's name (any case)")
        role.add_argument("--reason", default="", help="why, for the audit log")
    return parser


def _simulate(args: argparse.Namespace) -> int:
    from parlour.simulate import progress_bar, simulate

    if args.ladder is not None:
        args.game = args.ladder
    seats = [name.strip() for name in (args.seats or DEFAULT_SEATS[args.game]).split(",") if name.strip()]
    options: dict[str, Any] = {}
    if args.game == "apologies":
        from parlour.games.apologies.model import Mode

        options["mode"] = Mode(args.mode or "STANDARD")
    elif args.mode is not None:
        print(f"parlour: --mode is for apologies only; {args.game} has no modes", file=sys.stderr)
        return 2
    if args.games < 1:
        print("parlour: --games must be at least 1", file=sys.stderr)
        return 2
    if args.ladder is not None:
        return _ladder(args, len(seats), options)
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


def _ladder(args: argparse.Namespace, seats: int, options: dict[str, Any]) -> int:
    from parlour.simulate import ladder, progress_bar

    report = ladder(
        args.game,
        seats,
        args.games,
        args.seed,
        options,
        workers=max(1, args.workers),
        progress=None if args.quiet else progress_bar(),
    )
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


def _configure_logging(settings: Settings) -> logging.Handler:
    from parlour.jsonlog import configure_logging

    handler = configure_logging(settings.log_level, settings.log_format)
    # websockets logs every plain HTTP answer as a "rejected" handshake: not news here.
    logging.getLogger("websockets").setLevel(logging.WARNING)
    return handler


def _serve(settings: Settings, server: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run ``server`` (the server, a worker or a supervisor of workers) with the exit codes of
    ``parlour serve``: 1 when the store is refused, the cluster's Redis does not answer as the
    node joins, or the port cannot be bound."""
    from parlour.app import CannotStart
    from parlour.storage import StoreRefused

    try:
        return _run(server())
    except (StoreRefused, CannotStart) as error:
        print(f"parlour: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(
            f"parlour: cannot listen on {settings.host}:{settings.port}: {error.strerror}",
            file=sys.stderr,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "db":
        from parlour.dbcli import run

        return run(args)
    if args.command == "admin":
        from parlour.dbcli import role

        return role(args)
    if args.command == "serve":
        overrides = {field.name: getattr(args, field.name) for field in fields(Settings)}
        try:
            settings = load_settings(args.config, overrides=overrides)
        except SettingError as error:
            print(f"parlour: {error}", file=sys.stderr)
            return 2
        _configure_logging(settings)
        if settings.workers != 1:
            from parlour.workers import Supervisor

            return _serve(settings, Supervisor(settings).run)
        from parlour.app import run_server

        return _serve(settings, lambda: run_server(settings))
    if args.command == "worker":
        from parlour.workers import WorkerLabel, read_spec, serve_worker

        try:
            index, settings = read_spec(sys.stdin.buffer)
        except SettingError as error:
            print(f"parlour: {error}", file=sys.stderr)
            return 2
        _configure_logging(settings).addFilter(WorkerLabel(index))
        from parlour.app import run_server

        return _serve(
            settings, lambda: serve_worker(lambda stop: run_server(settings, stop, reuse_port=True))
        )
    return 2  # pragma: no cover - argparse requires a command
