"""What a node owns, by lease (docs/cluster.md, "Ownership by lease").

:class:`Ownership` keeps a lease loop per stateful service (take the lease when free, renew it
every ttl/6, let go when it lapses); the shards of /async games are taken and handed back by
shares.py, through it. A service it takes over is first claimed in the store (its fencing
token), then restored from the store and announced (``Takeover``); a service it hands over is
stopped, what it made stored, and its lease released and announced (``Released``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field

import redis.asyncio as aioredis

from parlour.cluster.calls import HttpHandler
from parlour.cluster.gateway import ClusterService
from parlour.cluster.lease import Lease
from parlour.cluster.redisbus import Bus, RedisError
from parlour.cluster.wire import CLUSTER_CHANNEL, Released, Takeover, encode, owner_channel
from parlour.core.effects import Store
from parlour.core.service import Service
from parlour.storage import Fence, MetaRow, StoreFailure
from parlour.transport.runtime import Runtime

__all__ = ["Factory", "Owned", "Ownership", "alive_key", "fence_key"]

log = logging.getLogger("parlour.cluster")


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


class Ownership:
    """The leases of one node's services: renewed, taken over, handed back."""

    def __init__(
        self,
        runtime: Runtime,
        bus: Bus,
        client: aioredis.Redis,
        services: Mapping[str, ClusterService],
        leases: Mapping[str, Lease],
        factories: Mapping[str, Factory],
        node: Callable[[], int],
        owner_changed: Callable[[str], None],
        ttl: float,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.runtime = runtime
        self.bus = bus
        self.client = client
        #: The node's services and their leases, by name.
        self.services = services
        self.leases = leases
        self.factories = factories
        #: This node's number (known once it has joined the cluster).
        self.node = node
        #: Told when this node becomes a service's owner (Notes.owner_changed: what this node
        #: awaits from an earlier tenure is answered).
        self.owner_changed = owner_changed
        self.ttl = ttl
        self.wall = wall
        self.owned: dict[str, Owned] = {}
        #: The fencing token of each service this node owns (in Runtime.fences meanwhile).
        self.fences: dict[str, Fence] = {}
        #: Shards being handed back (their release is announced once the lease is let go).
        self._handing: set[str] = set()
        #: The lease loops (cancelled by a stop).
        self.tasks: list[asyncio.Task[None]] = []
        #: Set once the node stops: nothing more is taken, and its services are let go whole.
        self.stopping = False

    def run(self, names: Iterable[str]) -> None:
        """Start the renewals: a lease loop for each service of ``names``."""
        loop = asyncio.get_running_loop()
        self.tasks.extend(loop.create_task(self._lease_loop(name)) for name in names)

    async def hand_over(self) -> None:
        """Let every service go (a stop): release each lease, and say so for those owned."""
        for name, lease in self.leases.items():
            owned = self.services[name].owning
            await self._disown(name)
            with suppress(RedisError, OSError):
                await lease.release()
            if owned:
                self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node())))

    async def release(self, name: str) -> None:
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
        self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node())))
        log.info("cluster: node %d handed %s back", self.node(), name)

    # -- Leases --------------------------------------------------------------------------------

    async def _lease_loop(self, name: str) -> None:
        period = self.leases[name].period
        while True:
            await asyncio.sleep(period)
            await self.step(name)

    async def step(self, name: str) -> None:
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
                await self.take_over(name)
        except (RedisError, OSError, TimeoutError) as error:
            log.warning("cluster: lease of %s: %s", name, error)
            if service.owning and not lease.held():
                lease.drop()
                service.demote("Redis did not answer in time")

    async def take_over(self, name: str) -> None:
        """Own ``name``, whose lease this node has just acquired: claim it in the store, restore
        it, and say so (or let the lease go if that fails)."""
        lease, service = self.leases[name], self.services[name]
        epoch = lease.epoch
        # The fencing token, claimed in the store before anything is read from it: whatever
        # the previous owner still commits is then either in what is restored or refused
        # (its commits carry its own token). The random part tells tenures apart even after
        # Redis restarted empty and counts nodes and epochs from 1 again.
        fence = Fence(fence_key(name), f"{self.node()}:{epoch}:{secrets.token_hex(8)}")
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
        self.owner_changed(name)
        await self.bus.subscribe(owner_channel(name))
        self.bus.publish(CLUSTER_CHANNEL, encode(Takeover(name, self.node(), epoch)))
        if owned.begin is not None:
            owned.begin()
        log.info(
            "cluster: node %d owns %s (epoch %d), restored in %.3f s",
            self.node(),
            name,
            epoch,
            time.perf_counter() - started,
        )

    def _lost(self, name: str) -> None:
        """The service was demoted (lease lost or lapsed, or another node took it over). The
        other nodes hear it at once (Released), not when another node's takeover is announced:
        what they send this node for it meanwhile is dropped here, so they answer it."""
        self._unfence(name)
        if not self.stopping and name not in self._handing:
            self.bus.publish(CLUSTER_CHANNEL, encode(Released(name, self.node())))
        asyncio.get_running_loop().create_task(self._disown(name))

    def fenced(self, fence: Fence) -> None:
        """Runtime.on_fenced: a commit found the service claimed in the store by another node:
        stop at once, not at the next renewal (every commit until then would be refused)."""
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
        if service.owning and self.stopping:
            service.inner = None  # stopping: the service said goodbye already
        owned = self.owned.pop(name, None)
        if owned is None:
            return
        if not self.stopping:  # a stop closes the subscription whole
            with suppress(RedisError, OSError):
                await self.bus.unsubscribe(owner_channel(name))
        if owned.stop is not None:
            await owned.stop()
