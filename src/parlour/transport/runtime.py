"""What every listener shares: connection ids, outboxes, effect execution, the ticker, and the
group commit that keeps "stored before shown" (DESIGN.md, "The central loop")."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from parlour.core.effects import Close, ConnId, Effect, Send, Store
from parlour.core.service import Service
from parlour.storage import GameRow, MoveRow, PlayerGone, PlayerRow, Record
from parlour.storage import Store as StoreBackend
from parlour.storage.base import StoreFailure
from parlour.transport.outbox import Outbox

__all__ = ["Reload", "Runtime"]

T = TypeVar("T")

log = logging.getLogger("parlour.transport")

#: How often the ticker records that the server is alive (downtime is measured from it).
HEARTBEAT_SECONDS = 5.0
#: How often finished game records past ``record_retention`` are purged.
PURGE_SECONDS = 3600.0


@dataclass(slots=True)
class Reload:
    """What the store holds now for the players and games a failed commit touched, for a
    service to return to (None where the store has nothing; ``failed`` when even the read
    failed and the service must fall back on its own)."""

    players: dict[str, PlayerRow | None] = field(default_factory=dict)
    games: dict[str, tuple[GameRow, list[MoveRow]] | None] = field(default_factory=dict)
    failed: bool = False


@dataclass(slots=True)
class _Batch:
    """Everything held back since the last commit started: records to write, effects to
    release once they are written, and which service and connection each input came from."""

    records: list[Record] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    inputs: list[tuple[Service | None, ConnId | None, list[Record]]] = field(default_factory=list)


class Runtime:
    """Hosts services: hands out connection ids and executes their effects through outboxes.

    ``clock`` gives the ``now`` passed to services: wall-clock seconds since the epoch, so
    services can render timestamps from it (a test may inject its own). With a ``store``,
    effects that follow a ``Store`` wait until its records are committed; while a commit is
    in flight every later effect waits behind it too, so no connection's messages are
    reordered, and whatever arrives meanwhile is committed together in the next transaction.
    """

    def __init__(self, clock: Callable[[], float] = time.time, store: StoreBackend | None = None) -> None:
        self.clock = clock
        self.outboxes: dict[ConnId, Outbox] = {}
        self._ids = itertools.count(1)
        self.started = clock()
        self.store = store
        #: False from a failed commit until the next one succeeds (/healthz reports it).
        self.store_ok = True
        self.commits = 0
        self.committed_records = 0
        self._batch: _Batch | None = None
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="parlour-store") if store else None

    @property
    def store_status(self) -> str:
        """For /healthz: "none" (memory only), "ok" or "failing"."""
        if self.store is None:
            return "none"
        return "ok" if self.store_ok else "failing"

    def new_conn(self) -> ConnId:
        return next(self._ids)

    # -----------------------------------------------------------------------------------------
    # Effects

    def execute(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None:
        """Carry out one input's effects; ``service`` and ``origin`` (the connection whose
        frame produced them) say whom to tell if their records cannot be stored."""
        if self.store is not None and (self._batch is not None or self._busy or _stores(effects)):
            self._hold(effects, service, origin)
            return
        self._send(effects)

    def _send(self, effects: list[Effect]) -> None:
        touched: dict[ConnId, Outbox] = {}
        for effect in effects:
            if isinstance(effect, Store):
                continue  # nothing to store with (--store none), or stored already
            conn = effect.conn
            outbox = self.outboxes.get(conn)
            if outbox is None:
                continue  # the connection is already gone
            if type(effect) is Send:
                outbox.put(effect.data)
            elif type(effect) is Close:
                outbox.put(effect)
            touched[conn] = outbox
        # All of one input's messages to a connection leave together, in one write.
        for outbox in touched.values():
            outbox.flush_now()

    # -----------------------------------------------------------------------------------------
    # Group commit

    def _hold(self, effects: list[Effect], service: Service | None, origin: ConnId | None) -> None:
        batch = self._batch
        if batch is None:
            batch = self._batch = _Batch()
            self._idle.clear()
            if not self._busy:
                # Commit once this loop iteration's other inputs have joined the batch.
                asyncio.get_running_loop().call_soon(self._flush)
        records: list[Record] = []
        for effect in effects:
            if type(effect) is Store:
                records.extend(effect.records)
        batch.records.extend(records)
        batch.effects.extend(effects)
        batch.inputs.append((service, origin, records))

    def _flush(self) -> None:
        batch, self._batch = self._batch, None
        if batch is None:
            return
        if not batch.records:
            self._send(batch.effects)  # held only to keep order behind an earlier commit
            self._settle()
            return
        assert self._writer is not None and self.store is not None
        self._busy = True
        future = self._writer.submit(self.store.commit, batch.records)
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda done: loop.call_soon_threadsafe(self._committed, batch, done))

    def _committed(self, batch: _Batch, done: Future[None]) -> None:
        self._busy = False
        error = done.exception()
        if error is None:
            if not self.store_ok:
                log.warning("the store works again: %s", self.store.location if self.store else "")
                self.store_ok = True
            self.commits += 1
            self.committed_records += len(batch.records)
            self._send(batch.effects)
        else:
            # Everything held since is built on what could not be stored: none of it is shown.
            failed = [batch]
            if self._batch is not None:
                failed.append(self._batch)
                self._batch = None
            self._failed(failed, error)
        if self._batch is not None:
            self._flush()
        else:
            self._settle()

    def _settle(self) -> None:
        if self._batch is None and not self._busy:
            self._idle.set()

    def _failed(self, batches: list[_Batch], error: BaseException) -> None:
        if self.store_ok:
            log.error("the store failed; changes are refused until it works again: %s", error)
            self.store_ok = False
        else:
            log.debug("the store is still failing: %s", error)
        now = self.clock()
        by_service: dict[Service, tuple[list[Record], list[ConnId]]] = {}
        for batch in batches:
            # Closing a connection reveals nothing: closes still happen, sends do not.
            self._send([effect for effect in batch.effects if type(effect) is Close])
            for service, origin, records in batch.inputs:
                if service is None:
                    continue
                touched, origins = by_service.setdefault(service, ([], []))
                touched.extend(records)
                if origin is not None and origin not in origins:
                    origins.append(origin)
        for service, (records, origins) in by_service.items():
            reload = self._reload(records)
            handler = getattr(service, "store_failed", None)
            if handler is None:
                continue
            try:
                # What the service does about it may itself need storing (a player removed
                # from another table): through the same path as any input.
                self.execute(handler(records, origins, reload, now), service)
            except Exception:
                log.exception("a service failed to return to the stored state")

    def _reload(self, records: list[Record]) -> Reload:
        """The stored rows of everything ``records`` touched. Read on the loop: the writer is
        idle now (every pending batch failed), and a failure is rare and touches few rows."""
        reload = Reload()
        assert self.store is not None
        try:
            for record in records:
                if type(record) is PlayerRow or type(record) is PlayerGone:
                    if record.id not in reload.players:
                        reload.players[record.id] = self.store.load_player(record.id)
                elif isinstance(record, GameRow | MoveRow):
                    game_id = record.id if isinstance(record, GameRow) else record.game_id
                    if game_id not in reload.games:
                        reload.games[game_id] = self.store.load_game(game_id)
        except StoreFailure as failure:
            log.error("cannot read the store back either: %s", failure)
            reload.failed = True
        return reload

    async def drain_store(self) -> None:
        """Until every held effect has been committed (or refused) and released."""
        await self._idle.wait()

    async def in_store_thread(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the store's thread (in line with commits); inline without a store."""
        if self._writer is None:
            return work()
        return await asyncio.get_running_loop().run_in_executor(self._writer, work)

    async def _in_writer(self, work: Callable[[], object]) -> None:
        assert self._writer is not None
        try:
            await asyncio.get_running_loop().run_in_executor(self._writer, work)
        except StoreFailure as failure:
            log.debug("store housekeeping failed: %s", failure)

    # -----------------------------------------------------------------------------------------
    # Ticker and shutdown

    async def tick_forever(
        self, services: list[Service], seconds: float, record_retention: float = 0
    ) -> None:
        last_beat = last_purge = float("-inf")
        while True:
            await asyncio.sleep(seconds)
            now = self.clock()
            for service in services:
                try:
                    self.execute(service.tick(now), service)
                except Exception:  # a failing check must not stop the ticker
                    log.exception("periodic checks failed")
            store = self.store
            if store is not None and now - last_beat >= HEARTBEAT_SECONDS:
                last_beat = now
                await self._in_writer(partial(store.heartbeat, now))
            if store is not None and record_retention > 0 and now - last_purge >= PURGE_SECONDS:
                last_purge = now
                await self._in_writer(partial(store.purge, now - record_retention))

    async def flush(self, timeout: float) -> None:
        await asyncio.gather(*(outbox.flush(timeout) for outbox in list(self.outboxes.values())))

    async def close_store(self) -> None:
        """Commit what is held, record the last heartbeat, and stop the writer."""
        if self.store is None or self._writer is None:
            return
        await self.drain_store()
        store, now = self.store, self.clock()
        await self._in_writer(lambda: store.heartbeat(now))
        self._writer.shutdown(wait=True)


def _stores(effects: list[Effect]) -> bool:
    return any(type(effect) is Store for effect in effects)
