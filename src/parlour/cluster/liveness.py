"""Which nodes of a cluster are alive (docs/cluster.md, "Ownership by lease").

Each node keeps a liveness key in Redis (``parlour:node:{n}:alive``, as long as a lease),
refreshed every third of a lease; the live nodes are counted from those keys, for the shards'
fair shares. :class:`Liveness` keeps this node's key, forgets the connections of nodes whose key
is gone, takes an owner whose key is gone (and whose lease Redis no longer holds for it) for no
owner, and recovers from messages lost between nodes (Bus.on_gap).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import suppress

import redis.asyncio as aioredis

from parlour.cluster.gateway import ClusterService
from parlour.cluster.lease import Lease
from parlour.cluster.notes import Notes
from parlour.cluster.redisbus import Bus, RedisError, RedisLeaseBackend
from parlour.cluster.wire import CLUSTER_CHANNEL, Takeover, encode

__all__ = ["Liveness", "node_alive_key"]

log = logging.getLogger("parlour.cluster")


def node_alive_key(node: int) -> str:
    return f"parlour:node:{node}:alive"


class Liveness:
    """This node's liveness key, and what it learns of the other nodes' keys."""

    def __init__(
        self,
        client: aioredis.Redis,
        backend: RedisLeaseBackend,
        bus: Bus,
        services: Mapping[str, ClusterService],
        leases: Mapping[str, Lease],
        notes: Notes,
        node: Callable[[], int],
        clock: Callable[[], float],
        ttl: float,
    ) -> None:
        self.client = client
        self.backend = backend
        self.bus = bus
        #: The node's services and their leases, by name.
        self.services = services
        self.leases = leases
        #: What waits for answers from owners that may be gone.
        self.notes = notes
        #: This node's number (known once it has joined the cluster).
        self.node = node
        self.clock = clock
        self.ttl = ttl
        #: Nodes alive in the cluster (liveness keys), counted every renewal period.
        self.live_nodes = 1
        #: The liveness loop, and the recoveries from lost messages (cancelled by a stop).
        self.tasks: list[asyncio.Task[None]] = []

    def run(self) -> None:
        """Start keeping this node's liveness key, and looking at the others'."""
        self.tasks.append(asyncio.get_running_loop().create_task(self._node_loop()))

    async def leave(self) -> None:
        """This node stops: its liveness key goes (a stop)."""
        with suppress(RedisError, OSError):
            await self.client.delete(node_alive_key(self.node()))

    async def count_nodes(self) -> None:
        count = 0
        async for _ in self.client.scan_iter(match="parlour:node:*:alive", count=1000):
            count += 1
        self.live_nodes = max(1, count)

    async def beat(self) -> bool:
        """Refresh this node's liveness key; whether it was still there."""
        # As long as a lease: a node that has died is counted out (its shares given to the
        # others) when its leases lapse, not later.
        ttl_ms = round(self.ttl * 1000)
        node = self.node()
        return await self.backend.beat(node_alive_key(node), "parlour:nodes", node, ttl_ms)

    async def keep_alive(self) -> None:
        """Refresh the liveness key. Found lapsed (this node was frozen, or cut off from Redis,
        for a lease), the owners may have counted this node gone and forgotten its connections:
        frames it sends them for those would go unanswered, so they reconnect (1012), as after
        lost messages."""
        if not await self.beat():
            log.warning("cluster: this node's liveness lapsed; its connections to other nodes reconnect")
            for service in self.services.values():
                service.messages_lost()

    def messages_lost(self) -> None:
        """Bus.on_gap: Redis answers again after messages may have been lost. This node says it
        is alive first (a Redis that restarted empty lost the key, and an owner must not take
        the clients reconnecting through it for a dead node's); a takeover announced meanwhile
        may be one of the lost messages, so an owner announces its tenure again and a gateway
        reads who holds each lease; then the connections whose messages cross Redis reconnect
        (ClusterService.messages_lost)."""
        self.notes.messages_lost()

        async def recover() -> None:
            with suppress(RedisError, OSError):
                await self.beat()
            for name, service in self.services.items():
                if service.owning:
                    self.bus.publish(CLUSTER_CHANNEL, encode(Takeover(name, self.node(), service.epoch)))
                    continue
                with suppress(RedisError, OSError):
                    holder = await self.leases[name].holder()
                    if holder is not None and not service.owning:
                        service.taken_over(*holder)
                        self.notes.owner_changed(name)
            for service in self.services.values():
                service.messages_lost()

        self.tasks.append(asyncio.get_running_loop().create_task(recover()))

    async def _node_loop(self) -> None:
        """Keep this node's liveness key; on owners, forget the connections of dead nodes."""
        period = self.ttl / 3
        while True:
            await asyncio.sleep(period)
            self.notes.give_up()  # first, whatever Redis says: it needs only memory
            try:
                await self.keep_alive()
                await self.count_nodes()
                owners = {service.owner for service in self.services.values()} - {0, self.node()}
                for node in sorted(owners):
                    if not await self.client.exists(node_alive_key(node)):
                        await self._owner_gone(node)
                nodes = {node for service in self.services.values() for node in service.remote}
                for node in sorted(nodes):
                    if not await self.client.exists(node_alive_key(node)):
                        log.warning("cluster: node %d is gone; its connections with it", node)
                        for service in self.services.values():
                            service.node_gone(node, self.clock())
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
                self.notes.owner_changed(name)
