"""One node of a cluster: its number, its services' gateways, and the messages between nodes.

``ClusterNode`` is what app.py wires in with ``--cluster redis://...``: it numbers the node
(``INCR parlour:nodes``) so that its connection ids are unique across the cluster, puts a
gateway (``ClusterService``) in front of each stateful service, subscribes to its channels and
delivers what arrives on them. It is made of parts, each given what it works with:

- ``ownership`` (ownership.py): the leases of the services: renewed, taken over (claimed in
  the store and restored from it), handed back;
- ``shares`` (shares.py): the shards of /async games, held in fair shares (through
  ``ownership``);
- ``liveness`` (liveness.py): this node's liveness key, the other nodes', and the recovery from
  messages lost between nodes;
- ``notes`` (notes.py): the notes between services, the answers this node awaits for its
  connections (and gives itself when nobody will), and the effects for other nodes'
  connections (Runtime.remote);
- ``calls`` (calls.py): HTTP requests forwarded to owners, and questions to every node.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import suppress
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.cluster.calls import HttpCalls, HttpHandler
from parlour.cluster.gateway import NODE_SHIFT, ClusterService
from parlour.cluster.lease import Lease
from parlour.cluster.liveness import Liveness
from parlour.cluster.notes import Notes
from parlour.cluster.ownership import Factory, Ownership
from parlour.cluster.redisbus import Bus, RedisLeaseBackend, connect
from parlour.cluster.shares import Shares
from parlour.cluster.wire import (
    CLUSTER_CHANNEL,
    HttpAnswer,
    HttpCall,
    Input,
    Note,
    Output,
    Released,
    Takeover,
    decode,
    encode,
    from_wire,
    node_channel,
    owner_channel,
)
from parlour.core.effects import ConnId, Effect
from parlour.transport.runtime import Runtime

__all__ = ["ClusterNode"]

log = logging.getLogger("parlour.cluster")

#: How long a stop waits for Redis to take the leases back.
STOP_SECONDS: Final = 3.0


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
        self.runtime = runtime
        self.factories = dict(factories)
        self.ttl = ttl
        self.client = connect(url)
        self.backend = RedisLeaseBackend(self.client)
        #: This node's number in the cluster (``INCR parlour:nodes`` as it starts).
        self.node = 0
        self.bus = Bus(url, self._deliver)
        # A Redis that does not answer a publication in half a lease is taken for gone, as the
        # leases are (a renewal has at most two thirds of one): what waited is answered.
        self.bus.answer_within = ttl / 2
        self.services: dict[str, ClusterService] = {}
        self.leases: dict[str, Lease] = {}
        #: The notes between services, and the answers awaited for this node's connections.
        self.notes = Notes(
            runtime,
            self.bus,
            self.services,
            lambda: self.node,
            ttl,
            on_everyone=on_everyone,
            unheard=unheard,
            unanswered=unanswered,
            awaited=awaited,
            answer_keys=answer_keys,
        )
        #: This node's liveness key, and the other nodes'.
        self.liveness = Liveness(
            self.client,
            self.backend,
            self.bus,
            self.services,
            self.leases,
            self.notes,
            lambda: self.node,
            runtime.clock,
            ttl,
        )
        self.bus.on_gap = self.liveness.messages_lost
        #: The leases of the services this node owns or may take.
        self.ownership = Ownership(
            runtime,
            self.bus,
            self.client,
            self.services,
            self.leases,
            self.factories,
            lambda: self.node,
            self.notes.owner_changed,
            ttl,
            wall,
        )
        #: The shards this node holds, in fair shares.
        self.shares = Shares(
            self.ownership,
            self.backend,
            self.services,
            self.leases,
            self.shards,
            lambda: self.node,
            lambda: self.liveness.live_nodes,
            ttl,
            wall,
        )
        #: HTTP between nodes: requests forwarded to owners, questions to every node.
        self.calls = HttpCalls(self.bus.publish, lambda: self.node, self.client, self._owner_routes)
        #: What this node answers for itself to ``ask_every_node`` (by path).
        self.node_routes = self.calls.node_routes

    # -- Start and stop ------------------------------------------------------------------------

    async def start(self) -> None:
        """Number this node, subscribe, learn who owns what, and try once to own each service
        (the first node of a cluster restores everything before it listens)."""
        self.node = int(await self.client.incr("parlour:nodes"))
        self.runtime.number_connections((self.node << NODE_SHIFT) | 1)
        self.runtime.remote = self.notes.route_remote
        self.runtime.on_fenced = self.ownership.fenced
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
            self.services[name].send_note = self.notes.send
            self.services[name].show = self.runtime.show
        await self.bus.start(node_channel(self.node), CLUSTER_CHANNEL)
        await self.liveness.beat()
        await self.liveness.count_nodes()
        for name, service in self.services.items():
            holder = await self.leases[name].holder()
            if holder is not None:
                service.owner, service.epoch = holder
            if name not in self.shards:
                await self.ownership.step(name)
        # The renewals run from now on: taking the shards below (a claim in the store and a
        # restore each) may outlast a lease's validity on a busy machine.
        self.ownership.run(name for name in self.services if name not in self.shards)
        self.shares.run()
        self.liveness.run()
        await self.shares.balance()  # the first node restores every shard before it listens
        log.info("cluster node %d on Redis at %s", self.node, _where(self.url))

    async def stop(self) -> None:
        """Hand every owned service over at once (release the leases) and disconnect; bounded:
        a Redis that does not answer must not hold the stop (the leases then expire)."""
        self.ownership.stopping = True
        await _cancelled([*self.ownership.tasks, *self.shares.tasks, *self.liveness.tasks])
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
        await self.ownership.hand_over()
        await self.liveness.leave()

    def status(self) -> dict[str, Any]:
        """For /healthz: this node's number and the services it owns."""
        owns = [name for name, service in self.services.items() if service.owning]
        status: dict[str, Any] = {
            "cluster_node": self.node,
            "cluster_owns": sorted(name for name in owns if name not in self.shards),
        }
        if self.shards:
            status["cluster_nodes"] = self.liveness.live_nodes
            status["cluster_shards"] = sorted(
                int(name.rpartition("/")[2]) for name in owns if name in self.shards
            )
        return status

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
            if self.notes.awaiting:
                self.notes.replied(message)
            self.runtime.show(from_wire(message.effects))
        elif type(message) is HttpCall:
            asyncio.get_running_loop().create_task(self.calls.answer(message))
        elif type(message) is HttpAnswer:
            self.calls.answered(message)
        elif type(message) is Note:
            if message.to != "*" or message.sender != self.node:  # its own: taken already
                self.notes.noted(message)
        elif type(message) is Takeover:
            service = self.services.get(message.service)
            if service is not None:
                service.taken_over(message.node, message.epoch)
                self.notes.owner_changed(message.service)
        elif type(message) is Released:
            service = self.services.get(message.service)
            if service is not None:
                service.released(message.node)
                self.notes.owner_changed(message.service)
                if message.service in self.shards and message.node != self.node:
                    self.shares.rebalance_soon()

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
        owned, service = self.ownership.owned.get(name), self.services.get(name)
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
