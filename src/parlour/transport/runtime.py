"""What every listener shares: connection ids, outboxes, effect execution, the ticker, and the
group commit that keeps "stored before shown" (DESIGN.md, "The central loop")."""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from parlour.core.effects import Close, ConnId, Effect, Store, Think
from parlour.core.service import Service
from parlour.storage import Fence, Heartbeat, MetaRow, Record
from parlour.storage import Store as StoreBackend
from parlour.storage.base import StoreFailure
from parlour.transport.committer import Committer, open_committer
from parlour.transport.delivery import deliver
from parlour.transport.fanout import SLICE, Fanout
from parlour.transport.limits import AddressLimits, ConnectionLimits
from parlour.transport.metering import RuntimeMeter
from parlour.transport.outbox import Outbox
from parlour.transport.store_thread import StoreThread
from parlour.transport.thinking import Thinker

__all__ = ["Runtime"]

T = TypeVar("T")

log = logging.getLogger("parlour.transport")

#: How often the ticker records that the server is alive (downtime is measured from it: the
#: server is taken to have lived until one period after its last heartbeat, so a restart never
#: gives a clock back time it had already used, and charges it at most this much downtime).
HEARTBEAT_SECONDS = 1.0
#: How long a stop waits for the store to answer what it still holds.
DRAIN_SECONDS = 10.0
#: How often finished game records past ``record_retention`` are purged.
PURGE_SECONDS = 3600.0
#: How long a failed commit's outcome is sought in the store (commits pause meanwhile), and
#: the first and the longest wait between two attempts to read it.
RESOLVE_SECONDS = 60.0
RESOLVE_BACKOFF = (0.05, 1.0)

#: What the service's ``refused`` answer of a Store is called with (see core.effects.Store).
Refusal = Callable[[bool], None]


@dataclass(slots=True)
class _Batch:
    """What one loop iteration held back: records to write in one transaction, effects to
    release once they (and every earlier batch) are written, and which service and connection
    each input came from."""

    records: list[Record] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    #: Each input's service, connection, records, and the answers its Stores owe if refused.
    inputs: list[tuple[Service | None, ConnId | None, list[Record], list[Refusal]]] = field(
        default_factory=list
    )
    #: The store's answer once it has one: None until then, True when committed.
    outcome: bool | BaseException | None = None
    #: Told once the batch is committed and released (or refused): see Runtime.stored.
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    #: When it left for the writer (time.perf_counter), for the commit latency metric.
    sent: float = 0.0
    #: The fences its records were made under (Runtime.fences): committed with them.
    fences: set[Fence] = field(default_factory=set)
    #: Its place in the commit mark (Runtime._mark): stored once the mark is at least this.
    #: A batch without records takes the number of the last batch with some before it.
    number: int = 0


class Runtime:
    """Hosts services: hands out connection ids and executes their effects through outboxes.

    ``clock`` gives the ``now`` passed to services: wall-clock seconds since the epoch, so
    services can render timestamps from it (a test may inject its own).

    With a ``store``, an input's effects wait until its records are committed, and while any
    batch waits every later effect waits behind it too, so no connection's messages are
    reordered. Each loop iteration's records are one batch, handed at once to the writer (a
    process, or a thread: ``store_writer``), which commits every batch waiting in one
    transaction and answers them in order: several may be on their way, so the loop goes on
    while the writer writes. A failed commit fails every batch queued behind it unwritten (they
    were built on what could not be stored), until the services have returned to the stored
    state.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        store: StoreBackend | None = None,
        store_writer: str = "process",
        limits: ConnectionLimits | None = None,
        fanout_slice: int = SLICE,
    ) -> None:
        self.clock = clock
        #: What one client may cost, and the per-address counts every listener shares.
        self.limits = limits if limits is not None else ConnectionLimits()
        self.addresses = AddressLimits(self.limits, clock)
        self.outboxes: dict[ConnId, Outbox] = {}
        #: Broadcasts to more than ``fanout_slice`` connections are written that many
        #: recipients per loop iteration (a busy lobby's chat: parlour.transport.fanout).
        self.fanout = Fanout(self.outboxes, fanout_slice)
        self._ids = itertools.count(1)
        self.started = clock()
        self.store = store
        #: False from a failed commit until the next one succeeds (/healthz reports it).
        self.store_ok = True
        #: Records committed so far (the writer counts the transactions they took).
        self.committed_records = 0
        self._batch: _Batch | None = None
        #: Batches handed to the writer (or waiting behind those), oldest first.
        self._queued: deque[_Batch] = deque()
        #: Batches carry the generation they were built in; after a failure the writer refuses
        #: the rest of that generation, and the runtime starts a new one once it has recovered.
        self._generation = 0
        #: From a failed commit until the services are back on stored ground: everything is
        #: held (and will be refused: it is built on what could not be stored).
        self._recovering = False
        self._recovery: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        #: The thread that runs reads and housekeeping on the store (and commits, with
        #: ``store_writer="thread"``), and what commits: that thread or a writer process.
        self._writer: StoreThread | None = None
        self._committer: Committer | None = None
        self.store_writer = store_writer
        self._last_beat = self._last_purge = float("-inf")
        #: A cluster (parlour.cluster) sets this: it is handed, after the same commit, the
        #: sends, broadcasts and closes for connections this node does not hold. None on one node.
        self.remote: Callable[[list[Effect]], None] | None = None
        #: What /metrics reports (the app hands in parlour.metrics' Meter); None records nothing.
        self.meter: RuntimeMeter | None = None
        #: A cluster node's fencing tokens, by the service each guards (as it is handed to
        #: ``execute``; parlour.cluster): a service's records are committed with its fence in
        #: force when they were made, so that nothing made by an owner another node has since
        #: replaced is stored. Only its own: a shard claimed elsewhere must not refuse the
        #: records of the other services committed in the same batch.
        self.fences: dict[object, Fence] = {}
        #: Told of each fence a failed commit found claimed by another node (the cluster
        #: node demotes that service at once); the fence is dropped from ``fences`` first.
        self.on_fenced: Callable[[Fence], None] | None = None
        #: Every commit also writes this run's commit mark: ``parlour_meta[key]`` = the number
        #: of its last batch. A commit whose answer was lost (the connection dropped during
        #: COMMIT, the writer process died) is stored exactly if the mark reached its number:
        #: batches are committed in order, each transaction all or nothing.
        self._mark = f"commit_mark_{secrets.token_hex(8)}"
        self._numbered = 0
        self.resolve_seconds = RESOLVE_SECONDS
        self.resolve_backoff = RESOLVE_BACKOFF
        #: Where robots think (Think effects): answers come back through ``_thought``.
        self._thinker = Thinker(self._thought)

    @property
    def store_status(self) -> str:
        """For /healthz: "none" (memory only), "ok" or "failing"."""
        if self.store is None:
            return "none"
        failing = not self.store_ok or (self._committer is not None and self._committer.failing)
        return "failing" if failing else "ok"

    @property
    def unapplied(self) -> int:
        """Batches acknowledged from the redo log that its writer has not applied to the
        database yet (0 without one)."""
        return 0 if self._committer is None else self._committer.unapplied

    @property
    def transactions(self) -> int:
        """Transactions committed so far (each holds one or more loop iterations' records)."""
        return 0 if self._committer is None else self._committer.transactions

    def new_conn(self) -> ConnId:
        return next(self._ids)

    def number_connections(self, first: ConnId) -> None:
        """Hand out connection ids from ``first`` on (a cluster node's own range)."""
        self._ids = itertools.count(first)

    # -----------------------------------------------------------------------------------------
    # Effects

    def execute(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None:
        """Carry out one input's effects; ``service`` and ``origin`` (the connection whose
        frame produced them) say whom to tell if their records cannot be stored."""
        self._execute(effects, service, origin)

    def _execute(
        self, effects: list[Effect], service: Service | None, origin: ConnId | None
    ) -> _Batch | None:
        """``execute``; returns the batch that holds the effects until it is committed (None:
        carried out at once)."""
        if Think in map(type, effects):  # the types compared in C, not in a generator
            effects = self._thinker.start(effects, service)
        if self.store is not None and (
            self._batch is not None or self._queued or self._recovering or _stores(effects)
        ):
            batch = self._hold(effects, service, origin)
            committer = self._committer
            if committer is not None:
                # After each input, not once the loop iteration's inputs are all handled: what
                # a writer process has committed meanwhile is shown now. An iteration may hold
                # a burst of inputs (a move and its robots' replies: 100 us each); an answer
                # that came during the first of them waited for the last, and its players too.
                committer.poll()
            return batch
        self._send(effects)
        return None

    def show(self, effects: list[Effect]) -> None:
        """Carry out sends, broadcasts and closes whose records another node has stored already
        (a cluster owner's, for this node's connections): at once, never held behind this
        node's own commits, nor refused with them if they fail."""
        self._send(effects)

    def _thought(self, service: Service | None, token: tuple[str, int], done: Future[int]) -> None:
        """A robot's decision is back: an input of its service's (``thought``)."""
        answer = getattr(service, "thought", None)
        if answer is None:  # pragma: no cover - only services that think make Think effects
            return
        error = done.exception()
        if error is not None:
            log.error("a robot's decision failed; the server's robot plays instead", exc_info=error)
        self.execute(answer(token, None if error is not None else done.result(), self.clock()), service)

    async def stored(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None:
        """Carry out ``effects`` and return once their records are committed and the effects
        released (for answers that are not messages, like an HTTP response: stored before
        shown). StoreFailure if the store refused them."""
        batch = self._execute(effects, service, origin)
        if batch is None:
            return  # nothing was held: no store, or nothing to store and nothing queued
        waiter = asyncio.get_running_loop().create_future()
        batch.waiters.append(waiter)
        await waiter

    def _send(self, effects: list[Effect]) -> None:
        """Carry out sends, broadcasts and closes (records are stored already, or not at all);
        those for connections this node does not hold go to ``remote`` (a cluster's)."""
        deliver(effects, self.outboxes, self.fanout, self.remote)

    # -----------------------------------------------------------------------------------------
    # Group commit

    def _hold(self, effects: list[Effect], service: Service | None, origin: ConnId | None) -> _Batch:
        batch = self._batch
        if batch is None:
            batch = self._batch = _Batch()
            self._idle.clear()
            # Commit once this loop iteration's other inputs have joined the batch.
            asyncio.get_running_loop().call_soon(self._flush)
        records: list[Record] = []
        refusals: list[Refusal] = []
        for effect in effects:
            if type(effect) is Store:
                records.extend(effect.records)
                if effect.refused is not None:
                    refusals.append(effect.refused)
        if records and self.fences:
            fence = self.fences.get(service)
            if fence is not None:
                batch.fences.add(fence)
        batch.records.extend(records)
        batch.effects.extend(effects)
        if effects:  # an input that changed nothing and said nothing has nothing to take back
            batch.inputs.append((service, origin, records, refusals))
        return batch

    def _flush(self) -> None:
        if self._recovering:
            return  # the batch waits, to be refused with the failed ones
        batch, self._batch = self._batch, None
        if batch is None:
            return
        self._queued.append(batch)
        if not batch.records:
            batch.number = self._numbered
            batch.outcome = True  # held only to keep order behind earlier batches
            self._release()
            return
        self._numbered += 1
        batch.number = self._numbered
        batch.sent = time.perf_counter()
        records = [*batch.records, *batch.fences, MetaRow(self._mark, str(batch.number))]
        self._store_committer().commit(records, self._generation, partial(self._committed, batch))

    def _store_writer(self) -> StoreThread:
        if self._writer is None:
            assert self.store is not None
            self._writer = StoreThread(self.store, asyncio.get_running_loop())
        return self._writer

    def _store_committer(self) -> Committer:
        if self._committer is None:
            assert self.store is not None
            self._committer = open_committer(
                self.store, self.store_writer, self._store_writer(), asyncio.get_running_loop()
            )
        return self._committer

    async def _caught_up(self) -> None:
        """Return once the store holds everything acknowledged (a redo log's writer applies
        it behind the loop: a read must not find an older store than players were shown)."""
        if self._committer is not None:
            await self._committer.caught_up()

    def _committed(self, batch: _Batch, error: BaseException | None) -> None:
        if batch not in self._queued:
            return  # failed already, with a batch before it
        batch.outcome = True if error is None else error
        meter = self.meter
        if meter is not None:  # once per batch, never per record or per request
            if error is None:
                meter.committed(batch.records, time.perf_counter() - batch.sent)
            else:
                meter.commit_failed()
        self._release()

    def _release(self) -> None:
        """Release the oldest batches that have their answer, in order."""
        queued = self._queued
        while queued and queued[0].outcome is not None:
            batch = queued[0]
            if batch.outcome is True:
                queued.popleft()
                if batch.records and not self.store_ok:
                    log.warning("the store works again: %s", self.store.location if self.store else "")
                    self.store_ok = True
                self._accept(batch)
                continue
            # Everything held since is built on what could not be stored: none of it is shown.
            error = batch.outcome
            assert isinstance(error, BaseException)
            failed = list(queued)
            queued.clear()
            self._recovering = True
            self._recovery = asyncio.get_running_loop().create_task(self._recover(failed, error))
            return
        self._settle()

    def _accept(self, batch: _Batch) -> None:
        """``batch`` is stored: show it."""
        self.committed_records += len(batch.records)
        self._send(batch.effects)
        for waiter in batch.waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _settle(self) -> None:
        if self._batch is None and not self._queued and not self._recovering:
            self._idle.set()

    async def _recover(self, failed: list[_Batch], error: BaseException) -> None:
        """A commit failed. Its outcome is read from the store first (a connection lost during
        COMMIT may have stored it): what the store holds is shown as if committed; the rest,
        and what was built on it, is refused, and each service returns to what the store
        holds (read on the writer thread, which owns the store). Nothing new is acknowledged
        meanwhile: every input since is held, and goes on to the store if nothing was refused."""
        if self.store_ok:
            log.error("the store failed; commits pause until it answers: %s", error)
            self.store_ok = False
        else:
            log.debug("the store is still failing: %s", error)
        mark = await self._stored_mark()
        if mark is not None:
            stored = [batch for batch in failed if batch.number <= mark]
            if any(batch.records for batch in stored):
                log.warning(
                    "the store did commit %d of the changes it failed to confirm: shown now",
                    sum(1 for batch in stored if batch.records),
                )
            for batch in stored:
                self._accept(batch)
            failed = [batch for batch in failed if batch.number > mark]
        reloads: dict[Service, object] = {}
        claimed: list[Fence] = []
        while failed:
            # What was held meanwhile was handled on top of what could not be stored: refused
            # with it, its services read back as well. Inputs that come during the read are
            # held too, built on memory not yet read back: read again for them.
            if self._batch is not None:
                failed.append(self._batch)
                self._batch = None
            try:
                reloads, claimed = await self._read_back(failed)
            except Exception:  # a service's read that fails must not leave commits paused
                log.exception("the services could not read the store back")
            if self._batch is None:
                break
        self._recovering = False
        self._generation += 1  # the services are back on stored ground: write again
        self._refuse(failed, reloads, confirmed=mark is not None)
        # Told once the refused requests are answered: a service the node then stops acting
        # for (and whose players stay connected, a shard's) would answer nothing after.
        if self.on_fenced is not None:
            for fence in claimed:
                self.on_fenced(fence)
        if self._batch is not None:
            self._flush()
        self._settle()

    async def _stored_mark(self) -> int | None:
        """The commit mark the store holds (0: none yet), read again with a growing wait
        until the store answers; None if it did not within ``resolve_seconds``."""
        store, key = self.store, self._mark
        assert store is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.resolve_seconds
        wait, longest = self.resolve_backoff
        try:
            await asyncio.wait_for(self._caught_up(), self.resolve_seconds)
        except TimeoutError:
            log.error("the store's writer did not apply the redo log within %.0f s", self.resolve_seconds)
            return None
        while True:
            try:
                value = await asyncio.wrap_future(self._store_writer().run(lambda: store.settled_meta(key)))
                return int(value) if value else 0
            except Exception as failure:  # the store's errors are StoreFailures; none may stop this
                if loop.time() + wait > deadline:
                    log.error(
                        "the store did not answer for %.0f s: the outcome of the changes it was "
                        "committing is unknown; they are refused: %s",
                        self.resolve_seconds,
                        failure,
                    )
                    return None
                log.debug("the store does not answer yet: %s", failure)
            await asyncio.sleep(wait)
            wait = min(wait * 2, longest)

    async def _read_back(self, failed: list[_Batch]) -> tuple[dict[Service, object], list[Fence]]:
        """What each service touched by ``failed`` needs read back, and the fences found
        claimed by another node (dropped: nothing made from now on carries them)."""
        touched: dict[Service, list[Record]] = {}
        for batch in failed:
            for service, _, records, _ in batch.inputs:
                if service is not None:
                    touched.setdefault(service, []).extend(records)
        fences: set[Fence] = set().union(*(batch.fences for batch in failed))
        reloads, claimed = await asyncio.wrap_future(
            self._store_writer().run(
                lambda: (
                    {service: self._reload(service, records) for service, records in touched.items()},
                    self._claimed(fences),
                )
            )
        )
        for fence in claimed:
            log.warning("%s was claimed by another node: this node stops acting for it", fence.key)
            for guarded in [service for service, held in self.fences.items() if held == fence]:
                del self.fences[guarded]
        result: dict[Service, object] = reloads
        return result, claimed

    def _refuse(self, batches: list[_Batch], reloads: dict[Service, object], confirmed: bool) -> None:
        """Refuse ``batches``: nothing of them was stored (``confirmed``: the store said so;
        else nobody knows). Each request is answered once: by its Store's own ``refused``
        where it has one, else among the ``conns`` of its service's ``store_failed``."""
        now = self.clock()
        by_service: dict[Service, tuple[list[Record], list[ConnId], list[Refusal]]] = {}
        for batch in batches:
            for waiter in batch.waiters:
                if not waiter.done():
                    waiter.set_exception(StoreFailure("the store refused this change"))
            # Closing a connection reveals nothing: closes still happen, sends do not.
            self._send([effect for effect in batch.effects if type(effect) is Close])
            for service, origin, records, refusals in batch.inputs:
                if service is None:
                    continue
                touched, origins, answers = by_service.setdefault(service, ([], [], []))
                touched.extend(records)
                if refusals:
                    answers.extend(refusals)
                elif origin is not None and origin not in origins:
                    origins.append(origin)
        for service, (records, origins, answers) in by_service.items():
            try:
                for answer in answers:
                    answer(confirmed)
                # What the service does about it may itself need storing (a player removed
                # from another table): through the same path as any input.
                self.execute(service.store_failed(records, origins, reloads.get(service), now), service)
            except Exception:
                log.exception("a service failed to return to the stored state")

    def _claimed(self, fences: set[Fence]) -> list[Fence]:
        """On the writer thread: the fences the store no longer holds (none if it cannot say)."""
        assert self.store is not None
        try:
            return [fence for fence in fences if self.store.meta(fence.key) != fence.value]
        except StoreFailure:
            return []

    def _reload(self, service: Service, records: list[Record]) -> object:
        """On the writer thread: what ``service`` needs read back after its ``records`` failed."""
        assert self.store is not None
        return service.reload(records, self.store)

    async def drain_store(self, timeout: float | None = None) -> None:
        """Until every held effect has been committed (or refused) and released, or ``timeout``
        seconds (a stop must not wait for ever on a store that does not answer)."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.error("the store did not answer within %.0f s; stopping without it", timeout or 0)

    async def in_store_thread(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the store's thread (in line with commits); inline without a store."""
        if self.store is None:
            return work()
        await self._caught_up()
        result: T = await asyncio.wrap_future(self._store_writer().run(work))
        return result

    async def _in_writer(self, work: Callable[[], object]) -> None:
        try:
            await asyncio.wrap_future(self._store_writer().run(work))
        except StoreFailure as failure:
            log.debug("store housekeeping failed: %s", failure)

    # -----------------------------------------------------------------------------------------
    # Ticker and shutdown

    async def tick_forever(
        self, services: list[Service], seconds: float, record_retention: float = 0
    ) -> None:
        while True:
            await asyncio.sleep(seconds)
            now = self.clock()
            for service in services:
                try:
                    self.execute(service.tick(now), service)
                except Exception:  # a failing check must not stop the ticker
                    log.exception("periodic checks failed")
            await self.housekeeping(now, record_retention)

    async def housekeeping(self, now: float, record_retention: float = 0) -> None:
        """What the store needs now and then: a heartbeat (downtime is measured from the last
        one) and, with a ``record_retention``, forgetting finished games older than that."""
        store = self.store
        if store is None:
            return
        if now - self._last_beat >= HEARTBEAT_SECONDS:
            self._last_beat = now
            # Through the commits (not a transaction of the store thread's own, which would
            # make the writer process's next commit wait out SQLite's busy back-off).
            try:
                await self.stored([Store([Heartbeat(now)])])
            except StoreFailure as failure:
                log.debug("the heartbeat was not stored: %s", failure)
        if self._committer is not None and self._committer.checkpoints_apart:
            # A writer process leaves checkpoints out of its commits (storage.pipe): done
            # here, on the store thread's own connection, where nobody waits on them.
            await self._in_writer(store.checkpoint)
        if record_retention > 0 and now - self._last_purge >= PURGE_SECONDS:
            self._last_purge = now
            await self._in_writer(partial(store.purge, now - record_retention))

    async def flush(self, timeout: float) -> None:
        self.fanout.finish()
        await asyncio.gather(*(outbox.flush(timeout) for outbox in list(self.outboxes.values())))

    async def close_store(self) -> None:
        """Commit what is held, record the last heartbeat, and stop the writer (and the robots'
        process: a decision still on its way is not needed any more)."""
        self._thinker.shutdown()
        if self.store is None:
            return
        await self.drain_store(DRAIN_SECONDS)
        store, now = self.store, self.clock()
        if self._committer is not None:
            await self._committer.close()
        await self._in_writer(lambda: store.heartbeat(now))
        self._store_writer().close()


def _stores(effects: list[Effect]) -> bool:
    """Whether ``effects`` hold records to store. A Store without records only says how to
    answer a refusal (core.effects.Store): it is held only behind others, never on its own."""
    if Store not in map(type, effects):  # the types compared in C: most inputs stop here
        return False
    # A loop, not any() over a generator: this runs for every input that stores, and a
    # generator costs more than the loop, which mostly stops at the first effect.
    for effect in effects:  # noqa: SIM110
        if type(effect) is Store and effect.records:
            return True
    return False
