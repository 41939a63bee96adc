"""What every writer process the server starts has in common (storage.pipe, the store's
writer; storage.applier, the redo log's): the signals meant for the server ignored, a batch
process's scheduling, the store opened (or the reason it cannot be, on one line), the socket
pair served until the server closes its end, and the store closed."""

from __future__ import annotations

import mmap
import os
import signal
import socket
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar

from parlour.storage.base import StoreError

__all__ = ["batch_scheduling", "mapped", "run_writer"]

S = TypeVar("S")


def batch_scheduling() -> None:
    """On Linux, the writer is scheduled as a batch process: woken by a frame, it does not
    preempt the task running where it wakes. On a machine with every core busy, that task was
    often the event loop that had just written the frame: the loop then waited, inside its
    write, for a whole commit (a socket pair's send took 120-310 us of wall time against 7-38
    us with the reader batch-scheduled, measured while the machine was at load 11). The writer
    still gets its fair share of CPU time; it just waits for its turn instead of taking the
    loop's."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_BATCH"):
        with suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


def mapped(fd: int, size: int) -> mmap.mmap:
    """The server's shared memory (a memfd handed down as ``fd``): mapped, its descriptor closed."""
    shared = mmap.mmap(fd, size)
    os.close(fd)
    return shared


def run_writer(
    fd: int,
    open_store: Callable[[], S],
    serve: Callable[[socket.socket, S], None],
    close: Callable[[S], None],
) -> int:
    """Run a writer process: serve the socket pair ``fd`` with the store ``open_store`` gives,
    until the server closes its end; ``close`` closes the store at the end, whatever happened.
    A store that cannot be opened (a database restarting) ends the process with status 1 and
    the reason on one line: the server sees it end, refuses what it was committing as after
    any failed commit, and starts another."""
    # The server stops it by closing its end, after its last commit; a Ctrl-C meant for the
    # server must not stop it first.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    batch_scheduling()
    try:
        store = open_store()
    except StoreError as failure:
        print(f"parlour writer: {failure}", file=sys.stderr)
        return 1
    try:
        with socket.socket(fileno=fd) as sock:
            serve(sock, store)
    finally:
        close(store)
    return 0
