"""Committing in a separate process: the frames a server and its store writer exchange, and the
writer's loop (``python -m parlour.storage.pipe LOCATION SYNC FD [WORD_FD]``; LOCATION is an
SQLite file or a PostgreSQL URL).

Why a process: the SQLite calls of a writer *thread* need CPython's interpreter lock between
every step, and a busy event loop holds it; every commit then waits for the loop, and every
move waits for its commit. A writer process has its own interpreter: a commit takes what
SQLite takes, on the other core.

A frame is a 4-byte big-endian length and a msgpack body. Server to writer: a batch
(storage.batches); writer to server: (batch number, transaction number, error
or None). The writer commits every batch it finds waiting in one transaction; after a failed
commit it refuses, unwritten, the rest of that generation (they were built on what could not
be stored) until batches of a newer one arrive. It stops when the server closes its end (or
dies): what it has received by then is committed first.

WORD_FD, where the server passes one, is 8 bytes of shared memory (a memfd): once a round's
answers are sent, the writer stores there the number of the last batch it answered. The
server's loop reads it after each input it handles, with no system call, and reads the socket
only when an answer waits there (parlour.transport.writer).
"""

from __future__ import annotations

import mmap
import socket
import struct
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import msgspec

from parlour.storage.batches import batch_body, decode_batch
from parlour.storage.records import Record
from parlour.storage.writer_process import mapped, run_writer

__all__ = [
    "WORD",
    "FrameReader",
    "decode_ack",
    "encode_ack",
    "encode_batch",
    "serve",
]

_HEADER = struct.Struct(">I")
#: The answered mark in shared memory: the number of the last batch answered.
WORD = struct.Struct("=Q")
#: How much the writer reads at once.
READ_SIZE = 1 << 20
_encode = msgspec.msgpack.Encoder().encode
_ack = msgspec.msgpack.Decoder(tuple[int, int, str | None])


def _frame(body: bytes) -> bytes:
    return _HEADER.pack(len(body)) + body


def encode_batch(batch: int, generation: int, records: Sequence[Record]) -> bytes:
    return _frame(batch_body(batch, generation, records))


def encode_ack(batch: int, transaction: int, error: str | None) -> bytes:
    return _frame(_encode((batch, transaction, error)))


def decode_ack(body: bytes) -> tuple[int, int, str | None]:
    return _ack.decode(body)


class FrameReader:
    """Frames out of a byte stream, however it is cut."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer
        buffer += data
        frames = []
        start = 0
        while len(buffer) - start >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer, start)
            end = start + _HEADER.size + size
            if len(buffer) < end:
                break
            frames.append(bytes(buffer[start + _HEADER.size : end]))
            start = end
        del buffer[:start]
        return frames


def serve(sock: socket.socket, store: Any, answered: mmap.mmap | None = None) -> None:
    """The writer's loop: until the server closes its end. ``answered``, a word of memory the
    server shares, gets the number of the last batch answered once its answer is sent: the
    server's loop glances at it after each input (parlour.transport.writer)."""
    reader = FrameReader()
    refused = -1
    transactions = 0
    while True:
        try:
            data = sock.recv(READ_SIZE)
        except ConnectionResetError:
            data = b""
        if not data:
            return
        # Everything already waiting joins this transaction: read without blocking by a flag
        # of the call, not by switching the socket's mode (two more system calls a round). A
        # read that did not fill its buffer took everything there was: no second call, which
        # would only say so (a system call a commit, 5-8 us on a virtual machine).
        more = data
        with suppress(BlockingIOError):
            while len(more) == READ_SIZE and (more := sock.recv(READ_SIZE, socket.MSG_DONTWAIT)):
                data += more
        batches = [decode_batch(frame) for frame in reader.feed(data)]
        answers = []
        last = 0
        while batches:
            generation = batches[0][1]
            group = []
            while batches and batches[0][1] == generation:
                group.append(batches.pop(0))
            error: str | None = None
            if generation <= refused:
                error = "not written: an earlier change could not be stored"
            else:
                try:
                    store.commit([record for _, _, records in group for record in records])
                    transactions += 1
                except Exception as failure:  # every failure is the store's: report it
                    refused = generation
                    error = str(failure)
            answers += [encode_ack(batch, transactions, error) for batch, _, _ in group]
            last = group[-1][0]
        if answers:
            try:
                sock.sendall(b"".join(answers))
            except (BrokenPipeError, ConnectionResetError):
                return  # the server is gone (killed): what it sent is committed, nobody waits
        if answered is not None and last:  # after the answers: they are there to be read
            WORD.pack_into(answered, 0, last)


def _open(location: str, sync: str) -> Any:
    from parlour.storage import is_url

    if is_url(location):
        from parlour.storage.postgres import PostgresStore

        return PostgresStore(location, sync)
    from parlour.storage.sqlite import SQLiteStore

    # Checkpoints (and their fsync) are the server's store thread's job: a commit that every
    # waiting player waits on must not also copy the WAL into the database file.
    # The server checked the file (and applied any redo log) when it opened it, just before
    # starting this process.
    # This process shares no interpreter lock: rows go one statement each, which spares SQLite
    # its statement journal (storage/writes.py, insert_rows).
    return SQLiteStore(location, sync, autocheckpoint=False, check=False, group_rows=False, redo="skip")


def main(argv: Sequence[str]) -> int:
    location, sync, fd, *shared = argv
    answered = mapped(int(shared[0]), WORD.size) if shared else None
    return run_writer(
        int(fd),
        lambda: _open(location, sync),
        lambda sock, store: serve(sock, store, answered),
        lambda store: store.close(),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
