"""The shards of /async games, owned in fair shares (docs/cluster.md, "Placement").

Each shard is owned like a service, by lease, and every node owns a fair share: at most
ceil(shards / live nodes). :class:`Shares` renews the shards this node holds (all in one round
trip), hands back what is beyond its share (a node joined) and takes free ones up to it (a node
left, or died and its leases lapsed), through the node's ``Ownership``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence

from parlour.cluster.gateway import ClusterService
from parlour.cluster.lease import Lease, lease_key, renewal_period
from parlour.cluster.ownership import Ownership, alive_key
from parlour.cluster.redisbus import RedisError, RedisLeaseBackend

__all__ = ["Shares"]

log = logging.getLogger("parlour.cluster")


class Shares:
    """The shards one node holds: renewed, balanced against the live nodes."""

    def __init__(
        self,
        ownership: Ownership,
        backend: RedisLeaseBackend,
        services: Mapping[str, ClusterService],
        leases: Mapping[str, Lease],
        shards: Sequence[str],
        node: Callable[[], int],
        live_nodes: Callable[[], int],
        ttl: float,
        wall: Callable[[], float] = time.time,
    ) -> None:
        #: Takes the shards over and hands them back; says when the node stops.
        self.ownership = ownership
        self.backend = backend
        #: The node's services and their leases, by name.
        self.services = services
        self.leases = leases
        #: Services owned in fair shares (the shards of /async games; their factories are the
        #: node's, as any service's): a node holds at most ceil(shards / live nodes) of them.
        self.shards = shards
        #: This node's number (known once it has joined the cluster).
        self.node = node
        #: Nodes alive in the cluster (liveness keys), counted every renewal period.
        self.live_nodes = live_nodes
        self.ttl = ttl
        self.wall = wall
        #: One balance of the shards at a time (the loop's, or one a handover calls for).
        self._balancing = asyncio.Lock()
        #: The balance and renewal loops, and the balances under way (cancelled by a stop).
        self.tasks: list[asyncio.Task[None]] = []

    def run(self) -> None:
        """Start the shards' balance and renewals (none without shards)."""
        if self.shards:
            loop = asyncio.get_running_loop()
            self.tasks.append(loop.create_task(self._shards_loop()))
            self.tasks.append(loop.create_task(self._renewals_loop()))

    async def _shards_loop(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self.balance()
            except Exception:  # the balance must go on: a node that stops it owns no shard again
                log.exception("cluster: balancing the shards failed")

    async def _renewals_loop(self) -> None:
        """The shards' renewals, apart from the balance: taking several shards over (a claim
        and a restore each) must not hold back the renewal of those already held."""
        while True:
            await asyncio.sleep(renewal_period(self.ttl))
            await self._renew_shards()

    async def balance(self) -> None:
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

    def rebalance_soon(self) -> None:
        """Another node handed shards back: take them now, not at the next period."""
        if not self.ownership.stopping:
            task = asyncio.get_running_loop().create_task(self.balance())
            self.tasks.append(task)
            task.add_done_callback(self.tasks.remove)

    async def _balance_now(self) -> None:
        held = [name for name in self.shards if self.services[name].owning]
        share = math.ceil(len(self.shards) / max(1, self.live_nodes()))
        for name in held[share:]:
            await self.ownership.release(name)
        wanted = share - len(held)
        if wanted <= 0 or self.ownership.stopping:
            return
        # Start the search at a place of this node's own, so that newcomers rarely race for
        # the same free shard.
        start = (self.node() * 7) % len(self.shards)
        for name in [*self.shards[start:], *self.shards[:start]]:
            if wanted <= 0:
                break
            if self.services[name].owning:
                continue
            try:
                if await self.leases[name].acquire():
                    await self.ownership.take_over(name)
                    wanted -= 1
            except (RedisError, OSError, TimeoutError) as error:
                log.warning("cluster: lease of %s: %s", name, error)
                return
