"""The redo log of an SQLite store: where a change is durable as soon as it is appended.

A commit to SQLite is a transaction: its pages copied into the WAL, locks taken and released,
some hundreds of microseconds for a few games' moves. Every move waited for one. With the redo
log, the event loop appends each batch of records to a file of its own (one ``write``, a few
microseconds) and shows its effects at once: once ``write`` has returned, the bytes are in the
operating system's cache, and they survive the server process dying (``kill -9``) as an SQLite
commit with ``synchronous = NORMAL`` does. A writer process (``parlour.storage.applier``) reads
the log behind it and applies it to the database in transactions of every batch that has come
since the last, then deletes what it has applied.

The log is a directory beside the database (``parlour.db-redo``): a ``lock`` file and numbered
segments. A segment is a series of frames, each an 8-byte header (the body's length and its
CRC-32, big-endian) and a body: the batch as the writer process's socket carries it
(``parlour.storage.pipe``: its number, its generation and its records). Every batch holds the
run's commit mark (``parlour_meta``: the number of its last batch, written with it), so a batch
the database already holds is known, and never applied twice. The appender starts a new segment
when one passes ``SEGMENT_BYTES``, and after a write that failed: nothing is ever appended after
a frame that may be torn (cutting the file back instead would race with a reader that has
already read past the cut). The reader stops at a frame it cannot read whole: the end of
what has been written so far, or, in a segment followed by another, the end of what ever will be.

Whoever holds the ``lock`` file's lock (``flock``) owns the log: the running server and its
writer process, which share the lock. Opening the store (``SQLiteStore``) takes it, applies any
segment a server left behind (it was stopped before its writer had applied them: a power cut, a
writer killed with it), and lets it go; a store whose log is held by a running server is read as
that server's writer has applied it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import struct
import time
import zlib
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from parlour.storage.base import StoreFailure
from parlour.storage.batches import decode_batch
from parlour.storage.records import MetaRow, Record

__all__ = [
    "SEGMENT_BYTES",
    "RedoLog",
    "SegmentReader",
    "lock",
    "recover",
    "segments",
    "unapplied",
]

log = logging.getLogger("parlour.storage")

#: A frame's header: the body's length and its CRC-32.
HEADER = struct.Struct(">II")
#: A segment past this size is followed by a new one (the writer deletes a segment once it has
#: applied all of it and the appender has moved on).
SEGMENT_BYTES = 16 * 1024 * 1024
#: The prefix of a run's commit mark in ``parlour_meta`` (parlour.transport.runtime).
MARK_PREFIX = "commit_mark_"
#: How long opening a store waits for the log's lock (a server's writer finishing what it had,
#: after the server was killed) before it reads the store without the log.
LOCK_WAIT_SECONDS = 10.0


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body), zlib.crc32(body)) + body


def segment_path(directory: Path, number: int) -> Path:
    return directory / f"{number:012d}.log"


def segments(directory: Path) -> list[tuple[int, Path]]:
    """The log's segments, oldest first."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        stem, dot, suffix = name.partition(".")
        if dot and suffix == "log" and stem.isdigit():
            found.append((int(stem), directory / name))
    return sorted(found)


def lock(directory: Path, wait: float = 0.0) -> int | None:
    """The log's lock, as an open file descriptor holding it (close it to let go), or None if
    another process still holds it after ``wait`` seconds."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)
        except OSError:
            os.close(fd)
            raise


class RedoLog:
    """The appending end, on the event loop: one ``write`` a batch."""

    def __init__(self, directory: Path, segment_bytes: int = SEGMENT_BYTES) -> None:
        self.directory = directory
        self.segment_bytes = segment_bytes
        existing = segments(directory)
        # A new segment, after any left (a writer process restarted reads them first).
        self._number = existing[-1][0] + 1 if existing else 1
        self._fd = -1
        self._size = 0
        #: A failed write left bytes that could not be taken back: nothing goes after them.
        self._torn = False
        self._open(self._number)

    def _open(self, number: int) -> None:
        fd = os.open(
            segment_path(self.directory, number), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
        )
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._number, self._size, self._torn = fd, number, 0, False

    def append(self, body: bytes) -> None:
        """Append one batch; OSError if it is not there whole (then no reader will take it)."""
        if self._torn or self._size >= self.segment_bytes:
            self._open(self._number + 1)
        data = frame(body)
        try:
            written = os.write(self._fd, data)
        except OSError:
            self._torn = True
            raise
        if written != len(data):
            self._torn = True
            raise OSError(f"short write to the redo log ({written} of {len(data)} bytes)")
        self._size += written

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class SegmentReader:
    """The reading end (the writer process, a recovery): the whole frames written so far, segment
    after segment; each segment once it is read to its end and a later one exists."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        found = segments(directory)
        self.number = found[0][0] if found else 1
        self._fd: int | None = None
        self._buffer = bytearray()
        #: Segments read to their end: the caller deletes them once what they held is applied.
        self.finished: list[Path] = []

    def read(self, final: bool = False) -> list[bytes]:
        """The bodies of the frames that have come whole since the last call. ``final``: nothing
        more will be appended (the server has stopped), so a frame cut short at the end of the
        last segment never will be whole: it is dropped (it was never acknowledged)."""
        bodies: list[bytes] = []
        while True:
            if self._fd is None:
                path = segment_path(self.directory, self.number)
                try:
                    self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except FileNotFoundError:
                    return bodies
            following = segment_path(self.directory, self.number + 1)
            # Asked before reading: the appender makes the next segment only after its last
            # write to this one, so if the next one is there now, this read gets all of it.
            done = final or following.exists()
            while chunk := os.read(self._fd, 1 << 20):
                self._buffer += chunk
            good = self._frames(bodies)
            if not done:
                return bodies
            # Whatever is left in the buffer is a frame the appender never finished, and never
            # will: it was not acknowledged.
            if not good or self._buffer:
                log.warning(
                    "the redo log's segment %s ends with %d bytes that are not a whole batch "
                    "(a write that failed or was cut short, never acknowledged): skipped",
                    self.number,
                    len(self._buffer),
                )
            self._buffer.clear()
            os.close(self._fd)
            self._fd = None
            self.finished.append(segment_path(self.directory, self.number))
            if not following.exists():
                return bodies
            self.number += 1

    def _frames(self, bodies: list[bytes]) -> bool:
        """Move the whole frames at the buffer's start to ``bodies``; False if a frame whose
        bytes are all there does not match its CRC (the rest of the segment is unreadable)."""
        buffer = self._buffer
        start = 0
        good = True
        while len(buffer) - start >= HEADER.size:
            size, crc = HEADER.unpack_from(buffer, start)
            end = start + HEADER.size + size
            if len(buffer) < end:
                break
            body = bytes(buffer[start + HEADER.size : end])
            if zlib.crc32(body) != crc:
                good = False
                break
            bodies.append(body)
            start = end
        del buffer[:start]
        return good

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def marks(records: list[Record]) -> Iterator[tuple[str, int]]:
    for record in records:
        if type(record) is MetaRow and record.key.startswith(MARK_PREFIX):
            yield record.key, int(record.value)


def unapplied(
    store: Any, batches: list[tuple[int, int, list[Record]]], known: dict[str, int]
) -> list[tuple[int, int, list[Record]]]:
    """``batches`` less those the store holds already (its commit marks say so)."""
    keys = {key for _, _, records in batches for key, _ in marks(records)}
    for key in keys - known.keys():  # read once each: ``known`` follows what is applied since
        value = store.meta(key)
        known[key] = int(value) if value else 0
    left = []
    for batch in batches:
        if any(number <= known[key] for key, number in marks(batch[2])):
            continue
        left.append(batch)
    return left


def recover(store: Any, directory: Path, wait: float = LOCK_WAIT_SECONDS, required: bool = True) -> int:
    """Apply what a stopped server left in its redo log, then delete it; the batches applied.

    The log may still be held by a server on the same store, or by the writer of one that was
    just killed, finishing what it had: it is waited for, ``wait`` seconds. After that, a server
    (``required``) must not start: what it would read is not all that was acknowledged. A tool
    (a backup, an export) reads the store as the running server's writer has applied it."""
    if not segments(directory):
        return 0
    fd = lock(directory, wait)
    if fd is None:
        if required:
            raise StoreFailure(
                f"{directory}: the redo log is held by another process (a server on this store, or "
                "its writer finishing)"
            )
        log.warning(
            "%s: the redo log is held by a running server; read as its writer has applied it", directory
        )
        return 0
    try:
        reader = SegmentReader(directory)
        try:
            bodies = reader.read(final=True)
        finally:
            reader.close()
        batches = unapplied(store, [decode_batch(body) for body in bodies], {})
        if batches:
            try:
                store.commit([record for _, _, records in batches for record in records])
            except StoreFailure as failure:
                raise StoreFailure(f"{directory}: the redo log could not be applied: {failure}") from failure
            log.warning("applied %d batches the last server had left in its redo log", len(batches))
        for path in reader.finished:
            with suppress(FileNotFoundError):
                path.unlink()
        return len(batches)
    finally:
        os.close(fd)
