"""CPU time of whole process trees, read from /proc (Linux only, no dependency).

A benchmark that measures a cluster must count every server process: each node, the store
writer process each node starts, redis-server, and the PostgreSQL postmaster with every backend
and helper it forks. A process's ``/proc/PID/stat`` counts the time of all its threads; its
descendants are found by their parent ids (``/proc/PID/task/PID/children`` lists only what the
main thread forked). A process that exits between two readings takes its time with it: the
trees measured here keep their processes for the whole window.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

__all__ = ["cpu_seconds", "descendants", "parents", "thread_cpu_seconds"]

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def parents() -> dict[int, int]:
    """Every live process's parent id, by process id."""
    found: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                found[int(entry.name)] = int(fields[1])
    return found


def descendants(pid: int, tree: dict[int, int] | None = None) -> list[int]:
    """The processes below ``pid`` (children, their children...), not ``pid`` itself."""
    tree = parents() if tree is None else tree
    children: dict[int, list[int]] = {}
    for child, parent in tree.items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(children.get(child, []))
    return sorted(out)


def cpu_seconds(pids: Iterable[int]) -> float:
    """The CPU time (user + system, all threads) the processes used so far; a process gone
    counts nothing."""
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            with suppress(IndexError, ValueError):
                total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def thread_cpu_seconds(pid: int, tid: int) -> float:
    """The CPU time (user + system) one thread of ``pid`` used so far; 0 if it is gone. The
    main thread's id is the process's: a server's event loop."""
    try:
        text = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS
