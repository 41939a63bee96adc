"""The server's store thread: one thread that owns the server's own connection to the store.
The API's reads, the heartbeat and the purges run on it, in turn, and so do the commits with
``store_writer = "thread"`` (group commit: it takes everything waiting whenever it is free and
commits it in one transaction, so under load transactions grow with the load and the loop never
waits for the disk)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass
from queue import SimpleQueue
from typing import Any

from parlour.storage import Record, Store
from parlour.storage.base import StoreFailure
from parlour.transport.writer import Done

__all__ = ["StoreThread"]


@dataclass(slots=True)
class _Commit:
    records: list[Record]
    generation: int
    done: Done


@dataclass(slots=True)
class _Job:
    work: Callable[[], Any]
    future: Future[Any]


class StoreThread:
    """One thread that owns every use of ``store``."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self.store = store
        self.loop = loop
        self._queue: SimpleQueue[_Commit | _Job | None] = SimpleQueue()
        #: After a failed commit, the batches of its generation that follow are refused
        #: unwritten: they were built on what could not be stored.
        self._refused = -1
        self.transactions = 0
        self._thread = threading.Thread(target=self._run, name="parlour-store", daemon=True)
        self._thread.start()

    def commit(self, records: list[Record], generation: int, done: Done) -> None:
        self._queue.put(_Commit(records, generation, done))

    def run(self, work: Callable[[], Any]) -> Future[Any]:
        """Run ``work`` on the store thread, in turn with the commits."""
        future: Future[Any] = Future()
        self._queue.put(_Job(work, future))
        return future

    def close(self) -> None:
        """Finish what is queued, then stop the thread."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            items = [self._queue.get()]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            group: list[_Commit] = []
            for item in items:
                if isinstance(item, _Commit) and (not group or group[0].generation == item.generation):
                    group.append(item)
                    continue
                self._commit(group)
                group = [item] if isinstance(item, _Commit) else []
                if isinstance(item, _Job):
                    self._job(item)
                elif item is None:
                    return
            self._commit(group)

    def _commit(self, group: list[_Commit]) -> None:
        if not group:
            return
        error: BaseException | None = None
        if group[0].generation == self._refused:
            error = StoreFailure("not written: an earlier change could not be stored")
        else:
            try:
                self.store.commit([record for batch in group for record in batch.records])
                self.transactions += 1
            except BaseException as failure:  # every failure is the store's: report it
                self._refused = group[0].generation
                error = failure
        for batch in group:
            self._tell(batch.done, error)

    def _tell(self, done: Done, error: BaseException | None) -> None:
        with suppress(RuntimeError):  # the loop is closed: nobody waits for the answer any more
            self.loop.call_soon_threadsafe(done, error)

    @staticmethod
    def _job(job: _Job) -> None:
        # A job whose caller was cancelled (its awaiting task cancelled) is not run: setting a
        # result on its cancelled future would raise here and stop the thread.
        if not job.future.set_running_or_notify_cancel():
            return
        try:
            job.future.set_result(job.work())
        except BaseException as failure:
            job.future.set_exception(failure)
