"""Redis, the one engine the nodes share live: the lease scripts and the pub/sub bus.

redis-py's asyncio client is used as it is: one connection publishes (a single task, so the
order of publications is the order of calls, and Redis delivers each channel's messages in
that order), one pub/sub connection receives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

__all__ = ["Bus", "RedisError", "RedisLeaseBackend", "connect"]

log = logging.getLogger("parlour.cluster")

#: Take the key only if it is absent, and bump the epoch counter in the same atomic step.
ACQUIRE: Final = """
if redis.call('exists', KEYS[1]) == 1 then return 0 end
local epoch = redis.call('incr', KEYS[2])
redis.call('set', KEYS[1], ARGV[1] .. ':' .. epoch, 'PX', ARGV[2])
return epoch
"""
#: Extend the key only while it holds our value (compare-and-renew).
RENEW: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
RELEASE: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def connect(url: str) -> aioredis.Redis:
    """A client for ``url`` (redis://host:port/db); nothing is sent until it is used."""
    client: aioredis.Redis = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    return client


class RedisLeaseBackend:
    """The lease operations of parlour.cluster.lease as Lua scripts (atomic in Redis)."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client
        self._acquire = client.register_script(ACQUIRE)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)

    async def acquire(self, key: str, counter: str, node: int, ttl_ms: int) -> int | None:
        epoch = int(await self._acquire(keys=[key, counter], args=[node, ttl_ms]))
        return epoch or None

    async def renew(self, key: str, value: str, ttl_ms: int) -> bool:
        return bool(await self._renew(keys=[key], args=[value, ttl_ms]))

    async def release(self, key: str, value: str) -> None:
        await self._release(keys=[key], args=[value])

    async def holder(self, key: str) -> str | None:
        value = await self.client.get(key)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)


class Bus:
    """Publishes in call order from one task; hands every message received to ``deliver``."""

    def __init__(self, client: aioredis.Redis, deliver: Callable[[str, bytes], None]) -> None:
        self.client = client
        self.deliver = deliver
        self._queue: list[tuple[str, bytes, Callable[[], None] | None]] = []
        self._wake = asyncio.Event()
        self._pubsub: Any = client.pubsub()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False

    def publish(self, channel: str, data: bytes, unheard: Callable[[], None] | None = None) -> None:
        """Queue a publication (sent by the bus's task, in order, batched in one pipeline);
        ``unheard`` is called if nobody was subscribed to ``channel`` (nor could be told: a
        publication that failed), so that what needed an answer gets one."""
        self._queue.append((channel, data, unheard))
        self._wake.set()

    async def subscribe(self, *channels: str) -> None:
        await self._pubsub.subscribe(*channels)

    async def unsubscribe(self, *channels: str) -> None:
        await self._pubsub.unsubscribe(*channels)

    async def start(self, *channels: str) -> None:
        await self._pubsub.subscribe(*channels)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._send()), loop.create_task(self._receive())]

    async def _send(self) -> None:
        while not self._closing:
            await self._wake.wait()
            self._wake.clear()
            batch, self._queue = self._queue, []
            if not batch:
                continue
            try:
                async with self.client.pipeline(transaction=False) as pipe:
                    for channel, data, _ in batch:
                        pipe.publish(channel, data)
                    heard = await pipe.execute()
            except (RedisError, OSError) as error:
                log.error("cluster: %d messages could not be published: %s", len(batch), error)
                heard = [0] * len(batch)
            for (_, _, unheard), receivers in zip(batch, heard, strict=True):
                if unheard is not None and not receivers:
                    try:
                        unheard()
                    except Exception:
                        log.exception("cluster: an unheard message could not be answered")

    async def _receive(self) -> None:
        while not self._closing:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except (RedisError, OSError) as error:
                log.error("cluster: the subscription failed: %s", error)
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            try:
                self.deliver(
                    channel.decode() if isinstance(channel, bytes) else str(channel), message["data"]
                )
            except Exception:
                log.exception("cluster: a message could not be handled")

    async def close(self) -> None:
        # What is queued still goes out (a goodbye to other nodes' connections, a release).
        for _ in range(50):
            if not self._queue:
                break
            await asyncio.sleep(0.01)
        # redis-py may swallow a cancellation that arrives inside a command: the loops also end
        # on the flag, and the wait is bounded.
        self._closing = True
        self._wake.set()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=1.0)
        with suppress(Exception):
            await asyncio.wait_for(self._pubsub.aclose(), 1.0)
