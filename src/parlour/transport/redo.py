"""Commits through the redo log (``parlour.storage.redo``): the event loop's side.

A batch is durable once it is appended to the log, so ``commit`` answers before it returns: the
batch's effects are shown in the same loop iteration, where with a writer process they waited for
its transaction (at 20 Apologies clients the loop idled for it, 0.3-0.4 ms a commit, every client
waiting on the same one). The writer process (``parlour.storage.applier``) applies the log to the
database behind the loop. Reads of the store wait for it to have applied everything acknowledged
(``caught_up``), so that nobody reads an older store than they have been shown.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import mmap
import os
import socket
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

from parlour.storage import Record
from parlour.storage.applier import NUMBER, WORDS
from parlour.storage.base import StoreFailure
from parlour.storage.batches import batch_body
from parlour.storage.redo import RedoLog, lock
from parlour.transport.writer import Done, receive, shared_memory

__all__ = ["LogCommitter"]

log = logging.getLogger("parlour.transport")

#: A writer process that stopped is started again, at most this often.
RESTART_SECONDS = 1.0


class LogCommitter:
    """Appends each batch to the redo log, and keeps a writer process applying it."""

    #: Its writer applies the log without checkpoints of its own being needed apart.
    checkpoints_apart = False

    def __init__(self, path: str, sync: str, directory: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.location, self.sync, self.directory, self.loop = path, sync, directory, loop
        held = lock(directory)
        if held is None:
            raise StoreFailure(f"{directory}: the redo log is held by another server")
        self._lock = held
        self._log = RedoLog(directory)
        self._numbers = itertools.count(1)
        #: The last batch appended: what a read of the store waits for the writer to apply.
        self._appended = 0
        #: The generation of a batch that could not be appended: the rest of it is refused (it
        #: was built on that batch).
        self._refused = -1
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._shared: mmap.mmap | None = None
        self._answers = bytearray()
        #: Reads waiting for batches to be applied: the last batch each needs, and its future.
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        #: Transactions of writer processes that have stopped (each counts from zero).
        self._counted = 0
        self._started = float("-inf")
        self.restart_seconds = RESTART_SECONDS
        self._closing = False
        try:
            self._start()
        except BaseException:
            self._log.close()
            os.close(self._lock)
            raise

    # -----------------------------------------------------------------------------------------
    # Appending

    def commit(self, records: list[Record], generation: int, done: Done) -> None:
        """Append the batch and tell ``done`` at once: stored, or why not."""
        if generation <= self._refused:
            done(StoreFailure("not written: an earlier change could not be stored"))
            return
        number = next(self._numbers)
        try:
            body = batch_body(number, generation, records)
        except Exception as error:  # a record that cannot be encoded (a lone surrogate in a name)
            self._refused = generation
            done(StoreFailure(f"cannot encode the batch: {error}"))
            return
        try:
            self._log.append(body)
        except OSError as error:
            self._refused = generation
            done(StoreFailure(f"{self.directory}: cannot append to the redo log: {error}"))
            return
        self._appended = number
        done(None)

    # -----------------------------------------------------------------------------------------
    # The writer process

    @property
    def applied(self) -> int:
        return 0 if self._shared is None else WORDS.unpack_from(self._shared)[0]

    @property
    def unapplied(self) -> int:
        """Batches appended that the writer has not applied yet (what a crash of both would
        leave to the next start; a writer that falls behind shows here first)."""
        return max(0, self._appended - self.applied)

    @property
    def transactions(self) -> int:
        return self._counted + (0 if self._shared is None else WORDS.unpack_from(self._shared)[1])

    @property
    def failing(self) -> bool:
        """The writer's last transaction failed (the store is full, locked, gone...)."""
        return self._shared is not None and WORDS.unpack_from(self._shared)[2] == 1

    def _start(self) -> None:
        self._started = self.loop.time()
        shared = shared_memory("parlour-applied", WORDS.size)
        if shared is None:
            raise StoreFailure("no shared memory (memfd) for the redo log's writer")
        shared_fd, self._shared = shared
        ours, theirs = socket.socketpair()
        try:
            fds = (theirs.fileno(), self._lock, shared_fd)
            with theirs:
                self._process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "parlour.storage.applier",
                        self.location,
                        self.sync,
                        str(self.directory),
                        *map(str, fds),
                    ],
                    pass_fds=fds,
                )
        finally:
            os.close(shared_fd)  # the mapping stays
        ours.setblocking(False)
        self._sock = ours
        self.loop.add_reader(ours.fileno(), self._read)
        if self._waiters:  # asked of the one that stopped
            self._ask(max(target for target, _ in self._waiters))

    def _ask(self, target: int) -> None:
        sock = self._sock
        if sock is None:
            return
        with suppress(BlockingIOError, OSError):  # a lost writer is heard by _read
            sock.send(NUMBER.pack(target))

    def _read(self) -> None:
        sock = self._sock
        if sock is None:
            return
        data = receive(sock, 1 << 12)
        if data is None:
            return
        if not data:
            self._lost()
            return
        self._answers += data
        answered = 0
        while len(self._answers) >= NUMBER.size:
            answered = max(answered, NUMBER.unpack_from(self._answers)[0])
            del self._answers[: NUMBER.size]
        self._wake(max(answered, self.applied))

    def _wake(self, applied: int) -> None:
        waiting = []
        for target, future in self._waiters:
            if target <= applied:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((target, future))
        self._waiters = waiting

    def _lost(self) -> None:
        """The writer process stopped: another one takes the log on from where the store is."""
        sock, self._sock = self._sock, None
        if sock is not None:
            self.loop.remove_reader(sock.fileno())
            sock.close()
        self._counted = self.transactions
        self._answers.clear()
        if self._process is not None:
            with suppress(subprocess.TimeoutExpired):
                self._process.wait(0)
        if self._closing:
            return
        log.error("the store's writer process stopped; starting another")
        delay = max(0.0, self._started + self.restart_seconds - self.loop.time())
        self.loop.call_later(delay, self._restart)

    def _restart(self) -> None:
        if not self._closing and self._sock is None:
            try:
                self._start()
            except (OSError, StoreFailure) as error:  # no process could be started: again later
                log.error("the store's writer process cannot start: %s", error)
                self.loop.call_later(self.restart_seconds or RESTART_SECONDS, self._restart)

    def poll(self) -> None:
        """Every batch is answered as it is appended: nothing to look for between inputs."""

    async def caught_up(self) -> None:
        """Return once the writer has applied every batch appended so far."""
        target = self._appended
        if target <= self.applied:
            return
        future = self.loop.create_future()
        self._waiters.append((target, future))
        self._ask(target)
        await future

    async def close(self) -> None:
        """Stop appending; the writer applies the rest of the log, deletes it and exits."""
        self._closing = True
        self._log.close()
        sock = self._sock
        if sock is not None:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_WR)  # its end of file: it applies the rest, then exits
        if self._process is not None:
            try:
                await asyncio.to_thread(self._process.wait, 30)
            except subprocess.TimeoutExpired:
                self._process.kill()  # what it has not applied stays in the log for the next start
        self._wake(self.applied)
        if self._sock is not None:
            self._lost()
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(StoreFailure("the store's writer stopped before applying everything"))
        self._waiters = []
        os.close(self._lock)
