"""The ground every SQL store stands on: the backend's hooks, and running statements.

A backend (storage/sqlite.py, storage/postgres.py) supplies its connection (a DB-API cursor whose
parameters are ``?``), how a write transaction begins, the table listing and locking of its
migrations, its integrity check and its backup. Here too are the few ways the queries of
storage/sql.py, storage/async_queries.py and storage/operations.py reach it: one write
transaction, one read, rows loaded as records; any driver error comes out a StoreFailure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from parlour.storage.base import StoreFailure
from parlour.storage.records import Record
from parlour.storage.tables import DECLARED, META, Table
from parlour.storage.writes import Cursor, write_records

__all__ = ["TABLES", "SQLBase", "one_line"]

R = TypeVar("R", bound=msgspec.Struct)

#: The tables of rows (all but the metadata), parents first: ``check`` counts them, an import
#: wants them empty.
TABLES = tuple(table.name for table in DECLARED if table is not META)


class SQLBase:
    """The store's connection and its hooks, and how statements are run on it."""

    location: str
    #: What the writer process opens (``python -m parlour.storage.pipe``): the file's path, or
    #: the full URL, password included (``location`` hides it).
    connect_to: str
    sync: str
    #: The backend driver's exceptions: any of them in a read or a commit is a StoreFailure.
    errors: tuple[type[Exception], ...] = ()
    #: Opens a write transaction (SQLite's takes the write lock at once: no deadlock later).
    BEGIN_WRITE = "BEGIN"
    #: Opens a read-only transaction that reads one snapshot of every table (export).
    BEGIN_SNAPSHOT = "BEGIN"
    #: Reads the meta values of a commit's fences in a write transaction, in one statement
    #: (SQLite's lock is the whole database); ``{keys}`` becomes one ``?`` per key.
    FENCE_READ = "SELECT key, value FROM parlour_meta WHERE key IN ({keys})"
    #: How settled_meta reads a commit mark on a database server, in a transaction that first
    #: says how long to wait for a commit still under way there. Empty: a plain read (an
    #: SQLite commit is over, one way or the other, once its call returned).
    MARK_READ = "SELECT value FROM parlour_meta WHERE key = ?"
    MARK_WAIT = ""
    #: What the backend's databases are called in messages ("an SQLite database").
    DATABASE = "a database"
    #: Whether a commit writes its rows in multi-row statements (writes.insert_rows).
    group_rows = True

    def cursor(self) -> Cursor:
        raise NotImplementedError

    def process_writer(self) -> tuple[str, str] | None:
        """Every SQL backend can commit from a writer process: it opens ``connect_to`` there."""
        return self.connect_to, self.sync

    def redo_log(self) -> tuple[str, str, Path] | None:
        return None

    def in_transaction(self) -> bool:
        raise NotImplementedError

    def _tables(self, cur: Cursor) -> set[str]:
        """The names of the tables in the store's database (or schema)."""
        raise NotImplementedError

    def _lock_for_migration(self, cur: Cursor) -> None:
        """Inside the migrating transaction: keep any other opener out until it ends."""

    def _integrity(self) -> tuple[list[str], int]:
        """The backend's own integrity check ("ok" when sound) and its foreign key problems."""
        raise NotImplementedError

    def checkpoint(self) -> None:
        """Nothing to fold for a backend that keeps no separate log file of its own."""

    def backup(self, target: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @property
    def schema_version(self) -> int:
        rows = self._read("SELECT value FROM parlour_meta WHERE key = 'schema_version'")
        return int(rows[0][0])

    def _transaction(self, work: Any, *args: Any) -> Any:
        """Run ``work(cursor, *args)`` in one write transaction; any failure is a StoreFailure."""
        try:
            cur = self.cursor()
            cur.execute(self.BEGIN_WRITE)
            try:
                result = work(cur, *args)
                cur.execute("COMMIT")
            except BaseException:
                if self.in_transaction():
                    cur.execute("ROLLBACK")
                raise
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {one_line(error)}") from error
        return result

    @staticmethod
    def _write(cur: Cursor, records: Sequence[Record], grouped: bool = True) -> None:
        write_records(cur, records, grouped)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            rows: list[Any] = self.cursor().execute(sql, params).fetchall()
            return rows
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {one_line(error)}") from error

    def _load(self, table: Table[R], rest: str = "", params: Sequence[Any] = ()) -> list[R]:
        """The records of ``table`` that ``rest`` selects (its WHERE, ORDER BY and LIMIT)."""
        rows = self._read(f"SELECT {table.select} FROM {table.name} {rest}", params)
        return [table.load(row) for row in rows]

    def _load_rows(self, table: Table[R], sql: str, params: Sequence[Any] = ()) -> list[R]:
        """The records of ``table`` that a whole statement of its columns reads."""
        return [table.load(row) for row in self._read(sql, params)]


def one_line(error: BaseException) -> str:
    """A driver's message on one line (PostgreSQL's add DETAIL and HINT lines)."""
    return " ".join(str(error).split())
