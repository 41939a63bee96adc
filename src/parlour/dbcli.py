"""``parlour db``: the operator's commands on a store: check, export, import, backup.

Each takes the parsed arguments of its subcommand and returns the exit status: 0 when it did
its work, 1 when it could not (the reason on one line of stderr, no traceback), 2 when the
command line cannot name a store. They may run beside a server serving from the same store:
the SQLite store is in WAL mode and PostgreSQL reads from a snapshot, so they read, and back
up, while the server writes. ``--store`` is a file path or a ``postgresql://`` URL; the backup
of a PostgreSQL store is an SQLite file with every row of one snapshot (which opens as a store
or imports back into PostgreSQL through an export), ``pg_dump`` being the database's own tool.

An export is JSON lines, one row each: ``{"kind": KIND, "fields": {...}}``, in this order:
``player``, ``game``, ``move`` (the Apologies, Fish and Tsuro tables), then ``account``,
``async_game``, ``async_turn``, ``rating``, ``chat``, ``relation``, ``report``, ``device``,
``notification`` (the /async protocol's), ``audit`` (what admins did) and ``meta`` (values kept in the store's metadata,
except the store's own version and heartbeat). Bytes (the /async games' and turns' documents,
the push notifications' payloads) are base64 text. The row's fields are nested rather than spread
beside ``kind`` because a move row has a ``kind`` field of its own (a move or a seat removed).

**An export must be kept as private as the store itself**: it holds every account's password
hash, the players' chat, reports and device tokens and, in its ``meta`` rows, the secret that signs session tokens (whoever has it can sign
a token for any account). An import brings that secret along, so tokens issued before stay valid.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

import msgspec

from parlour.accounts.moderation import ADMIN, audit_id
from parlour.storage import EXPORT_KINDS, NO_STORE, AuditRow, Record, Store, StoreError, is_url, open_store

__all__ = ["backup", "check", "export", "import_", "role", "run"]

#: The kinds of rows an export holds, in the order it writes them, and their records.
ROWS: dict[str, type[Record]] = EXPORT_KINDS
KINDS = tuple(ROWS)
#: How the summaries name each kind: one, many.
NAMES = {
    "player": ("player", "players"),
    "game": ("game", "games"),
    "move": ("move", "moves"),
    "game_snapshot": ("game snapshot", "game snapshots"),
    "account": ("account", "accounts"),
    "async_game": ("async game", "async games"),
    "async_turn": ("async turn", "async turns"),
    "rating": ("rating", "ratings"),
    "chat": ("chat line", "chat lines"),
    "relation": ("relation", "relations"),
    "report": ("report", "reports"),
    "device": ("device", "devices"),
    "notification": ("notification", "notifications"),
    "audit": ("audit record", "audit records"),
    "game_result": ("game result", "game results"),
    "meta": ("metadata value", "metadata values"),
}
#: The FILE argument that means stdout (export) or stdin (import).
STDIO = "-"

Command = Callable[[argparse.Namespace], int]


class Line(msgspec.Struct, frozen=True):
    """One line of an export."""

    kind: str
    fields: dict[str, Any]


class _Stop(Exception):
    """Ends a command with one line on stderr and an exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def run(args: argparse.Namespace) -> int:
    """Run ``parlour db <command>``."""
    commands: dict[str, Command] = {"check": check, "export": export, "import": import_, "backup": backup}
    return commands[args.db_command](args)


def _guarded(command: Command) -> Command:
    """Turn a command's expected failures into one ``parlour: ...`` line and an exit status."""

    @functools.wraps(command)
    def guarded(args: argparse.Namespace) -> int:
        try:
            status: int = command(args)
        except _Stop as stop:
            print(f"parlour: {stop}", file=sys.stderr)
            return stop.status
        except StoreError as error:  # refused, or a read or write that failed
            print(f"parlour: {error}", file=sys.stderr)
            return 1
        return status

    return guarded


def _open(location: str, *, create: bool = False) -> Store:
    """The store at ``location``; it must exist unless ``create`` (an import makes a new one)."""
    if location == NO_STORE:
        raise _Stop(f"--store {NO_STORE} keeps nothing on disk: name a store file", 2)
    if not create and not is_url(location) and not Path(location).exists():
        # Opening would create an empty store: no use to check, export or back up. (A database
        # is the operator's to create; opening one only adds the tables it lacks.)
        raise _Stop(f"{location}: no such store")
    # A tool runs beside the server as well: it reads what the server's writer has applied.
    store = open_store(location, redo="try")
    assert store is not None  # only NO_STORE opens nothing
    return store


def _counts(counts: dict[str, int]) -> str:
    named = []
    for kind in KINDS:
        count = counts.get(kind, 0)
        one, many = NAMES[kind]
        named.append(f"{count} {one if count == 1 else many}")
    return ", ".join(named)


# ---------------------------------------------------------------------------------------------
# check


def _report_lines(location: str, report: dict[str, Any]) -> list[str]:
    counts: dict[str, int] = report["counts"]
    states = ", ".join(f"{state} {count}" for state, count in report["games_by_state"].items())
    statuses = ", ".join(f"{status} {count}" for status, count in report["async_games_by_status"].items())
    return [
        f"store: {location} (schema version {report['schema_version']})",
        *(f"integrity: {line}" for line in report["integrity"]),
        f"foreign key problems: {report['foreign_key_problems']}",
        f"games with missing moves: {report['games_with_missing_moves']}",
        f"snapshots ahead of their moves: {report['snapshots_ahead_of_moves']}",
        f"players: {counts['players']}",
        f"games: {counts['games']}" + (f" ({states})" if states else ""),
        # Moves stored in runs (schema version 11) and, from before it, in rows of their own.
        f"moves: {counts['moves']} ({counts['move_runs']} runs)",
        f"game snapshots: {counts['game_snapshots']}",
        f"game seats: {counts['game_seats']}",
        f"accounts: {counts['accounts']}",
        f"async games: {counts['async_games']}" + (f" ({statuses})" if statuses else ""),
        f"async turns: {counts['async_turns']}",
        f"ratings: {counts['ratings']}",
        f"chat lines: {counts['chat']}",
        f"relations: {counts['relations']}",
        f"reports: {counts['reports']}",
        f"devices: {counts['devices']}",
        f"notifications: {counts['notifications']}",
        f"audit records: {counts['audit']}",
        f"game results: {counts['game_results']}",
        "ok" if report["ok"] else "NOT OK: see the lines above",
    ]


@_guarded
def check(args: argparse.Namespace) -> int:
    """Print the store's integrity check and counts; 1 when it found a problem."""
    store = _open(args.store)
    try:
        report = store.check()
    finally:
        store.close()
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        print("\n".join(_report_lines(store.location, report)))
    return 0 if report["ok"] else 1


# ---------------------------------------------------------------------------------------------
# export


def _write_rows(store: Store, out: IO[str]) -> dict[str, int]:
    counts = dict.fromkeys(KINDS, 0)
    for kind, fields in store.export():
        out.write(msgspec.json.encode(Line(kind, fields)).decode())
        out.write("\n")
        counts[kind] = counts.get(kind, 0) + 1
    out.flush()
    return counts


@_guarded
def export(args: argparse.Namespace) -> int:
    """Write every row of the store as JSON lines to FILE (``-``: stdout)."""
    store = _open(args.store)
    try:
        if args.file == STDIO:
            try:
                counts = _write_rows(store, sys.stdout)
            except OSError as error:  # e.g. a closed pipe
                raise _Stop(f"cannot write the export: {error.strerror or error}") from None
            # The rows have stdout to themselves.
            print(f"exported {_counts(counts)}", file=sys.stderr)
            return 0
        target = Path(args.file)
        try:
            # "x": an export never overwrites a file (it could be the store itself).
            out = target.open("x", encoding="utf-8")
        except FileExistsError:
            raise _Stop(f"{target} exists: an export never overwrites a file") from None
        except OSError as error:
            raise _Stop(f"{target}: {error.strerror}") from None
        try:
            with out:
                counts = _write_rows(store, out)
        except BaseException as error:
            # A partial export must not pass for a whole one.
            target.unlink(missing_ok=True)
            if isinstance(error, OSError):
                raise _Stop(f"{target}: {error.strerror}") from None
            raise
    finally:
        store.close()
    print(f"exported {_counts(counts)} to {target}")
    return 0


# ---------------------------------------------------------------------------------------------
# import


def _read_rows(name: str, lines: IO[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    decoder = msgspec.json.Decoder(Line)
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            line = decoder.decode(text)
        except msgspec.DecodeError as error:
            raise _Stop(f"{name} line {number}: not a row of an export ({error})") from None
        if line.kind not in ROWS:
            raise _Stop(f"{name} line {number}: unknown kind of row {line.kind!r}")
        try:
            # The store checks the rows too, but only here is it known which line was wrong.
            msgspec.convert(line.fields, ROWS[line.kind])
        except msgspec.ValidationError as error:
            raise _Stop(f"{name} line {number}: the {line.kind} does not fit: {error}") from None
        yield line.kind, line.fields


@_guarded
def import_(args: argparse.Namespace) -> int:
    """Read an export (FILE, ``-``: stdin) into a store that has no rows yet."""
    name = "stdin" if args.file == STDIO else args.file
    try:
        source = sys.stdin if args.file == STDIO else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as error:
        raise _Stop(f"{args.file}: {error.strerror}") from None
    location: str = args.store
    new = location != NO_STORE and not is_url(location) and not Path(location).exists()
    imported = False
    try:
        store = _open(location, create=True)
        try:
            counts = store.import_rows(_read_rows(name, source))
            imported = True
        except UnicodeDecodeError as error:
            raise _Stop(f"{name}: not UTF-8 text ({error.reason})") from None
        except ValueError as error:  # the store has rows already
            raise _Stop(f"{location}: {error}") from None
        finally:
            store.close()
    finally:
        if source is not sys.stdin:
            source.close()
        if new and not imported:
            # The failed import made this store: leave no empty store behind to be mistaken for it.
            with suppress(OSError):
                Path(location).unlink()
    print(f"imported {_counts(counts)} into {location}")
    return 0


# ---------------------------------------------------------------------------------------------
# backup


@_guarded
def backup(args: argparse.Namespace) -> int:
    """Copy the whole store to FILE, consistently, even while a server is writing to it."""
    store = _open(args.store)
    try:
        store.backup(args.file)
    except ValueError as error:  # the target exists
        raise _Stop(str(error)) from None
    finally:
        store.close()
    print(f"backed up {store.location} to {args.file}")
    return 0


# ---------------------------------------------------------------------------------------------
# admin grant / revoke


@_guarded
def role(args: argparse.Namespace) -> int:
    """``parlour admin grant|revoke NAME``: set the account's role in the store, with an audit
    record of the change in the same transaction. A running server reads the role from the
    store at each admin request, so the change holds at once, on every node."""
    granted = args.admin_command == "grant"
    store = _open(args.store)
    try:
        now = time.time()
        audit = AuditRow(
            id=audit_id(now),
            at=now,
            actor="cli",
            action="grant" if granted else "revoke",
            target=args.name,
            reason=args.reason,
            detail=msgspec.json.encode({"role": ADMIN if granted else ""}).decode(),
        )
        account = store.set_role(args.name, ADMIN if granted else "", audit)
    finally:
        store.close()
    if account is None:
        raise _Stop(f"no account is named {args.name!r} in {args.store}")
    print(f"{account.name} is {'now an admin' if granted else 'no longer an admin'}")
    return 0
