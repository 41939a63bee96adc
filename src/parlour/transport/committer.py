"""How a batch of records reaches the store: one interface (``Committer``), three ways behind
it, chosen once by ``open_committer`` from the store and the ``store_writer`` setting.

- ``LogCommitter`` (transport.redo): each batch appended to a redo log beside an SQLite file
  and acknowledged at once, a writer process applying the log to the database behind the loop;
- ``ProcessCommitter`` (transport.writer): each batch committed by a writer process, answered
  once committed;
- ``ThreadCommitter``: each batch committed by the server's store thread (transport.store_thread).

Every one groups what waits into one transaction and answers each batch, in order, on the
event loop: ``done(None)`` once it is stored, ``done(error)`` if it is not. The runtime
(transport.runtime) knows only this interface.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from parlour.storage import Record, Store
from parlour.storage.base import StoreFailure
from parlour.transport.redo import LogCommitter
from parlour.transport.store_thread import StoreThread
from parlour.transport.writer import Done, ProcessCommitter

__all__ = ["Committer", "ThreadCommitter", "open_committer"]

log = logging.getLogger("parlour.transport")


class Committer(Protocol):
    """What the runtime asks of whatever commits its batches."""

    @property
    def transactions(self) -> int:
        """Transactions committed so far (each holds one or more batches)."""
        ...

    @property
    def failing(self) -> bool:
        """Whether what applies acknowledged batches to the database fails now (a redo log's
        writer): the store is then reported failing though commits are acknowledged."""
        ...

    @property
    def unapplied(self) -> int:
        """Batches acknowledged and not yet applied to the database."""
        ...

    #: Whether the database's checkpoints are the store thread's to run (a writer process
    #: leaves them out of its commits).
    checkpoints_apart: bool

    def commit(self, records: list[Record], generation: int, done: Done) -> None:
        """Commit ``records`` (after what came before), then call ``done`` on the loop. After
        a failed batch, the rest of its ``generation`` is refused unwritten."""

    def poll(self) -> None:
        """Tell the batches whose answers have come, without waiting (after each input)."""

    async def caught_up(self) -> None:
        """Return once the database holds every batch acknowledged so far."""

    async def close(self) -> None:
        """Finish what was handed over, then stop."""


class ThreadCommitter:
    """Commits on the store thread (``store_writer = "thread"``)."""

    checkpoints_apart = False
    failing = False
    unapplied = 0

    def __init__(self, thread: StoreThread) -> None:
        self.thread = thread

    @property
    def transactions(self) -> int:
        return self.thread.transactions

    def commit(self, records: list[Record], generation: int, done: Done) -> None:
        self.thread.commit(records, generation, done)

    def poll(self) -> None:
        """The thread answers through the loop: nothing to look for between inputs."""

    async def caught_up(self) -> None:
        """What the thread answered is in the database."""

    async def close(self) -> None:
        """The thread stays: it runs the store's reads until the runtime closes it."""


def open_committer(
    store: Store, store_writer: str, thread: StoreThread, loop: asyncio.AbstractEventLoop
) -> Committer:
    """The committer ``store_writer`` asks for, as far as ``store`` allows: the redo log only
    beside an SQLite file kept with ``store_sync = normal`` (``Store.redo_log``), a writer
    process for a store that can open one (``Store.process_writer``), else the store thread. A
    redo log that cannot be opened is said once and left for a writer process."""
    redo = store.redo_log() if store_writer == "log" else None
    if redo is not None:
        try:
            return LogCommitter(*redo, loop)
        except (StoreFailure, OSError, AttributeError) as error:  # AttributeError: no memfd
            log.error("committing without the redo log: %s", error)
    target = store.process_writer() if store_writer in ("log", "process") else None
    if target is not None:
        return ProcessCommitter(*target, loop)
    return ThreadCommitter(thread)
