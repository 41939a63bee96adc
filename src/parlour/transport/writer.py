"""Commits in a writer process (``parlour.storage.pipe``), which does not share the interpreter
lock with the event loop. Group commit: the event loop hands over each loop iteration's records
as soon as it has them; the writer takes everything waiting whenever it is free and commits it
in one transaction, so under load it goes from one transaction to the next without sleeping,
transactions grow with the load, and the loop never waits for the disk.
"""

from __future__ import annotations

import asyncio
import itertools
import mmap
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from contextlib import suppress

from parlour.storage import Record
from parlour.storage.base import StoreFailure
from parlour.storage.pipe import WORD as _WORD
from parlour.storage.pipe import FrameReader, decode_ack, encode_batch

__all__ = ["Done", "ProcessCommitter", "receive", "shared_memory"]

#: Called on the event loop with None once a batch is committed, or with the error.
Done = Callable[[BaseException | None], None]


class ProcessCommitter:
    """Commits in a writer process (``parlour.storage.pipe``), over a socket pair of its own:
    each batch is written as soon as it is made, and the writer's answers are read as soon as
    the loop is free to, or sooner, when the runtime asks (:meth:`poll`, after each input). If
    the process dies, what it had not answered fails and the next commit starts a new one.

    Every batch leaves at once, even while the writer commits earlier ones: the socket holds
    it, and the writer takes everything waiting as soon as it has answered, without sleeping
    and without waiting for the loop to read that answer. (Holding such batches back until the
    answer was read saved a system call per batch, but it put the loop's delay in hearing the
    answer, and the writer's wake-up after it, into every commit's round trip: at 20 Apologies
    clients, a batch waited 0.5-0.8 ms (median) before it was written.) The socket is not an
    asyncio transport: the runtime reads answers in the middle of a loop iteration, and a frame
    the socket cannot take whole waits in ``_out`` for it to drain."""

    #: The writer leaves checkpoints out of its commits: the store thread runs them apart.
    checkpoints_apart = True
    #: Every batch is answered once committed: nothing acknowledged waits to be applied.
    failing = False
    unapplied = 0

    def __init__(self, location: str, sync: str, loop: asyncio.AbstractEventLoop) -> None:
        self.location, self.sync, self.loop = location, sync, loop
        self.transactions = 0
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: dict[int, Done] = {}
        self._numbers = itertools.count(1)
        self._reader = FrameReader()
        #: What the socket could not take yet (the writer is slower than the loop), in order.
        self._out = bytearray()
        #: True while answers are being read (an answer's effects may make a new input, whose
        #: poll must not read the next answers in the middle of these).
        self._reading = False
        #: The generation of a batch that could not be encoded (nothing after it in that
        #: generation is sent: the writer would commit it without the batch it follows).
        self._refused = -1
        #: The writer's answered mark (shared memory): the number of the last batch it has
        #: answered, written once the answer is on the socket. None where there is no memfd.
        self._answered: mmap.mmap | None = None

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
        if self._sock is None:
            self._start()
        self._write(frame)

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        # Without it the runtime hears answers only as the loop polls its sockets.
        shared = shared_memory("parlour-answered", _WORD.size)
        fds = [theirs.fileno()] if shared is None else [theirs.fileno(), shared[0]]
        with theirs:
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "parlour.storage.pipe", self.location, self.sync, *map(str, fds)],
                    pass_fds=fds,
                )
            finally:
                if shared is not None:
                    os.close(shared[0])  # the mapping stays
        self.attach(ours, None if shared is None else shared[1])

    def attach(self, sock: socket.socket, answered: mmap.mmap | None) -> None:
        """Commit through ``sock``, a stream to a writer (``_start``'s process; a test's own
        end of a socket pair), which marks its answers in ``answered`` if given."""
        self._reader = FrameReader()
        self._answered = answered
        sock.setblocking(False)
        self._sock = sock
        self.loop.add_reader(sock.fileno(), self._read)

    def _write(self, data: bytes) -> None:
        sock = self._sock
        assert sock is not None
        if self._out:  # behind what waits already
            self._out += data
            return
        try:
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._lost()
            return
        if sent < len(data):
            self._out += data[sent:]
            self.loop.add_writer(sock.fileno(), self._drain)

    def _drain(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            sent = sock.send(self._out)
        except BlockingIOError:
            return
        except OSError:
            self._lost()
            return
        del self._out[:sent]
        if not self._out:
            self.loop.remove_writer(sock.fileno())

    def poll(self) -> None:
        """Read the answers that have arrived, without waiting, and tell each batch its outcome:
        the runtime calls this after each input while batches are on their way, so that a batch
        committed while the loop works through other inputs is shown at once, not once the loop
        has finished them all and polled its sockets again."""
        pending, answered = self._pending, self._answered
        # The writer says how far it has answered in a word of shared memory: a glance, where
        # a read of the socket would be a system call after every input (7-8 us of CPU on the
        # development machine, most of them finding nothing).
        if (
            pending
            and answered is not None
            and not self._reading
            and self._sock is not None
            and _WORD.unpack_from(answered)[0] >= next(iter(pending))
        ):
            self._read()

    def _read(self) -> None:
        """The socket is readable (the loop calls this), or may be (``poll``)."""
        sock = self._sock
        if sock is None:
            return
        data = receive(sock, 1 << 16)
        if data is None:
            return
        if not data:
            self._lost()
            return
        self._reading = True
        try:
            for frame in self._reader.feed(data):
                number, transaction, error = decode_ack(frame)
                self.transactions = max(self.transactions, transaction)
                done = self._pending.pop(number, None)
                if done is not None:
                    done(None if error is None else StoreFailure(f"{self.location}: {error}"))
        finally:
            self._reading = False

    def _lost(self) -> None:
        """The writer process is gone: what it had not answered fails."""
        sock, self._sock = self._sock, None
        if sock is not None:
            self.loop.remove_reader(sock.fileno())
            self.loop.remove_writer(sock.fileno())
            sock.close()
        self._out = bytearray()
        pending, self._pending = self._pending, {}
        for done in pending.values():
            done(StoreFailure(f"{self.location}: the store's writer process stopped"))

    async def caught_up(self) -> None:
        """The store holds what was answered: nothing to wait for."""

    async def close(self) -> None:
        """Let the writer finish what it has, then wait for it to exit."""
        if self._sock is not None:
            deadline = self.loop.time() + 10
            while self._out and self._sock is not None and self.loop.time() < deadline:
                await asyncio.sleep(0.01)  # the socket drains as the writer reads
            if self._sock is not None:
                with suppress(OSError):
                    self._sock.shutdown(socket.SHUT_WR)  # its end of file: it commits, then exits
        if self._process is not None:
            try:
                await asyncio.to_thread(self._process.wait, 30)
            except subprocess.TimeoutExpired:
                self._process.kill()  # it had everything; a writer that hangs is stopped
        # What it answered before it exited is read first: only what it did not answer fails.
        while self._sock is not None and self._pending:
            owed = len(self._pending)
            self._read()
            if len(self._pending) == owed:
                break
        if self._sock is not None:
            self._lost()


def receive(sock: socket.socket, size: int) -> bytes | None:
    """What a non-blocking socket to a writer process holds: None if nothing yet, b"" once the
    writer is gone (its end closed, or the socket failed)."""
    try:
        return sock.recv(size)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def shared_memory(name: str, size: int) -> tuple[int, mmap.mmap] | None:
    """``size`` bytes of memory to share with a writer process: its file descriptor (to pass on,
    then close) and our mapping; None where Linux's memfd_create is missing."""
    try:
        fd = os.memfd_create(name)
    except (AttributeError, OSError):
        return None
    try:
        os.ftruncate(fd, size)
        return fd, mmap.mmap(fd, size)
    except OSError:
        os.close(fd)
        return None
