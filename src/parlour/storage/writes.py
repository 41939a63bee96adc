"""One commit's records written table by table, as storage/tables.py declares them.

The records of a commit are gathered by table first (one dict lookup of the record's type),
then each table's rows go in few multi-row statements, tables in their declared order (parents
first); a commit's moves go as runs, a row a game (storage/runs.py). A game whose row says it
ended loses its snapshot (one the same commit wrote included): a snapshot is for restarting a
live game. Within one commit, the rows of one key end as the same upserts and deletes run one after
the other would leave them: the last values, but a ``kept`` column as first written, and a
delete then an upsert leaves the upserted row.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from parlour.storage.migrations import FINISHED_STATES
from parlour.storage.records import ASYNC_FINISHED_STATUSES, AccountErased, AccountSeen, Record, SeatRow
from parlour.storage.runs import pack
from parlour.storage.tables import (
    DECLARED,
    DELETE,
    GAME_SEATS,
    GAMES,
    INSERT,
    MOVE_RUNS,
    PACK,
    SNAPSHOTS,
    WRITES,
    Table,
)

__all__ = ["MAX_VALUES", "STATEMENTS", "Cursor", "insert_rows", "write_records"]

#: Bound values per statement, under SQLite's oldest default limit (999).
MAX_VALUES = 990

_STATE = GAMES.columns.index("state")
_SEATS = GAMES.columns.index("seats")
_seats = msgspec.json.Decoder(list[SeatRow])


class Cursor(Protocol):
    """The part of a DB-API cursor the statements use, with ``?`` parameters on both backends."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def insert_rows(
    cur: Cursor, head: str, rows: Sequence[Sequence[Any]], tail: str = "", grouped: bool = True
) -> None:
    """Many rows in few statements (``INSERT ... VALUES (...), (...)``, portable SQL), or with
    ``grouped=False`` one statement per row, prepared once (``executemany``).

    Grouped: the writer thread lets go of the interpreter lock for every statement it steps,
    and must wait for it again each time while the event loop is busy: one statement per group
    of rows, rather than one per row, is what keeps a commit short under load.

    One row per statement: what SQLite's writer process does, which shares no interpreter lock.
    Inside a transaction, a statement that writes many rows (and may fail half-way, as any
    insert checked against a key or a foreign key may) needs SQLite's statement journal, a copy
    of every page it changes, kept to undo that statement alone: about one page per game of the
    commit, spilled to a temporary file past 64 KiB (two more writes a page). A one-row statement
    needs none. In-process, commits like those of 100 clients (148 moves of 37 games) took 17%
    less CPU time (5.8 against 4.8 us a move) and half the system calls.
    """
    if not rows:
        return
    width = len(rows[0])
    if not grouped:
        cur.executemany(_statement(head, tail, width, 1), rows)
        return
    group = max(1, MAX_VALUES // width)
    for start in range(0, len(rows), group):
        chunk = rows[start : start + group]
        cur.execute(_statement(head, tail, width, len(chunk)), [value for row in chunk for value in row])


@functools.lru_cache(maxsize=1024)
def _statement(head: str, tail: str, width: int, count: int) -> str:
    """The statement of ``count`` rows of ``width`` values: a commit's batches come in few
    sizes, so each is built once rather than at every commit."""
    one = "(" + ", ".join("?" * width) + ")"
    return head + ", ".join([one] * count) + tail


class _Pending:
    """One table's rows of a commit."""

    __slots__ = ("gone", "inserted", "upserted")

    def __init__(self) -> None:
        self.inserted: list[tuple[Any, ...]] = []
        # Upserted rows by key, as the commit leaves them (None: deleted): one multi-row upsert
        # may not touch a row twice (PostgreSQL refuses it).
        self.upserted: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        # The keys the commit deleted at some point: deleted first, then what remains is written.
        self.gone: set[tuple[Any, ...]] = set()


def write_records(cur: Cursor, records: Sequence[Record], grouped: bool = True) -> None:
    """Write ``records`` (no Fence: the caller checks those) in the open transaction, rows
    grouped into multi-row statements or not (``insert_rows``)."""
    pending: dict[Table[Any], _Pending] = {}
    apart: dict[type[Any], list[Any]] = {}
    for record in records:
        write = WRITES.get(type(record))
        if write is None:
            if type(record) not in STATEMENTS:
                raise TypeError(f"the store writes no {type(record).__name__}")
            apart.setdefault(type(record), []).append(record)
            continue
        table, action, values = write
        rows = pending.get(table)
        if rows is None:
            rows = pending[table] = _Pending()
        row = values(record)
        if action in (INSERT, PACK):
            rows.inserted.append(row)
        elif action == DELETE:
            rows.upserted[row] = None
            rows.gone.add(row)
        else:
            key = row[: len(table.key)]
            first = rows.upserted.pop(key, None)
            if first is not None and table.kept_index:
                kept = table.kept_index
                row = tuple(first[i] if i in kept else value for i, value in enumerate(row))
            rows.upserted[key] = row
    for table in DECLARED:
        found = pending.get(table)
        if found is None:
            continue
        if found.gone:
            cur.executemany(table.delete, sorted(found.gone))
        if found.upserted:
            upserted = [row for row in found.upserted.values() if row is not None]
            insert_rows(cur, table.insert, upserted, table.upsert, grouped)
            if table is GAMES:
                _ended(cur, upserted, pending.get(SNAPSHOTS), grouped)
        if found.inserted:
            # The moves' values become runs: a row a game (and stretch of consecutive moves).
            inserted = pack(found.inserted) if table is MOVE_RUNS else found.inserted
            insert_rows(cur, table.insert, inserted, grouped=grouped)
    # After the tables' rows: an account this commit created is there to update, and its own
    # chat lines are renamed too.
    for kind, statements in STATEMENTS.items():
        found_apart = apart.get(kind)
        if found_apart:
            statements(cur, found_apart)


def _seen(cur: Cursor, seen: list[AccountSeen]) -> None:
    """Accounts' last_seen alone (records.AccountSeen); an account not stored is not written."""
    cur.executemany(
        "UPDATE accounts SET last_seen = ? WHERE id = ?", [(row.last_seen, row.account_id) for row in seen]
    )


def _erased(cur: Cursor, gone: list[AccountErased]) -> None:
    for account in gone:
        _erase(cur, account)


def _erase(cur: Cursor, gone: AccountErased) -> None:
    """A deleted account's traces (records.AccountErased); its finished games are updated only
    where they are still stored and still over (never brought back, nor a live game changed)."""
    cur.execute("UPDATE chat SET sender_name = ? WHERE sender = ?", (gone.alias, gone.account_id))
    cur.execute("UPDATE game_results SET name = ? WHERE account_id = ?", (gone.alias, gone.account_id))
    cur.execute("DELETE FROM notifications WHERE account_id = ?", (gone.account_id,))
    if gone.games:
        over = ", ".join("?" for _ in ASYNC_FINISHED_STATUSES)
        cur.executemany(
            f"UPDATE async_games SET doc = ? WHERE id = ? AND status IN ({over})",
            [(doc, game_id, *ASYNC_FINISHED_STATUSES) for game_id, doc in gone.games],
        )


#: Records that are no row of a table, written by statements of their own after the tables'
#: rows (storage/tables.py WRITES holds the rows'), in this order.
STATEMENTS: dict[type[Any], Callable[[Cursor, list[Any]], None]] = {
    AccountSeen: _seen,
    AccountErased: _erased,
}


def _ended(
    cur: Cursor, games: list[tuple[Any, ...]], snapshots: _Pending | None, grouped: bool = True
) -> None:
    """For each game that ended: who sat at it (game_seats, written again with its game's row),
    and no snapshot any more (not even one of this commit, written after the games)."""
    ended = [row for row in games if row[_STATE] in FINISHED_STATES]
    if not ended:
        return
    ids = [row[0] for row in ended]
    marks = ", ".join("?" for _ in ended)
    if snapshots is not None:
        for game_id in ids:
            snapshots.upserted.pop((game_id,), None)
    cur.execute(f"DELETE FROM {SNAPSHOTS.name} WHERE game_id IN ({marks})", ids)
    cur.execute(f"DELETE FROM {GAME_SEATS.name} WHERE game_id IN ({marks})", ids)
    seats = [
        (row[0], index, seat.handle, int(seat.robot))
        for row in ended
        for index, seat in enumerate(_seats.decode(row[_SEATS]))
    ]
    insert_rows(cur, GAME_SEATS.insert, seats, grouped=grouped)
