"""Several worker processes on one machine, behind one port: ``parlour serve --workers N``.

One Python process runs on one core. With ``workers`` other than 1, ``parlour serve`` becomes a
supervisor that starts that many worker processes, each a whole cluster node (the ``--cluster``
mode of docs/cluster.md: a Redis and a store shared with the others), and each listening on the
same websocket/HTTP port with SO_REUSEPORT, so that the kernel spreads new connections over
them. Only worker 0 listens on the Fish and Tsuro ports: a table is a set of TCP connections
that must meet in one process, so every table of the machine is worker 0's (and, as a node's,
ends if that worker dies).

The supervisor holds no game state and opens neither the store nor Redis. It checks the port
is free, starts worker 0 and, once it listens, the others; it forwards SIGINT, SIGTERM and
SIGHUP to them (each stops as a node does: it says goodbye, commits what it holds and hands
its leases over), waits for them (killing, after :data:`STOP_SECONDS`, one that does not
stop), and restarts a worker that exits unasked, after a backoff that doubles while its runs
stay short; one that keeps failing soon after each start stops the whole supervisor (a setting
or the machine is wrong: restarting it for ever would only hide that).

A worker gets its settings as one JSON line on its standard input, never on its command line,
which other users of the machine can read (settings may hold secrets), and keeps that pipe open:
when it ends, the supervisor is gone (even killed with SIGKILL), and the worker stops as on
SIGTERM rather than serve on unsupervised.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import IO, Final

from parlour.settings import SettingError, Settings

__all__ = [
    "STOP_SECONDS",
    "WORKER_COMMAND",
    "Backoff",
    "Supervisor",
    "WorkerLabel",
    "read_spec",
    "serve_worker",
    "spec_line",
    "worker_count",
    "worker_settings",
]

log = logging.getLogger("parlour.workers")

#: How a worker is started: ``parlour worker`` (a command not listed in the help), its settings
#: then written to its standard input.
WORKER_COMMAND: Final = (sys.executable, "-m", "parlour", "worker")
#: How long a stop waits for every worker to exit before killing those left: less than the 30 s
#: systemd (deploy/parlour.service) and `docker stop --stop-timeout 30` give the whole service.
STOP_SECONDS: Final = 20.0
#: How long worker 0 may take to listen before the others start all the same.
READY_SECONDS: Final = 60.0
#: The signals that stop the supervisor, forwarded as they come to every worker.
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True, slots=True)
class Backoff:
    """When to restart a worker that exited unasked: after ``first`` seconds, doubling (up to
    ``most``) at each exit that comes less than ``stable`` seconds after its start; after
    ``restarts`` such exits in a row, the supervisor gives up."""

    first: float = 0.5
    most: float = 30.0
    stable: float = 60.0
    restarts: int = 5

    def delay(self, failures: int) -> float:
        """The wait before the restart that follows the ``failures``-th short run in a row."""
        return min(self.most, self.first * (1 << max(0, failures - 1)))


def worker_count(settings: Settings) -> int:
    """``workers``, with 0 read as one per CPU core this process may run on."""
    if settings.workers:
        return settings.workers
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS)
        return max(1, os.cpu_count() or 1)


def worker_settings(settings: Settings, index: int, port: int) -> Settings:
    """The settings of worker ``index``: one process of its own (workers = 1) on ``port``; the
    Fish and Tsuro listeners on worker 0 only, so that each table's players meet in one
    process."""
    first = index == 0
    return dataclasses.replace(
        settings,
        workers=1,
        port=port,
        fish_port=settings.fish_port if first else 0,
        tsuro_port=settings.tsuro_port if first else 0,
    )


def spec_line(index: int, settings: Settings) -> bytes:
    """What a worker reads on its standard input: its index and its settings, one JSON line."""
    return json.dumps({"index": index, "settings": dataclasses.asdict(settings)}).encode() + b"\n"


def read_spec(stream: IO[bytes]) -> tuple[int, Settings]:
    """The worker's index and settings, from the line :func:`spec_line` wrote."""
    try:
        spec = json.loads(stream.readline())
        index, values = spec["index"], spec["settings"]
        if not isinstance(index, int) or not isinstance(values, dict):
            raise TypeError
        return index, Settings(**values)
    except (ValueError, TypeError, KeyError) as error:
        # A SettingError is a ValueError: its message says which setting.
        detail = str(error) if isinstance(error, SettingError) else "no worker settings on standard input"
        raise SettingError(
            f"parlour worker: {detail} (workers are started by parlour serve --workers)"
        ) from None


class WorkerLabel(logging.Filter):
    """Names the worker in every line it logs (``parlour.cluster (worker 2)``): the workers of
    a supervisor write to the same log."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.suffix = f" (worker {index})"

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.endswith(self.suffix):
            record.name += self.suffix
        return True


class _Supervised(asyncio.Protocol):
    """The worker's end of its standard input: its end means the supervisor is gone."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.stop.is_set():
            log.warning("the supervisor is gone: stopping")
            self.stop.set()


async def serve_worker(
    serve: Callable[[asyncio.Event], Awaitable[int]], supervisor: IO[bytes] | None = None
) -> int:
    """Run ``serve`` (the server, stopped by the event it is given) until a signal stops it or
    the pipe from the supervisor (standard input by default) ends."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(
        lambda: _Supervised(stop), supervisor if supervisor is not None else sys.stdin.buffer
    )
    try:
        return await serve(stop)
    finally:
        stop.set()  # the pipe closed here is not news of the supervisor
        transport.close()


async def claim_port(host: str, port: int) -> int:
    """The port the workers will share, checked free: bound here without SO_REUSEPORT (and
    released at once), which fails while anything listens on it, a server of the same user
    with SO_REUSEPORT included (that one would otherwise silently take a share of the
    connections). Port 0 picks a free port."""
    server = await asyncio.get_running_loop().create_server(asyncio.Protocol, host or None, port)
    try:
        bound: int = server.sockets[0].getsockname()[1]
        return bound
    finally:
        server.close()
        await server.wait_closed()


def _exit(code: int) -> str:
    """A worker's return code in words."""
    if code < 0:
        with suppress(ValueError):
            return signal.Signals(-code).name
        return f"signal {-code}"
    return f"code {code}"


@dataclass
class _Slot:
    """One worker's place: its current process, when that started, and how many of its runs in
    a row were short."""

    index: int
    process: asyncio.subprocess.Process | None = None
    started: float = 0.0
    failures: int = 0


@dataclass
class Supervisor:
    """Starts ``worker_count(settings)`` workers and keeps them running until a stop signal."""

    settings: Settings
    command: Sequence[str] = WORKER_COMMAND
    backoff: Backoff = Backoff()
    stop_seconds: float = STOP_SECONDS
    clock: Callable[[], float] = time.monotonic
    #: The environment of the workers (this process's by default).
    env: dict[str, str] | None = None
    port: int = 0
    slots: list[_Slot] = field(default_factory=list)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _signal: int = signal.SIGTERM
    _clean: bool = True

    async def run(self) -> int:
        """Serve until a stop signal; 0 once every worker stopped cleanly, 1 otherwise (a worker
        that had to be killed, or gave up on)."""
        loop = asyncio.get_running_loop()
        settings = self.settings
        self.port = await claim_port(settings.host, settings.port)
        self.slots = [_Slot(index) for index in range(worker_count(settings))]
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._signalled, sig)
        log.info(
            "%d workers on ws://%s:%d/ (one cluster node each; Fish and Tsuro tables on worker 0)",
            len(self.slots),
            settings.host,
            self.port,
        )
        try:
            # Worker 0 first, alone until it listens: by then it holds every lease and has
            # restored every service, so the others start as gateways to an owner that is
            # ready (nodes starting together race for the leases, and a node that saw a lease
            # taken before its owner announced itself can lose what it sends meanwhile).
            keepers = [loop.create_task(self._keep(self.slots[0]))]
            await self._listening(self.slots[0])
            keepers += [loop.create_task(self._keep(slot)) for slot in self.slots[1:]]
            await self._stopping.wait()
            _, late = await asyncio.wait(keepers, timeout=self.stop_seconds)
            if late:
                self._clean = False
                for slot, process in self._alive():
                    log.error(
                        "worker %d (pid %d) did not stop within %g s: killing it",
                        slot.index,
                        process.pid,
                        self.stop_seconds,
                    )
                    process.kill()
                await asyncio.gather(*late)
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
        log.info("every worker stopped%s", "" if self._clean else " (not all cleanly)")
        return 0 if self._clean else 1

    def _signalled(self, sig: int) -> None:
        log.info("%s: stopping %d workers", signal.Signals(sig).name, len(self.slots))
        self.stop(sig)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop every worker: send ``sig`` to each (the signal the supervisor got)."""
        self._signal = sig
        self._stopping.set()
        for _, process in self._alive():
            with suppress(ProcessLookupError):
                process.send_signal(sig)

    def _alive(self) -> list[tuple[_Slot, asyncio.subprocess.Process]]:
        """The workers running now, with their slots."""
        return [
            (slot, slot.process)
            for slot in self.slots
            if slot.process is not None and slot.process.returncode is None
        ]

    async def _keep(self, slot: _Slot) -> None:
        """Run the slot's worker, again and again, until the supervisor stops."""
        backoff = self.backoff
        while not self._stopping.is_set():
            process = await self._start(slot)
            code = await process.wait()
            if process.stdin is not None:
                process.stdin.close()
            if self._stopping.is_set():
                # Killed by the very signal it was sent: it was still starting (its handlers
                # not yet installed), so it held nothing to hand over.
                clean = code in (0, -self._signal)
                self._clean = self._clean and clean
                (log.info if clean else log.warning)(
                    "worker %d (pid %d) stopped (%s)", slot.index, process.pid, _exit(code)
                )
                return
            ran = self.clock() - slot.started
            slot.failures = slot.failures + 1 if ran < backoff.stable else 1
            if slot.failures > backoff.restarts:
                log.error(
                    "worker %d exited %d times in a row within %g s of starting (last: %s): "
                    "giving up, stopping every worker",
                    slot.index,
                    slot.failures,
                    backoff.stable,
                    _exit(code),
                )
                self._clean = False
                self.stop(signal.SIGTERM)
                return
            delay = backoff.delay(slot.failures)
            log.warning(
                "worker %d (pid %d) exited unasked (%s) after %.1f s: restarting it in %.1f s",
                slot.index,
                process.pid,
                _exit(code),
                ran,
                delay,
            )
            with suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)

    async def _listening(self, slot: _Slot) -> None:
        """Until the port accepts connections (only ``slot``'s worker listens on it yet), or
        that worker exits, or a stop; at most :data:`READY_SECONDS`."""
        host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(
            self.settings.host, self.settings.host
        )
        deadline = self.clock() + READY_SECONDS
        while not self._stopping.is_set() and self.clock() < deadline:
            process = slot.process
            if process is not None and process.returncode is not None:
                return  # it failed to start: its keeper restarts it, the others start now
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, self.port), 1.0)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return
        if not self._stopping.is_set():
            log.warning(
                "worker %d does not listen after %g s: starting the others", slot.index, READY_SECONDS
            )

    async def _start(self, slot: _Slot) -> asyncio.subprocess.Process:
        # A session of its own: a terminal's Ctrl-C reaches the supervisor alone, which passes
        # it on (each worker hears of a stop once, from one sender).
        process = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, env=self.env, start_new_session=True
        )
        slot.process, slot.started = process, self.clock()
        log.info("worker %d started (pid %d)", slot.index, process.pid)
        if self._stopping.is_set():  # the stop came while it was being started
            with suppress(ProcessLookupError):
                process.send_signal(self._signal)
        assert process.stdin is not None
        process.stdin.write(spec_line(slot.index, worker_settings(self.settings, slot.index, self.port)))
        with suppress(ConnectionError):  # it died at once: its exit is seen next
            await process.stdin.drain()
        return process
