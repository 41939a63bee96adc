"""The store on PostgreSQL (``--store postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE``).

The driver is psycopg 3, used synchronously: the store interface is synchronous by design (it
runs on the server's store thread or in its writer process, never on the event loop), and
psycopg's blocking calls release the interpreter lock while they wait for the server, as
SQLite's do. asyncpg would need an event loop of its own on that thread for no gain.

The statements are SQLStore's, written once for both backends; this module only connects,
translates the ``?`` parameters to psycopg's ``%s``, and supplies what PostgreSQL does its own
way (listing tables, locking the migrations, the integrity report, the backup).

``sync`` keeps its meaning across backends:

- ``normal``: ``synchronous_commit = local`` for this connection: a commit is in the write-ahead
  log on the primary's disk before it is acknowledged, so it survives the Parlour process, the
  database server (a crash, ``pg_ctl stop -m immediate``) or its machine dying; synchronous
  replicas, if configured, are not waited for. ``off`` would lose the commits of the last
  fraction of a second to a crash of the database server: commits Parlour had acknowledged.
- ``full``: ``synchronous_commit = on``: the same, and the synchronous replicas (if configured)
  hold it too before it is acknowledged.

A lost connection (the database restarted, a network blip) fails the statement that found it;
the next one connects again, so a store that failed works again without a Parlour restart.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import pq

from parlour.storage.base import StoreFailure, StoreRefused
from parlour.storage.sql import TABLES, Cursor, SQLStore

__all__ = ["PostgresStore", "redacted"]

SYNC_COMMIT = {"normal": "local", "full": "on"}
#: The advisory lock that serialises migrations of one database across processes (a number
#: derived from a fixed name, so that it is stable and unlikely to clash with another app's).
MIGRATION_LOCK = int.from_bytes(hashlib.sha256(b"parlour migrations").digest()[:8], "big", signed=True)
CONNECT_TIMEOUT = 10


def redacted(url: str) -> str:
    """The URL without its password: what logs and messages show."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


@functools.lru_cache(maxsize=512)
def _pyformat(sql: str) -> str:
    """A statement with ``?`` parameters as psycopg wants it (``%s``, and ``%`` doubled).

    The shared statements hold no ``?`` other than parameters (no string literals with one).
    """
    return sql.replace("%", "%%").replace("?", "%s")


class _QmarkCursor:
    """A psycopg cursor that takes the shared statements' ``?`` parameters."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _QmarkCursor:
        # Always with a parameter sequence: psycopg reads %% as % only when there are parameters.
        self._cur.execute(_pyformat(sql), tuple(params))
        return self

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> _QmarkCursor:
        self._cur.executemany(_pyformat(sql), params)
        return self

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()


class PostgresStore(SQLStore):
    """A Parlour store in one PostgreSQL database (its current schema, ``public`` by default)."""

    errors = (psycopg.Error,)
    # READ COMMITTED: every statement sees what was committed before it; the upserts and the
    # insert of a secret wait for a concurrent writer of the same row rather than fail.
    BEGIN_WRITE = "BEGIN"
    # One snapshot for every table of an export, and no writes by mistake.
    BEGIN_SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    DATABASE = "a PostgreSQL database"
    # A claim of the key (an UPDATE of the row) waits for this transaction to end; one that
    # committed first is what this read sees (READ COMMITTED re-reads a locked row).
    FENCE_READ = "SELECT key, value FROM parlour_meta WHERE key IN ({keys}) FOR SHARE"
    # A commit whose client connection was cut may still be finishing in its backend: it holds
    # the mark row's lock until it ends, and this read waits for that (a little: a backend
    # that waits for its client is given up on, and the read is tried again).
    MARK_READ = "SELECT value FROM parlour_meta WHERE key = ? FOR SHARE"
    MARK_WAIT = "SET LOCAL lock_timeout = '2s'"

    def __init__(self, url: str, sync: str = "normal") -> None:
        if sync not in SYNC_COMMIT:
            raise ValueError(f"store_sync must be normal or full, not {sync!r}")
        self.url = self.connect_to = url
        self.location = redacted(url)
        self.sync = sync
        self.db: psycopg.Connection[Any] | None = None
        try:
            self._connect()
        except psycopg.Error as error:
            raise StoreRefused(f"{self.location}: cannot open the store: {_one_line(error)}") from None
        try:
            self._migrate()
        except StoreRefused:
            self.close()
            raise
        except psycopg.Error as error:
            self.close()
            raise StoreRefused(f"{self.location}: cannot open the store: {_one_line(error)}") from None

    def _connect(self) -> psycopg.Connection[Any]:
        # Autocommit: the shared code sends BEGIN and COMMIT itself, as it does to SQLite.
        db = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        db.execute(f"SET synchronous_commit = {SYNC_COMMIT[self.sync]}")
        self.db = db
        return db

    def _connection(self) -> psycopg.Connection[Any]:
        db = self.db
        if db is None or db.closed or db.broken:
            if db is not None:
                db.close()
            db = self._connect()
        return db

    # SQLStore's hooks --------------------------------------------------------------------------

    def cursor(self) -> Cursor:
        return _QmarkCursor(self._connection().cursor())

    def in_transaction(self) -> bool:
        db = self.db
        if db is None or db.closed:
            return False
        return db.info.transaction_status != pq.TransactionStatus.IDLE

    def _tables(self, cur: Cursor) -> set[str]:
        rows = cur.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return {row[0] for row in rows}

    def _lock_for_migration(self, cur: Cursor) -> None:
        # Held until the migrating transaction ends: a second opener waits here, then reads the
        # version the first one left.
        cur.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    def _integrity(self) -> tuple[list[str], int]:
        # PostgreSQL enforces every constraint on every statement: there is no file to walk. The
        # check asks the server whether it answers and whether the schema is complete.
        present = self._tables(self.cursor())
        missing = [table for table in (*TABLES, "parlour_meta") if table not in present]
        if missing:
            return [f"missing tables: {', '.join(missing)}"], 0
        return ["ok"], 0

    def backup(self, target: str) -> None:
        """An SQLite file holding every row of one snapshot (``pg_dump`` is the database's own
        tool for a PostgreSQL copy). It opens as a store, or imports back (``parlour db``)."""
        from parlour.storage.sqlite import SQLiteStore

        path = Path(target)
        if path.exists():
            raise ValueError(f"{target} exists: a backup never overwrites a file")
        if not path.parent.is_dir():
            # As SQLite's backup: the folder is the operator's to make (a typo must not make one).
            raise StoreFailure(f"{self.location}: the backup to {target} failed: no folder {path.parent}")
        try:
            copy = SQLiteStore(path)
        except StoreRefused as error:
            raise StoreFailure(f"{self.location}: the backup to {target} failed: {error}") from None
        try:
            copy.import_rows(self.export())
            heartbeat = self.meta("heartbeat")
            if heartbeat is not None:
                copy.heartbeat(float(heartbeat))
        except BaseException as error:
            copy.close()
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                leftover.unlink(missing_ok=True)
            if isinstance(error, StoreFailure | ValueError):
                raise StoreFailure(f"{self.location}: the backup to {target} failed: {error}") from None
            raise
        copy.close()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
