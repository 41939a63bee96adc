"""The embedded default store: one SQLite file (stdlib ``sqlite3``), WAL, foreign keys on.

``sync`` is SQLite's ``synchronous`` setting in WAL mode:

- ``normal``: a commit survives the server process dying (``kill -9``, a crash); a power cut or
  an operating-system crash may lose the last commits, never corrupt the file.
- ``full``: every commit is also flushed to the disk before it is acknowledged, so it survives
  a power cut too, at the price of one fsync per transaction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from parlour.storage.base import StoreFailure, StoreRefused
from parlour.storage.redo import recover
from parlour.storage.sql import Cursor, SQLStore

__all__ = ["SQLiteStore"]

SQLITE_HEADER = b"SQLite format 3\x00"
SYNC_MODES = {"normal": "NORMAL", "full": "FULL"}
#: The write-ahead log's size past which a checkpoint waits for the writer (``checkpoint``).
WAL_LIMIT_BYTES = 64 * 1024 * 1024


class SQLiteStore(SQLStore):
    """A Parlour store in one SQLite file; see the module's text for ``sync``."""

    errors = (sqlite3.Error,)
    # Takes the write lock at once: a transaction that read first and then wants to write
    # could otherwise fail with "database is locked" half-way.
    BEGIN_WRITE = "BEGIN IMMEDIATE"
    # A WAL reader sees one snapshot from its first read to its COMMIT.
    BEGIN_SNAPSHOT = "BEGIN"
    DATABASE = "an SQLite database"

    def __init__(
        self,
        path: str | Path,
        sync: str = "normal",
        autocheckpoint: bool = True,
        check: bool = True,
        group_rows: bool = True,
        wal_limit: int = WAL_LIMIT_BYTES,
        redo: str = "try",
    ) -> None:
        """``autocheckpoint=False`` leaves WAL checkpoints (and their fsync) out of commits: the
        writer process commits that way, and the server checkpoints from its store thread.
        ``check=False`` skips the integrity check of the whole file: for the writer process,
        started by a server that has just checked the same file (the check reads every page:
        about 0.3 s for a 260 MB store, which the first commit after a restart waited for).
        ``group_rows=False`` writes a commit's rows one statement each (storage/writes.py,
        ``insert_rows``): cheaper for SQLite, unless the interpreter lock is contended (a
        writer thread in the server's process). ``wal_limit``: see ``checkpoint``. ``redo``: what
        to do with a redo log left beside the file (storage.redo): "apply" it, or refuse to open
        while another process holds it (a server, through ``open_store``); "try" to, or read the
        store as it is while a server holds it (the ``parlour db`` tools, a test's look into a
        live server's store); "skip" it (its own writer)."""
        self.check_file = check
        self.wal_limit = wal_limit
        self.group_rows = group_rows
        self.path = Path(path)
        self.location = str(path)
        self.connect_to = str(path)
        self.sync = sync
        if sync not in SYNC_MODES:
            raise ValueError(f"store_sync must be normal or full, not {sync!r}")
        self._refuse_foreign_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as error:
            raise StoreRefused(f"{self.location}: cannot open the store: {error}") from None
        try:
            self.db.execute("PRAGMA busy_timeout = 5000")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._check_and_migrate()
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute(f"PRAGMA synchronous = {SYNC_MODES[sync]}")
            # Fixed once the file is in WAL mode (a WAL database cannot change it).
            self.page_size = int(self.db.execute("PRAGMA page_size").fetchone()[0])
            if not autocheckpoint:
                self.db.execute("PRAGMA wal_autocheckpoint = 0")
        except StoreRefused:
            # Closed here, not whenever the collector gets to it: an open connection to a refused
            # file would keep its WAL and locks alive.
            self.db.close()
            raise
        except sqlite3.OperationalError as error:
            # Locked, read-only, I/O error...: the file may be fine, so not called corrupt.
            self.db.close()
            raise StoreRefused(f"{self.location}: cannot open the store: {error}") from None
        except sqlite3.DatabaseError as error:
            self.db.close()
            raise StoreRefused(f"{self.location}: the file is corrupt ({error})") from None
        if redo != "skip":
            try:
                if redo == "apply":
                    recover(self, self.redo_directory)
                else:  # at once: a tool beside a live server reads what its writer has applied
                    recover(self, self.redo_directory, wait=0, required=False)
            except (StoreFailure, OSError) as error:
                self.db.close()
                raise StoreRefused(f"{self.location}: {error}") from None

    @property
    def redo_directory(self) -> Path:
        """Where the redo log of this store is (storage.redo), whether there is one or not."""
        return self.path.with_name(self.path.name + "-redo")

    def redo_log(self) -> tuple[str, str, Path] | None:
        """The redo log applies with ``synchronous = NORMAL``: its appends survive the process
        dying, not a power cut, as SQLite's commits then do. With ``full`` every commit is an
        fsync, which the event loop must not wait for: that store commits as it always has."""
        return (self.connect_to, self.sync, self.redo_directory) if self.sync == "normal" else None

    # -----------------------------------------------------------------------------------------
    # Opening

    def _refuse_foreign_file(self) -> None:
        try:
            with self.path.open("rb") as file:
                header = file.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            return
        except OSError as error:
            raise StoreRefused(f"{self.location}: cannot read the store: {error.strerror}") from None
        if header and header != SQLITE_HEADER:
            raise StoreRefused(f"{self.location}: not a Parlour store (not an SQLite database)")

    def _check_and_migrate(self) -> None:
        """A quick integrity check first: a corrupt file is refused before anything is written."""
        if self.check_file:
            problems = [row[0] for row in self.db.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreRefused(f"{self.location}: the file is corrupt ({'; '.join(problems[:3])})")
        self._migrate()

    def cursor(self) -> Cursor:
        return self.db.cursor()

    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def _tables(self, cur: Cursor) -> set[str]:
        return {
            row[0] for row in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        }

    def _integrity(self) -> tuple[list[str], int]:
        integrity = [row[0] for row in self._read("PRAGMA integrity_check")]
        return integrity, len(self._read("PRAGMA foreign_key_check"))

    def checkpoint(self) -> None:
        """A passive WAL checkpoint: copies what it can into the database file and syncs it,
        never waiting for (nor blocking) the writer. Then, if the WAL is past ``wal_limit``,
        one that waits for the writer and empties the file.

        A passive checkpoint lets the next commit start the WAL over from its beginning only if
        it copied every frame, so only if no commit came while it copied. Under a load with no
        pause one always does (bench/server.py's 20 clients: the WAL grew by 100 MB a second,
        without end, and the disk with it). The second checkpoint has only the frames of the
        commits since the first to copy; the writer's next commit waits for it, a few ms once
        a second under such a load (docs/performance.md, "The WAL under a load without pauses")."""
        try:
            _, frames, _ = self.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if frames * self.page_size > self.wal_limit:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as error:
            raise StoreFailure(f"{self.location}: checkpoint failed: {error}") from None

    def backup(self, target: str) -> None:
        if Path(target).exists():
            raise ValueError(f"{target} exists: a backup never overwrites a file")
        try:
            copy = sqlite3.connect(target)
            try:
                self.db.backup(copy)
            finally:
                copy.close()
        except sqlite3.Error as error:
            # A half-written copy must not pass for a backup later.
            Path(target).unlink(missing_ok=True)
            raise StoreFailure(f"{self.location}: the backup to {target} failed: {error}") from error

    def close(self) -> None:
        self.db.close()
