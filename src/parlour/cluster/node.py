"""One node of a cluster: its number, its leases, its gateways, and the messages between nodes.

``ClusterNode`` is what app.py wires in with ``--cluster redis://...``: it numbers the node
(``INCR parlour:nodes``) so that its connection ids are unique across the cluster, keeps a
lease loop per stateful service (take the lease when free, renew it every ttl/6, let go when it
lapses), restores a service from the store when it becomes its owner, forwards HTTP requests
to owners (``parlour.cluster.calls``), and routes effects for other nodes' connections
(Runtime.remote).
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.cluster.awaiting import Awaited, Awaiting
from parlour.cluster.calls import HttpCalls, HttpHandler
from parlour.cluster.gateway import NODE_SHIFT, ClusterService, node_of
from parlour.cluster.lease import Lease, lease_key, renewal_period
from parlour.cluster.redisbus import Bus, RedisError, RedisLeaseBackend, connect
from parlour.cluster.wire import (
    CLUSTER_CHANNEL,
    HttpAnswer,
    HttpCall,
    Input,
    Note,
    Output,
    Released,
    Takeover,
    WireBroadcast,
    WireSend,
    decode,
    encode,
    from_wire,
    node_channel,
    owner_channel,
    to_wire,
)
from parlour.core.effects import Broadcast, Close, ConnId, Effect, Relay, Send, Store
from parlour.core.service import Service
from parlour.storage import Fence, MetaRow, StoreFailure
from parlour.transport.runtime import Runtime

__all__ = ["ClusterNode", "Owned"]

log = logging.getLogger("parlour.cluster")

#: How long a stop waits for Redis to take the leases back.
STOP_SECONDS: Final = 3.0
#: How long, in leases, a node waits for the answer to a note it sent for one of its
#: connections before it gives up on it (a request answered in no words of its own): longer
#: than it takes to learn that the owner stopped (its liveness key lives one lease, looked at
#: every third of one).
AWAIT_LEASES: Final = 3.0
#: How long, in leases, a node waits for the answer to a request it keeps whole (a Gather,
#: whose hops other nodes send) before it answers it TRY_AGAIN itself: a hop may sit with a
#: frozen owner that the node which sent it still took for alive, while this node knew of no
#: change to tell it. Looked at every third of a lease: answered within a lease and a third of
#: its sending, inside the bound of docs/cluster.md ("Every request is answered"). A Gather
#: answers in milliseconds, but one held behind a failing commit at a shard is told TRY_AGAIN
#: this way too, before that commit's refusal: a read, sent again, changes nothing.
WHOLE_LEASES: Final = 1.0


@dataclass
class Owned:
    """What a node builds when it becomes a service's owner: the service restored from the
    store, the HTTP routes bound to it, and what to stop when it stops owning it."""

    service: Service
    routes: Mapping[str, HttpHandler] = field(default_factory=dict)
    stop: Callable[[], Awaitable[None]] | None = None
    #: What the service says once its tenure is certain (the lease still held after the
    #: restore, the takeover announced): a tenure given up while restoring says nothing.
    begin: Callable[[], None] | None = None


#: Builds the owned service; gets when the previous owner was last known alive (wall clock,
#: None when nobody knows: the store's heartbeat then).
Factory = Callable[[float | None], Awaitable[Owned]]


def fence_key(service: str) -> str:
    """The parlour_meta key of a service's fencing token (its owner's)."""
    return f"cluster_epoch_{service}"


def alive_key(service: str) -> str:
    return f"parlour:{service}:alive"


def node_alive_key(node: int) -> str:
    return f"parlour:node:{node}:alive"


class ClusterNode:
    def __init__(
        self,
        url: str,
        runtime: Runtime,
        factories: Mapping[str, Factory],
        ttl: float = 3.0,
        wall: Callable[[], float] = time.time,
        shards: Sequence[str] = (),
        on_everyone: Callable[[bytes], None] | None = None,
        unheard: Callable[[str, bytes], list[Effect]] | None = None,
        unanswered: Callable[[str, bytes], list[Effect]] | None = None,
        awaited: Callable[[bytes], tuple[ConnId, Hashable, bool, bool] | None] | None = None,
        answer_keys: Callable[[bytes], tuple[Hashable, ...]] | None = None,
    ) -> None:
        self.url = url
        #: Services owned in fair shares (the shards of /async games; their factories are in
        #: ``factories``): a node holds at most ceil(shards / live nodes) of them.
        self.shards = list(shards)
        #: Told of every note for all nodes (the /async directory's changes), before the
        #: services this node owns get it.
        self.on_everyone = on_everyone
        #: The effects that answer a note nobody took (a request for a shard without owner).
        self.unheard = unheard
        #: The effects that answer a note its owner took but stopped before answering (its
        #: outcome unknown to anyone now); ``unheard`` where not given.
        self.unanswered = unanswered
        #: Whose answer a note is (its connection, what the answer carries, and whether it is
        #: waited for whole: it passes through several owners), or None; and what a frame sent
        #: to a connection answers (placement.awaited, answer_keys).
        self.awaited = awaited
        self.answer_keys = answer_keys
        #: The notes sent for this node's connections to other nodes' services, unanswered yet.
        self.awaiting = Awaiting()
        #: Shards being handed back (their release is announced once the lease is let go).
        self._handing: set[str] = set()
        #: Nodes alive in the cluster (liveness keys), counted every renewal period.
        self.live_nodes = 1
        #: One balance of the shards at a time (the loop's, or one a handover calls for).
        self._balancing = asyncio.Lock()
        self.runtime = runtime
        self.factories = dict(factories)
        self.ttl = ttl
        self.wall = wall
        self.client = connect(url)
        self.backend = RedisLeaseBackend(self.client)
        self.node = 0
        self.bus = Bus(url, self._deliver)
        self.bus.on_gap = self._messages_lost
        # A Redis that does not answer a publication in half a lease is taken for gone, as the
        # leases are (a renewal has at most two thirds of one): what waited is answered.
        self.bus.answer_within = ttl / 2
        self.services: dict[str, ClusterService] = {}
        self.leases: dict[str, Lease] = {}
        self.owned: dict[str, Owned] = {}
        #: The fencing token of each service this node owns (in Runtime.fences meanwhile).
        self.fences: dict[str, Fence] = {}
        #: HTTP between nodes: requests forwarded to owners, questions to every node.
        self.calls = HttpCalls(self.bus.publish, lambda: self.node, self.client, self._owner_routes)
        #: Notes this node sent itself, still to take (see send_note).
        self._notes_here: deque[Note] = deque()
        self._taking_notes = False
        #: What this node answers for itself to ``ask_every_node`` (by path).
        self.node_routes = self.calls.node_routes
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    # -- Start and stop ------------------------------------------------------------------------

    async def start(self) -> None:
        """Number this node, subscribe, learn who owns what, and try once to own each service
        (the first node of a cluster restores everything before it listens)."""
        self.node = int(await self.client.incr("parlour:nodes"))
        self.runtime.number_connections((self.node << NODE_SHIFT) | 1)
        self.runtime.remote = self._route_remote
        self.runtime.on_fenced = self._fenced
        for name in self.factories:
            lease = Lease(self.backend, name, self.node, self.ttl)
            self.leases[name] = lease
            self.services[name] = ClusterService(
                name,
                self.node,
                self._publisher(name),
                self.runtime.execute,
                lease.held,
            )
            self.services[name].cluster_status = self.status
            self.services[name].send_note = self.send_note
            self.services[name].show = self.runtime.show
        await self.bus.start(node_channel(self.node), CLUSTER_CHANNEL)
        await self._beat()
        await self._count_nodes()
        for name, service in self.services.items():
            holder = await self.leases[name].holder()
            if holder is not None:
                service.owner, service.epoch = holder
            if name not in self.shards:
                await self._step(name)
        # The renewals run from now on: taking the shards below (a claim in the store and a
        # restore each) may outlast a lease's validity on a busy machine.
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._lease_loop(name)) for name in self.services if name not in self.shards
        ]
        if self.shards:
            self._tasks.append(loop.create_task(self._shards_loop()))
            self._tasks.append(loop.create_task(self._renewals_loop()))
        self._tasks.append(loop.create_task(self._node_loop()))
        await self._balance()  # the first node restores every shard before it listens
        log.info("cluster node %d on Redis at %s", self.node, _where(self.url))

    async def stop(self) -> None:
        """Hand every owned service over at once (release the leases) and disconnect; bounded:
        a Redis that does not answer must not hold the stop (the leases then expire)."""
        self._stopping = True
        await _cancelled(self._tasks)
        try:
            await asyncio.wait_for(self._hand_over(), STOP_SECONDS)
        except TimeoutError:
            log.warning(
                "cluster: Redis did not answer the stop in %.0f s; the leases will expire", STOP_SECONDS
            )
        await self.bus.close()
        with suppress(Exception):
            await asyncio.wait_for(self.client.aclose(), 1.0)

    async def _hand_over(self) -> None:
        for name, lease in self.leases.items():
            owned = self.services[name].owning
            await self._disown(name)
            with suppress(RedisError, OSError):
                await lease.release()
            if owned:
                self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node)))
        with suppress(RedisError, OSError):
            await self.client.delete(node_alive_key(self.node))

    def status(self) -> dict[str, Any]:
        """For /healthz: this node's number and the services it owns."""
        owns = [name for name, service in self.services.items() if service.owning]
        status: dict[str, Any] = {
            "cluster_node": self.node,
            "cluster_owns": sorted(name for name in owns if name not in self.shards),
        }
        if self.shards:
            status["cluster_nodes"] = self.live_nodes
            status["cluster_shards"] = sorted(
                int(name.rpartition("/")[2]) for name in owns if name in self.shards
            )
        return status

    # -- Shards: owned in fair shares ----------------------------------------------------------

    async def _shards_loop(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self._balance()
            except Exception:  # the balance must go on: a node that stops it owns no shard again
                log.exception("cluster: balancing the shards failed")

    async def _renewals_loop(self) -> None:
        """The shards' renewals, apart from the balance: taking several shards over (a claim
        and a restore each) must not hold back the renewal of those already held."""
        while True:
            await asyncio.sleep(renewal_period(self.ttl))
            await self._renew_shards()

    async def _balance(self) -> None:
        """Renew the shards this node holds, hand back what is beyond its share (a node joined),
        and take free ones up to its share (a node left, or died and its leases lapsed)."""
        if not self.shards:
            return
        async with self._balancing:
            await self._balance_now()

    async def _renew_shards(self) -> None:
        """Renew every shard this node holds, and stamp when each was last known alive, in one
        round trip: a node with many shards renews as cheaply as with one."""
        held = [name for name in self.shards if self.services[name].owning]
        sending: list[tuple[str, float]] = []
        for name in held:
            sent = self.leases[name].start_renewal()
            if sent is None:
                self.services[name].demote("the lease could not be renewed in time")
            else:
                sending.append((name, sent))
        if not sending:
            return
        left = min(self.leases[name].valid_until for name, _ in sending) - self.leases[sending[0][0]].clock()
        stamp = repr(self.wall())
        renewals = [(lease_key(name), self.leases[name].value) for name, _ in sending]
        try:
            answers: list[bool] | None = await asyncio.wait_for(
                self.backend.renew_many(
                    renewals,
                    self.leases[sending[0][0]].ttl_ms,
                    {alive_key(name): stamp for name, _ in sending},
                ),
                max(left, 0.001),
            )
        except (RedisError, OSError, TimeoutError) as error:
            log.warning("cluster: renewing the shards: %s", error)
            answers = None
        for index, (name, sent) in enumerate(sending):
            lease = self.leases[name]
            if answers is None:
                if not lease.held():  # no answer, and the validity is over: stop acting
                    lease.drop()
                    self.services[name].demote("Redis did not answer in time")
            elif not lease.renewal_done(sent, answers[index]):
                self.services[name].demote("the lease could not be renewed")

    def _rebalance_soon(self) -> None:
        """Another node handed shards back: take them now, not at the next period."""
        if not self._stopping:
            task = asyncio.get_running_loop().create_task(self._balance())
            self._tasks.append(task)
            task.add_done_callback(self._tasks.remove)

    async def _balance_now(self) -> None:
        held = [name for name in self.shards if self.services[name].owning]
        share = math.ceil(len(self.shards) / max(1, self.live_nodes))
        for name in held[share:]:
            await self._release(name)
        wanted = share - len(held)
        if wanted <= 0 or self._stopping:
            return
        # Start the search at a place of this node's own, so that newcomers rarely race for
        # the same free shard.
        start = (self.node * 7) % len(self.shards)
        for name in self.shards[start:] + self.shards[:start]:
            if wanted <= 0:
                break
            if self.services[name].owning:
                continue
            try:
                if await self.leases[name].acquire():
                    await self._take_over(name)
                    wanted -= 1
            except (RedisError, OSError, TimeoutError) as error:
                log.warning("cluster: lease of %s: %s", name, error)
                return

    async def _release(self, name: str) -> None:
        """Hand a shard over: stop its games, let what they made be stored, then release the
        lease and say so (the next owner restores them from the store)."""
        service, lease = self.services[name], self.leases[name]
        self._handing.add(name)
        try:
            service.demote("handed over to keep shares fair")
            await self.runtime.drain_store(self.ttl)
            with suppress(RedisError, OSError):
                await lease.release()
        finally:
            self._handing.discard(name)
        self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node)))
        log.info("cluster: node %d handed %s back", self.node, name)

    # -- Leases --------------------------------------------------------------------------------

    async def _lease_loop(self, name: str) -> None:
        period = self.leases[name].period
        while True:
            await asyncio.sleep(period)
            await self._step(name)

    async def _step(self, name: str) -> None:
        """Renew the lease we hold, or try to take a free one."""
        lease, service = self.leases[name], self.services[name]
        try:
            if service.owning:
                left = lease.valid_until - lease.clock()
                renewed = left > 0 and await asyncio.wait_for(lease.renew(), left)
                if renewed:
                    await self.client.set(alive_key(name), repr(self.wall()))
                else:
                    lease.drop()
                    service.demote("the lease could not be renewed in time")
            elif await lease.acquire():
                await self._take_over(name)
        except (RedisError, OSError, TimeoutError) as error:
            log.warning("cluster: lease of %s: %s", name, error)
            if service.owning and not lease.held():
                lease.drop()
                service.demote("Redis did not answer in time")

    async def _take_over(self, name: str) -> None:
        lease, service = self.leases[name], self.services[name]
        epoch = lease.epoch
        # The fencing token, claimed in the store before anything is read from it: whatever
        # the previous owner still commits is then either in what is restored or refused
        # (its commits carry its own token). The random part tells tenures apart even after
        # Redis restarted empty and counts nodes and epochs from 1 again.
        fence = Fence(fence_key(name), f"{self.node}:{epoch}:{secrets.token_hex(8)}")
        try:
            await self.runtime.stored([Store([MetaRow(fence.key, fence.value)])])
        except StoreFailure as failure:
            log.warning("cluster: cannot claim %s in the store: %s", name, failure)
            with suppress(RedisError, OSError):
                await lease.release()
            return
        last = await self.client.get(alive_key(name))
        # The previous owner was alive until one renewal period after its last renewal, as a
        # restarting server counts from its last heartbeat (Runtime.HEARTBEAT_SECONDS).
        heartbeat = float(last) + lease.period if last is not None else None
        started = time.perf_counter()
        try:
            owned = await self.factories[name](heartbeat)
        except StoreFailure as failure:
            # The store went away between the claim and the restore: let the lease go, so that
            # this node or another takes it again (and claims it anew) once the store answers.
            log.warning("cluster: cannot restore %s from the store: %s", name, failure)
            with suppress(RedisError, OSError):
                await lease.release()
            return
        if not lease.held():
            # Let it go at once (Redis may still count it ours for a while: an acquisition
            # answered late, Redis having stalled), so that a node takes it again now.
            with suppress(RedisError, OSError):
                await lease.release()
            if owned.stop is not None:
                await owned.stop()
            log.warning("cluster: the lease of %s lapsed while restoring it", name)
            return
        self.owned[name] = owned
        self.fences[name] = fence
        # Its inputs are executed as the gateway's (this node's ClusterService), its restores
        # and robots' answers as the service's own.
        self.runtime.fences[service] = self.runtime.fences[owned.service] = fence
        service.on_lost = lambda: self._lost(name)
        service.promote(owned.service, epoch)
        self._owner_changed(name)
        await self.bus.subscribe(owner_channel(name))
        self.bus.publish(CLUSTER_CHANNEL, encode(Takeover(name, self.node, epoch)))
        if owned.begin is not None:
            owned.begin()
        log.info(
            "cluster: node %d owns %s (epoch %d), restored in %.3f s",
            self.node,
            name,
            epoch,
            time.perf_counter() - started,
        )

    def _lost(self, name: str) -> None:
        """The service was demoted (lease lost or lapsed, or another node took it over). The
        other nodes hear it at once (Released), not when another node's takeover is announced:
        what they send this node for it meanwhile is dropped here, so they answer it."""
        self._unfence(name)
        if not self._stopping and name not in self._handing:
            self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node)))
        asyncio.get_running_loop().create_task(self._disown(name))

    def _fenced(self, fence: Fence) -> None:
        """A commit found the service claimed in the store by another node: stop at once, not
        at the next renewal (every commit until then would be refused)."""
        for name, mine in list(self.fences.items()):
            if mine == fence:
                self.leases[name].drop()
                self.services[name].demote("another node claimed it in the store")

    def _unfence(self, name: str) -> None:
        """What this node makes from now on is not the service's: it carries its token no more."""
        fence = self.fences.pop(name, None)
        if fence is not None:
            for guarded in [service for service, held in self.runtime.fences.items() if held == fence]:
                del self.runtime.fences[guarded]

    async def _disown(self, name: str) -> None:
        self._unfence(name)
        service = self.services[name]
        if service.owning and self._stopping:
            service.inner = None  # stopping: the service said goodbye already
        owned = self.owned.pop(name, None)
        if owned is None:
            return
        if not self._stopping:  # a stop closes the subscription whole
            with suppress(RedisError, OSError):
                await self.bus.unsubscribe(owner_channel(name))
        if owned.stop is not None:
            await owned.stop()

    # -- Node liveness ---------------------------------------------------------------------------

    async def _count_nodes(self) -> None:
        count = 0
        async for _ in self.client.scan_iter(match="parlour:node:*:alive", count=1000):
            count += 1
        self.live_nodes = max(1, count)

    async def _beat(self) -> bool:
        """Refresh this node's liveness key; whether it was still there."""
        # As long as a lease: a node that has died is counted out (its shares given to the
        # others) when its leases lapse, not later.
        ttl_ms = round(self.ttl * 1000)
        return await self.backend.beat(node_alive_key(self.node), "parlour:nodes", self.node, ttl_ms)

    async def _keep_alive(self) -> None:
        """Refresh the liveness key. Found lapsed (this node was frozen, or cut off from Redis,
        for a lease), the owners may have counted this node gone and forgotten its connections:
        frames it sends them for those would go unanswered, so they reconnect (1012), as after
        lost messages."""
        if not await self._beat():
            log.warning("cluster: this node's liveness lapsed; its connections to other nodes reconnect")
            for service in self.services.values():
                service.messages_lost()

    def _messages_lost(self) -> None:
        """Bus.on_gap: Redis answers again after messages may have been lost. This node says it
        is alive first (a Redis that restarted empty lost the key, and an owner must not take
        the clients reconnecting through it for a dead node's); a takeover announced meanwhile
        may be one of the lost messages, so an owner announces its tenure again and a gateway
        reads who holds each lease; then the connections whose messages cross Redis reconnect
        (ClusterService.messages_lost)."""

        # The answers to the requests this node routed may have been among the lost messages:
        # each is told its outcome is unknown (a read: TRY_AGAIN), rather than left waiting.
        for entry in self.awaiting.everything():
            if isinstance(entry.key, str):  # answered in words of its own, echoing its request_id
                self._unanswered(entry.to, entry.data)

        async def recover() -> None:
            with suppress(RedisError, OSError):
                await self._beat()
            for name, service in self.services.items():
                if service.owning:
                    self.bus.publish(CLUSTER_CHANNEL, encode(Takeover(name, self.node, service.epoch)))
                    continue
                with suppress(RedisError, OSError):
                    holder = await self.leases[name].holder()
                    if holder is not None and not service.owning:
                        service.taken_over(*holder)
                        self._owner_changed(name)
            for service in self.services.values():
                service.messages_lost()

        self._tasks.append(asyncio.get_running_loop().create_task(recover()))

    async def _node_loop(self) -> None:
        """Keep this node's liveness key; on owners, forget the connections of dead nodes."""
        period = self.ttl / 3
        while True:
            await asyncio.sleep(period)
            self._give_up()  # first, whatever Redis says: it needs only memory
            try:
                await self._keep_alive()
                await self._count_nodes()
                owners = {service.owner for service in self.services.values()} - {0, self.node}
                for node in sorted(owners):
                    if not await self.client.exists(node_alive_key(node)):
                        await self._owner_gone(node)
                nodes = {node for service in self.services.values() for node in service.remote}
                for node in sorted(nodes):
                    if not await self.client.exists(node_alive_key(node)):
                        log.warning("cluster: node %d is gone; its connections with it", node)
                        for service in self.services.values():
                            service.node_gone(node, self.runtime.clock())
            except (RedisError, OSError) as error:
                log.warning("cluster: liveness: %s", error)

    async def _owner_gone(self, node: int) -> None:
        """Node ``node`` did not refresh its liveness key: each lease it held that Redis no longer
        holds for it (expired, or taken by another) has no owner until the next takeover. One it
        still holds (its key came late: a busy machine) is looked at again next time."""
        for name, service in self.services.items():
            if service.owner == node and await self.leases[name].holder() != (node, service.epoch):
                log.warning("cluster: node %d is not alive and its lease of %s is over", node, name)
                service.released(node)
                self._owner_changed(name)

    # -- Messages ------------------------------------------------------------------------------

    def _publisher(self, name: str) -> Callable[[Input], None]:
        channel, publish = owner_channel(name), self.bus.publish

        def send(message: Input) -> None:
            publish(channel, encode(message), lambda: self.services[name].unheard(message))

        return send

    def _deliver(self, channel: str, data: bytes) -> None:
        try:
            message = decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("cluster: unreadable message on %s: %s", channel, error)
            return
        if type(message) is Input:
            service = self.services.get(message.service)
            if service is not None:
                service.feed(message, self.runtime.clock())
        elif type(message) is Output:
            # Effects for this node's connections, stored already by the owner: shown at once
            # (held behind this node's own commits, a failed one would refuse them).
            if self.awaiting:
                self._replied(message)
            self.runtime.show(from_wire(message.effects))
        elif type(message) is HttpCall:
            asyncio.get_running_loop().create_task(self.calls.answer(message))
        elif type(message) is HttpAnswer:
            self.calls.answered(message)
        elif type(message) is Note:
            if message.to != "*" or message.sender != self.node:  # its own: taken already
                self._noted(message)
        elif type(message) is Takeover:
            service = self.services.get(message.service)
            if service is not None:
                service.taken_over(message.node, message.epoch)
                self._owner_changed(message.service)
        elif type(message) is Released:
            service = self.services.get(message.service)
            if service is not None:
                service.released(message.node)
                self._owner_changed(message.service)
                if message.service in self.shards and message.node != self.node:
                    self._rebalance_soon()

    def _noted(self, note: Note) -> None:
        now = self.runtime.clock()
        if note.to == "*":
            if self.on_everyone is not None:
                self.on_everyone(note.data)
            for service in self.services.values():
                service.noted(note.data, now)
            return
        owner = self.services.get(note.to)
        if owner is None:
            return
        if self.awaiting.whole and owner.acting() is not None and note.epoch in (0, owner.epoch):
            self._taken_here(note.data)
        if note.epoch:
            # Meant for one tenure: taken by its owner while it acts, dropped otherwise (by a
            # node that has just lost the service, or woke up to find its lease lapsed); its
            # sender answers it once it learns that tenure is over.
            if note.epoch == owner.epoch:
                owner.noted(note.data, now)
            return
        if not owner.noted(note.data, now) and owner.owner in (0, self.node):
            # Not taken here: this node owned it no more as the note came, and no other node
            # has announced it owns it (one that had would have had the note too, having
            # subscribed first): nobody answers it but us.
            self._unheard(note.to, note.data)

    def send_note(self, to: str, data: bytes) -> None:
        """A note for the owner of ``to`` (``"*"``: every node, this one too).

        What this node itself takes is handed over here, without a round trip through Redis
        (it would cost each routed request two messages and a loop iteration, even on one
        node: see docs/cluster.md, "What it costs"); the rest is published. Both keep the
        order in which notes were sent: notes to this node's services are taken one at a
        time, in order, never inside one another, as Redis would deliver them."""
        if to == "*":
            self.bus.publish(CLUSTER_CHANNEL, encode(Note(to, data, self.node)))
            self._here(Note(to, data, self.node))
            return
        owner = self.services.get(to)
        if owner is not None and owner.acting() is not None:
            self._here(Note(to, data, self.node))
            return
        waiting = self.awaited(data) if self.awaited is not None and owner is not None else None
        if owner is None or waiting is None:
            self.bus.publish(
                owner_channel(to), encode(Note(to, data, self.node)), lambda: self._not_heard(to, data)
            )
            return
        conn, key, whole, replies = waiting
        mine = node_of(conn) == self.node
        kept = self.awaiting.find(conn, key) if mine else None
        if owner.owner in (0, self.node):
            # Nobody owns it now (this node no longer does): nobody would answer it. Published,
            # it could reach a node frozen with the shard's channel still subscribed, which
            # answers it only when it wakes (docs/cluster.md, "Every request is answered").
            if kept is not None:
                self._answer(kept)
            else:
                self._unheard(to, data)
            return
        if not mine:  # another node's connection: the owner answers it, or that node does
            self.bus.publish(
                owner_channel(to), encode(Note(to, data, self.node)), lambda: self._not_heard(to, data)
            )
            return
        # Waited for until answered, or answered here once its owner's tenure is over. A
        # request kept whole is kept once: its hops are answered by one entry, once.
        entry = kept
        if entry is None:
            entry = Awaited(conn, key, to, owner.epoch, data, self.runtime.clock(), whole, replies)
            self.awaiting.add(entry)
        self.bus.publish(
            owner_channel(to),
            encode(Note(to, data, self.node, owner.epoch)),
            lambda: self._answer(entry),
        )

    def _here(self, note: Note) -> None:
        """Take a note of this node's own, after those it is already taking."""
        self._notes_here.append(note)
        if self._taking_notes:
            return
        self._taking_notes = True
        try:
            while self._notes_here:
                self._noted(self._notes_here.popleft())
        finally:
            self._taking_notes = False

    def _unheard(self, to: str, data: bytes) -> None:
        """Answer a note nobody takes (TRY_AGAIN to its connection). Shown at once, never held
        behind this node's own commits: it stores nothing, and a commit that failed meanwhile
        (the node's store stopped, or it woke from a pause into a refused batch) would drop
        it with the sends it refuses, leaving its request unanswered."""
        if self.unheard is not None:
            effects = self.unheard(to, data)
            if effects:
                self.runtime.show(effects)

    def _not_heard(self, to: str, data: bytes) -> None:
        """A publication of a note reached nobody, as far as Redis said: answered as unheard,
        or, where Redis never said (the bus lost its connection with it written), as a note
        whose owner may have taken it."""
        if self.bus.unsure:
            self._unanswered(to, data)
        else:
            self._unheard(to, data)

    def _unanswered(self, to: str, data: bytes) -> None:
        """Answer a note whose owner took it (Redis counted it heard) but whose tenure ended
        before it answered: shown at once, as ``_unheard``."""
        answer = self.unanswered if self.unanswered is not None else self.unheard
        if answer is not None:
            effects = answer(to, data)
            if effects:
                self.runtime.show(effects)

    def await_whole(self, conn: ConnId, key: Hashable, to: str, data: bytes) -> None:
        """A request of this node's connection ``conn`` goes to the owner of ``to`` and will be
        answered by another's (placement.Router.waits): waited for whole until a frame echoes
        ``key``, and answered here (``data``: how, as a note nobody took) if the tenure of
        ``to``'s owner ends first, or it waited too long (WHOLE_LEASES). Not when ``to`` is this
        node's own: it is taken here, and a hop it sends on is waited for as it goes
        (send_note)."""
        service = self.services.get(to)
        if service is None or service.owner in (0, self.node) or self.awaiting.find(conn, key) is not None:
            return
        self.awaiting.add(Awaited(conn, key, to, service.epoch, data, self.runtime.clock(), True))

    def _give_up(self) -> None:
        """Stop waiting for what waited too long; a request kept whole is answered here."""
        now = self.runtime.clock()
        for lost in self.awaiting.forget(now - AWAIT_LEASES * self.ttl, now - WHOLE_LEASES * self.ttl):
            self._unanswered(lost.to, lost.data)

    def _taken_here(self, data: bytes) -> None:
        """A note this node's own service takes: a request of this node's connection kept whole
        is answered here now (or refused with this node's commit), or its next hop is waited
        for as it is sent: the wait so far ends."""
        waiting = self.awaited(data) if self.awaited is not None else None
        if waiting is not None and waiting[2] and node_of(waiting[0]) == self.node:
            kept = self.awaiting.find(waiting[0], waiting[1])
            if kept is not None:
                self.awaiting.take(kept)

    def _answer(self, entry: Awaited) -> None:
        """A note of ``awaiting`` that nobody will answer now (Redis says nobody heard it, or
        its owner's tenure is over): answered here, unless it was already."""
        if self.awaiting.take(entry):
            self._not_heard(entry.to, entry.data)

    def _owner_changed(self, name: str) -> None:
        """This node learned who owns ``name`` now (maybe nobody): the notes it waits for from
        an earlier tenure get no answer from it (it drops them), nor from a later one (which
        takes no note meant for another): they are answered here."""
        if self.awaiting:
            service = self.services[name]
            current = service.epoch if service.owner != 0 else 0
            for entry in self.awaiting.ended(name, current):
                self._unanswered(entry.to, entry.data)

    def _replied(self, message: Output) -> None:
        """Effects from an owner for this node's connections: those that answer awaited notes
        end the wait."""
        awaiting, keys = self.awaiting.by_conn, self.answer_keys
        if keys is None:
            return
        for effect in message.effects:
            if type(effect) is WireSend:
                if effect.conn in awaiting:
                    self.awaiting.replied(effect.conn, keys(effect.data))
            elif type(effect) is WireBroadcast:
                for conn in effect.conns:
                    if conn in awaiting:
                        instead = effect.instead or {}
                        self.awaiting.replied(conn, keys(instead.get(conn, effect.data)))

    def _route_remote(self, effects: list[Effect]) -> None:
        """Runtime.remote: effects for connections of other nodes, one message per node."""
        me = self.node
        by_node: dict[int, list[Effect]] = {}
        # Notes first: a game placed on a shard is there before its players hear it started,
        # and a sign-in is known to every node before its client hears it succeeded.
        for effect in effects:
            if type(effect) is Relay:
                self.send_note(effect.to, effect.data)
        for effect in effects:
            if type(effect) is Broadcast:
                split: dict[int, list[int]] = {}
                for conn in effect.conns:
                    node = node_of(conn)
                    if node != me:
                        split.setdefault(node, []).append(conn)
                for node, conns in split.items():
                    by_node.setdefault(node, []).append(Broadcast(conns, effect.data, effect.instead))
            elif type(effect) is Send or type(effect) is Close:
                node = node_of(effect.conn)
                if node != me and node:
                    by_node.setdefault(node, []).append(effect)
        for node, items in by_node.items():
            self.bus.publish(node_channel(node), encode(Output(to_wire(items))))

    # -- HTTP ----------------------------------------------------------------------------------

    def http_handler(self, name: str, path: str) -> HttpHandler:
        """The handler of ``path`` on any node: the owner's own routes there, forwarded to the
        owner over Redis elsewhere."""
        return self.calls.handler(name, path)

    async def ask_every_node(self, request: HttpRequest) -> dict[int, ApiResponse | None]:
        """``request`` answered by every live node's ``node_routes`` (see HttpCalls)."""
        return await self.calls.ask_every_node(request)

    def _owner_routes(self, name: str) -> Mapping[str, HttpHandler] | None:
        """The HTTP routes of ``name`` while this node owns it and its lease may be acted on
        (as for websocket inputs: an account made by an owner past its tenure could be missed
        by the next owner's restore); None otherwise."""
        owned, service = self.owned.get(name), self.services.get(name)
        if owned is None or service is None or service.acting() is None:
            return None
        return owned.routes


async def _cancelled(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until they are done. A cancellation can be lost on Python 3.11
    (``asyncio.wait_for`` swallows one that arrives as its inner call completes, and the loop
    task then sleeps on): whatever is still running a moment later is cancelled again."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.2)
    for task in tasks:
        if not task.cancelled():
            with suppress(asyncio.CancelledError, Exception):
                task.result()


def _where(url: str) -> str:
    """Where Redis is, for logs: host and port only (a URL may carry a password)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}" if parts.hostname else parts.scheme
