"""Who commits: the server's store thread, or a writer process. Group commit either way.

The event loop hands over each loop iteration's records as soon as it has them. The writer
takes everything waiting whenever it is free and commits it in one transaction, so under load
it goes from one transaction to the next without sleeping, transactions grow with the load,
and the loop never waits for the disk.

``StoreWriter`` is a thread of the server that owns the server's own connection to the store:
reads for the API, the heartbeat and purges run on it, in turn, and so do commits with
``store_writer = "thread"``. ``ProcessCommitter`` sends commits to a writer process instead
(``parlour.storage.pipe``), which does not share the interpreter lock with the event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass
from queue import SimpleQueue
from typing import Any

from parlour.storage import Record, Store
from parlour.storage.base import StoreFailure
from parlour.storage.pipe import FrameReader, decode_ack, encode_batch

__all__ = ["ProcessCommitter", "StoreWriter"]

#: Called on the event loop with None once a batch is committed, or with the error.
Done = Callable[[BaseException | None], None]


@dataclass(slots=True)
class _Commit:
    records: list[Record]
    generation: int
    done: Done


@dataclass(slots=True)
class _Job:
    work: Callable[[], Any]
    future: Future[Any]


class StoreWriter:
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
        """Run ``work`` on the writer thread, in turn with the commits."""
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


class ProcessCommitter(asyncio.Protocol):
    """Commits in a writer process (``parlour.storage.pipe``), over a socket pair: the event
    loop writes each batch without waiting and hears back as the writer answers. If the
    process dies, what it had not answered fails and the next commit starts a new one."""

    def __init__(self, location: str, sync: str, loop: asyncio.AbstractEventLoop) -> None:
        self.location, self.sync, self.loop = location, sync, loop
        self.transactions = 0
        #: The socket's transport (uvloop's are not asyncio.WriteTransport instances: duck-typed).
        self._transport: Any = None
        self._starting = False
        #: Frames written before the connection is made (the first moments of a process).
        self._unsent: list[bytes] = []
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: dict[int, Done] = {}
        self._numbers = itertools.count(1)
        self._reader = FrameReader()
        #: Frames kept while the writer commits earlier ones (see commit): written at its
        #: next answer.
        self._held: list[bytes] = []
        #: The generation of a batch that could not be encoded (nothing after it in that
        #: generation is sent: the writer would commit it without the batch it follows).
        self._refused = -1

    def commit(self, records: list[Record], generation: int, done: Done) -> None:
        if generation <= self._refused:
            # As the writer does after a failed commit: what follows in the same generation
            # was built on the batch that could not be sent, and must not be stored without it.
            self.loop.call_soon(done, StoreFailure("not written: an earlier change could not be stored"))
            return
        number = next(self._numbers)
        try:
            frame = encode_batch(number, generation, records)
        except Exception as error:
            # Whatever a record holds that cannot be written (a lone surrogate in a name) fails
            # this batch like a refused commit, told on the next loop pass as the writer's
            # answers are: it must not stall every later batch.
            self._refused = generation
            self.loop.call_soon(done, StoreFailure(f"cannot encode the batch: {error}"))
            return
        self._pending[number] = done
        transport = self._transport
        if transport is not None and not transport.is_closing():
            if self._held or len(self._pending) > 1:
                # The writer has batches of ours to answer first: it reads this one only once
                # it has. Kept until its next answer, then written with the others held since:
                # one system call (and one wake-up of the writer) for all of them.
                self._held.append(frame)
            else:
                transport.write(frame)
            return
        self._unsent.append(frame)
        if not self._starting:
            self._start()

    def _start(self) -> None:
        self._starting = True
        self._reader = FrameReader()
        ours, theirs = socket.socketpair()
        with theirs:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "parlour.storage.pipe",
                    self.location,
                    self.sync,
                    str(theirs.fileno()),
                ],
                pass_fds=[theirs.fileno()],
            )
        self.loop.create_task(self.loop.connect_accepted_socket(lambda: self, ours))

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport, self._starting = transport, False
        unsent, self._unsent = self._unsent, []
        if unsent:
            self._transport.write(b"".join(unsent))

    def data_received(self, data: bytes) -> None:
        for frame in self._reader.feed(data):
            number, transaction, error = decode_ack(frame)
            self.transactions = max(self.transactions, transaction)
            done = self._pending.pop(number, None)
            if done is not None:
                done(None if error is None else StoreFailure(f"{self.location}: {error}"))
        self._write_held()

    def _write_held(self) -> None:
        transport = self._transport
        if self._held and transport is not None and not transport.is_closing():
            held, self._held = self._held, []
            transport.write(b"".join(held))

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._held = []  # their batches are pending: they fail below
        pending, self._pending = self._pending, {}
        for done in pending.values():
            done(StoreFailure(f"{self.location}: the store's writer process stopped"))

    async def close(self) -> None:
        """Let the writer finish what it has, then wait for it to exit."""
        self._write_held()
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write_eof()
        if self._process is not None:
            try:
                await asyncio.to_thread(self._process.wait, 30)
            except subprocess.TimeoutExpired:
                self._process.kill()  # it had everything; a writer that hangs is stopped
