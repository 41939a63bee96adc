"""The writer process of a store with a redo log (``storage.redo``): it applies the log to the
database behind the event loop, and deletes what it has applied.

    python -m parlour.storage.applier PATH SYNC REDO_DIR SOCKET_FD LOCK_FD SHARED_FD

Nobody waits for it: a batch is acknowledged once the loop has appended it. So it applies on
its own time, every ``APPLY_SECONDS``, everything that has come since its last transaction, in
one transaction: the moves of a game over that time are one run of ``move_runs``, and a
transaction's fixed costs (its locks, the WAL pages every transaction writes) are shared by
several loop iterations' batches.

It hears from the server on SOCKET_FD: an 8-byte number N asks it to apply at once everything
up to batch N and say so (the server reads the store only once what it acknowledged is there);
the answer is the 8-byte number of the last batch applied. The end of the stream (the server
stopped, or died) makes it apply everything left, delete the log and exit. SHARED_FD is memory
the server maps too (``WORDS``): the last batch applied, the transactions committed, and whether
the last attempt failed (the store's health). LOCK_FD holds the log's lock with the server; the
writer keeps it until it has finished, so that a server started after this one died waits for it.
"""

from __future__ import annotations

import logging
import mmap
import os
import select
import socket
import sqlite3
import struct
import sys
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from parlour.storage.base import StoreFailure
from parlour.storage.batches import decode_batch
from parlour.storage.records import MetaRow, Record
from parlour.storage.redo import SegmentReader, marks, unapplied
from parlour.storage.writer_process import mapped, run_writer

__all__ = ["APPLY_SECONDS", "NUMBER", "WORDS", "Applier"]

log = logging.getLogger("parlour.storage")

#: How often the log is applied when nobody asks for it sooner.
APPLY_SECONDS = 0.05
#: How long to wait before trying again after a failed transaction (disk full, locked...).
RETRY_SECONDS = (0.05, 1.0)
#: A batch number on the socket, either way.
NUMBER = struct.Struct(">Q")
#: The shared memory: last batch applied, transactions, failing (0 or 1).
WORDS = struct.Struct("=QQQ")

Batch = tuple[int, int, list[Record]]


class Applier:
    def __init__(self, store: Any, directory: Path, shared: mmap.mmap | None = None) -> None:
        self.store = store
        self.reader = SegmentReader(directory)
        self.shared = shared
        #: Batches read and not applied yet (a failed transaction keeps them for the next try).
        self.waiting: list[Batch] = []
        #: The stored commit marks, by key: batches at or below them are in the store already
        #: (applied by an earlier writer process of the same server, or by a recovery).
        self.known: dict[str, int] = {}
        #: The last batch applied (or found in the store already), and the last one read.
        self.applied = self.seen = 0
        self.transactions = 0
        self.failing = False

    def step(self, final: bool = False) -> None:
        """Apply what has come; ``final``: the server has stopped, take the log to its end."""
        self.waiting += [decode_batch(body) for body in self.reader.read(final)]
        if self.waiting:
            self.seen = self.waiting[-1][0]
            self._apply()
        if not self.waiting:
            # Everything read is in the store: the segments read to their end can go.
            for path in self.reader.finished:
                with suppress(FileNotFoundError):
                    path.unlink()
            self.reader.finished.clear()
        if self.shared is not None:
            WORDS.pack_into(self.shared, 0, self.applied, self.transactions, int(self.failing))

    def _apply(self) -> None:
        try:
            # Less what the store holds already: after a writer process that died, its
            # successor reads the log from the start of its oldest segment.
            self.waiting = unapplied(self.store, self.waiting, self.known)
            if self.waiting:
                self.store.commit(merged(self.waiting))
                self.transactions += 1
            self._done(len(self.waiting))
        except StoreFailure as failure:
            if _refused(failure):
                self._one_by_one()
            else:
                self._failed(failure)

    def _one_by_one(self) -> None:
        """A batch the database refuses (a move stored twice: a bug) must not hold back every
        batch after it: each is tried alone, and the refused one is skipped."""
        while self.waiting:
            batch = self.waiting[0]
            try:
                self.store.commit(merged([batch]))
                self.transactions += 1
            except StoreFailure as failure:
                if not _refused(failure):
                    self._failed(failure)
                    return
                log.error("the store refused batch %d of the redo log, skipped: %s", batch[0], failure)
            self._done(1)

    def _done(self, count: int) -> None:
        """The first ``count`` waiting batches are in the store."""
        for number, _, records in self.waiting[:count]:
            for key, mark in marks(records):
                self.known[key] = max(self.known.get(key, 0), mark)
            self.applied = max(self.applied, number)
        del self.waiting[:count]
        if not self.waiting:  # batches found in the store already were skipped before
            self.applied = self.seen
        if self.failing:
            log.warning("the redo log is applied to the store again")
            self.failing = False

    def _failed(self, failure: StoreFailure) -> None:
        if not self.failing:
            log.error("the redo log could not be applied to the store; trying again: %s", failure)
        self.failing = True


def _refused(failure: StoreFailure) -> bool:
    """The database refused the records themselves (a key, a trigger), as it always will."""
    return isinstance(failure.__cause__, sqlite3.IntegrityError)


def merged(batches: Sequence[Batch]) -> list[Record]:
    """The records of ``batches`` for one transaction: each run's commit mark only once, its
    last value (every batch carries it; stored once, it says the same)."""
    last: dict[str, MetaRow] = {}
    records: list[Record] = []
    for _, _, rows in batches:
        for record in rows:
            if type(record) is MetaRow and record.key.startswith("commit_mark_"):
                last[record.key] = record
            else:
                records.append(record)
    records.extend(last.values())
    return records


def serve(applier: Applier, sock: socket.socket) -> None:
    """Until the server closes its end: apply every ``APPLY_SECONDS``, or at once when asked."""
    pending = bytearray()
    wanted = 0
    retry = RETRY_SECONDS[0]
    while True:
        timeout = retry if applier.failing else APPLY_SECONDS
        ready, _, _ = select.select([sock], [], [], timeout)
        try:
            data = sock.recv(1 << 16) if ready else None
        except ConnectionResetError:
            data = b""
        if data == b"":
            applier.step(final=True)
            return
        if data:
            pending += data
            while len(pending) >= NUMBER.size:
                wanted = max(wanted, NUMBER.unpack_from(pending)[0])
                del pending[: NUMBER.size]
        applier.step()
        retry = min(retry * 2, RETRY_SECONDS[1]) if applier.failing else RETRY_SECONDS[0]
        if wanted and applier.applied >= wanted:
            try:
                sock.sendall(NUMBER.pack(applier.applied))
            except (BrokenPipeError, ConnectionResetError):
                # The server is gone (killed): the rest of the log is applied all the same.
                applier.step(final=True)
                return
            wanted = 0


def main(argv: Sequence[str]) -> int:
    path, sync, directory, fd, lock_fd, shared_fd = argv
    logging.basicConfig(level=logging.WARNING, format="parlour writer: %(levelname)s %(message)s")
    shared = mapped(int(shared_fd), WORDS.size)
    from parlour.storage.sqlite import SQLiteStore

    def close(store: SQLiteStore) -> None:
        store.close()
        os.close(int(lock_fd))  # last: a server that waits for the log finds it applied

    # As the writer process of storage.pipe opens it (checkpoints are the server's, the file was
    # checked by the server), and without a recovery of the log: this process is the log's.
    return run_writer(
        int(fd),
        lambda: SQLiteStore(path, sync, autocheckpoint=False, check=False, group_rows=False, redo="skip"),
        lambda sock, store: serve(Applier(store, Path(directory), shared), sock),
        close,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
