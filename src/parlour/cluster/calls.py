"""HTTP between the nodes of a cluster, over the Redis bus.

A request for a route of a service (the /async account routes, the admin's) is answered by the
node that owns the service: on any other node it is forwarded to the owner's channel as an
``HttpCall`` and the ``HttpAnswer`` comes back on the asking node's channel. A question for
every node (``ask_every_node``: the Fish and Tsuro tables and the Apologies games, which live
where their players are) goes to each live node's channel, and each answers for its own.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from http import HTTPStatus
from typing import Final

import msgspec
import redis.asyncio as aioredis

from parlour.api import ApiResponse, HttpRequest
from parlour.cluster.wire import HttpAnswer, HttpCall, encode, node_channel, owner_channel

__all__ = ["HTTP_TIMEOUT", "NODE_ROUTES", "HttpCalls", "HttpHandler"]

log = logging.getLogger("parlour.cluster")

#: How long a forwarded HTTP request waits for the owner's answer.
HTTP_TIMEOUT: Final = 10.0
#: The ``service`` of an HttpCall that a node answers for itself, not as an owner
#: (``ask_every_node``: the Fish and Tsuro tables, which live on the node their players use).
NODE_ROUTES: Final = "node"

HttpHandler = Callable[[HttpRequest], Awaitable[ApiResponse]]


class HttpCalls:
    """The HTTP calls of one node: those it forwards, awaiting their answers, and those it
    answers (as a service's owner, or for itself)."""

    def __init__(
        self,
        publish: Callable[[str, bytes], None],
        node: Callable[[], int],
        client: aioredis.Redis,
        owner_routes: Callable[[str], Mapping[str, HttpHandler] | None],
    ) -> None:
        self.publish = publish
        #: This node's number (known once it has joined the cluster).
        self.node = node
        self.client = client
        #: The routes of a service while this node owns it and may act for it; None otherwise.
        self.owner_routes = owner_routes
        #: What this node answers for itself to ``ask_every_node`` (by path).
        self.node_routes: dict[str, HttpHandler] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[HttpAnswer]] = {}

    def handler(self, name: str, path: str) -> HttpHandler:
        """The handler of ``path`` of service ``name`` on this node: the owner's own route
        here, forwarded to the owner elsewhere."""

        async def handle(request: HttpRequest) -> ApiResponse:
            routes = self.owner_routes(name)
            if routes is not None and path in routes:
                return await routes[path](request)
            return await self._forward(name, request)

        return handle

    async def _forward(self, name: str, request: HttpRequest) -> ApiResponse:
        answer = await self._call(name, owner_channel(name), request, HTTP_TIMEOUT)
        if answer is None:
            return ApiResponse(
                HTTPStatus.SERVICE_UNAVAILABLE,
                msgspec.json.encode({"error": "no node answers for this service now; try again"}),
                (("Retry-After", "1"),),
            )
        return answer

    async def _call(
        self, service: str, channel: str, request: HttpRequest, timeout: float
    ) -> ApiResponse | None:
        """``request`` answered by whoever listens on ``channel`` (None: nobody in time)."""
        call = HttpCall(
            service,
            next(self._ids),
            self.node(),
            request.method,
            request.target,
            request.path,
            dict(request.headers),
            request.body,
            request.client,
        )
        waiter: asyncio.Future[HttpAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[call.id] = waiter
        self.publish(channel, encode(call))
        try:
            answer = await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return None
        finally:
            self._waiting.pop(call.id, None)
        return ApiResponse(HTTPStatus(answer.status), answer.body, tuple(answer.headers))

    async def ask_every_node(
        self, request: HttpRequest, timeout: float = HTTP_TIMEOUT
    ) -> dict[int, ApiResponse | None]:
        """``request`` answered by every live node's ``node_routes`` (this one's directly), by
        node; None for a node that did not answer in time (gone, or too busy)."""
        me = self.node()
        nodes = {me}
        async for key in self.client.scan_iter(match="parlour:node:*:alive", count=1000):
            number = (key.decode() if isinstance(key, bytes) else str(key)).split(":")[2]
            if number.isdigit():
                nodes.add(int(number))
        handler = self.node_routes.get(request.path)

        async def one(node: int) -> ApiResponse | None:
            if node == me:
                return None if handler is None else await handler(request)
            return await self._call(NODE_ROUTES, node_channel(node), request, timeout)

        ordered = sorted(nodes)
        return dict(zip(ordered, await asyncio.gather(*(one(node) for node in ordered)), strict=True))

    def answered(self, answer: HttpAnswer) -> None:
        """An answer to one of this node's calls (one it gave up on is dropped)."""
        waiter = self._waiting.pop(answer.id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    async def answer(self, call: HttpCall) -> None:
        """Answer another node's call, if it is this node's to answer."""
        if call.service == NODE_ROUTES:  # this node's own (ask_every_node)
            handler = self.node_routes.get(call.path)
        else:
            routes = self.owner_routes(call.service)
            # Not the owner (any more): the caller times out and retries.
            handler = None if routes is None else routes.get(call.path)
        if handler is None:
            return
        request = HttpRequest(call.method, call.target, call.path, call.headers, call.body, call.client)
        try:
            reply = await handler(request)
        except Exception:
            log.exception("cluster: forwarded HTTP request to %s failed", call.path)
            reply = ApiResponse(HTTPStatus.INTERNAL_SERVER_ERROR, b'{"error": "internal error"}')
        self.publish(
            node_channel(call.reply_to),
            encode(HttpAnswer(call.id, int(reply.status), reply.body, list(reply.headers))),
        )
