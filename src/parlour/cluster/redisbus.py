"""Redis, the one engine the nodes share live: the lease scripts and the pub/sub bus.

redis-py's asyncio client is used as it is (with hiredis to read replies): one connection
publishes (a single task, so the order of publications is the order of calls, and Redis
delivers each channel's messages in that order), one pub/sub connection receives.

Pub/sub keeps nothing for a subscriber that is not connected: whatever was published while a
node's subscription was down (Redis restarting, a network cut), or could not be published,
is lost. The bus notices both (a publication that failed; the subscribing connection lost or
made again, which redis-py re-subscribes on its own) and, once Redis answers again, tells the
node (``Bus.on_gap``), which closes the connections whose messages may have been lost so that
their clients reconnect and read the state afresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Final

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

__all__ = ["Bus", "RedisError", "RedisLeaseBackend", "connect"]

log = logging.getLogger("parlour.cluster")

#: Take the key only if it is absent, and bump the epoch counter in the same atomic step. A
#: counter that is absent (the first lease ever, or a Redis that restarted empty) starts from
#: Redis's clock in milliseconds: epochs never repeat one handed out before a restart, so that
#: a tenure after it is never taken for the one before (by gateways, and in message tags).
ACQUIRE: Final = """
if redis.call('exists', KEYS[1]) == 1 then return 0 end
if redis.call('exists', KEYS[2]) == 0 then
  local now = redis.call('time')
  redis.call('set', KEYS[2], string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
end
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
#: A node's liveness key, and the node counter raised to at least its number: a Redis that
#: restarted empty would otherwise hand a starting node the number of a live one.
BEAT: Final = """
redis.call('set', KEYS[1], '1', 'PX', ARGV[2])
local count = tonumber(redis.call('get', KEYS[2]) or '0')
if count < tonumber(ARGV[1]) then redis.call('set', KEYS[2], ARGV[1]) end
return 1
"""

#: Seconds between checks that an idle connection still works (redis-py pings it before
#: using it; the subscriber's is pinged while it waits), so that a connection Redis closed
#: (a restart) is found before it is needed.
HEALTH_CHECK_SECONDS: Final = 2


def connect(url: str) -> aioredis.Redis:
    """A client for ``url`` (redis://host:port/db); nothing is sent until it is used.

    A command that finds its pooled connection closed (Redis restarted since it was last used)
    is sent again at once on a new one, twice at most, quickly: a lease renewal must not fail
    on a stale connection while Redis is up, and must not outlast its lease retrying while
    Redis is down (redis-py's default retries for seconds)."""
    client: aioredis.Redis = aioredis.Redis.from_url(
        url,
        socket_connect_timeout=2,
        socket_timeout=5,
        retry=Retry(ExponentialBackoff(cap=0.1, base=0.01), 2),
        health_check_interval=HEALTH_CHECK_SECONDS,
    )
    return client


class RedisLeaseBackend:
    """The lease operations of parlour.cluster.lease as Lua scripts (atomic in Redis)."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client
        self._acquire = client.register_script(ACQUIRE)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)
        self._beat = client.register_script(BEAT)

    async def acquire(self, key: str, counter: str, node: int, ttl_ms: int) -> int | None:
        epoch = int(await self._acquire(keys=[key, counter], args=[node, ttl_ms]))
        return epoch or None

    async def renew(self, key: str, value: str, ttl_ms: int) -> bool:
        return bool(await self._renew(keys=[key], args=[value, ttl_ms]))

    async def renew_many(
        self, renewals: list[tuple[str, str]], ttl_ms: int, stamps: dict[str, str]
    ) -> list[bool]:
        """Renew each ``(key, value)`` as ``renew`` does, and set each of ``stamps``, in one
        round trip (a pipeline): whether each renewal held."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key, value in renewals:
                await self._renew(keys=[key], args=[value, ttl_ms], client=pipe)
            for key, stamp in stamps.items():
                pipe.set(key, stamp)
            answers = await pipe.execute()
        return [bool(answer) for answer in answers[: len(renewals)]]

    async def release(self, key: str, value: str) -> None:
        await self._release(keys=[key], args=[value])

    async def holder(self, key: str) -> str | None:
        value = await self.client.get(key)
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def beat(self, alive: str, counter: str, node: int, ttl_ms: int) -> None:
        """Set the node's liveness key ``alive`` and raise ``counter`` to at least ``node``."""
        await self._beat(keys=[alive, counter], args=[node, ttl_ms])


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
        #: Told once Redis answers again after messages may have been lost (see the module).
        self.on_gap: Callable[[], None] | None = None
        #: Set when a message may have been lost; cleared when on_gap is told.
        self._gap = False
        self.gaps = 0
        #: The channels this node wants: what the subscription is set to once Redis answers
        #: again (a change asked for meanwhile, or one that failed, is made then).
        self._channels: set[str] = set()
        #: One (un)subscription at a time: redis-py's pub/sub connection is not made for
        #: concurrent commands, least of all while it reconnects.
        self._commands = asyncio.Lock()
        #: The connection publications go out on (the bus's own, from the client's pool).
        self._publisher: Any = None

    def publish(self, channel: str, data: bytes, unheard: Callable[[], None] | None = None) -> None:
        """Queue a publication (sent by the bus's task, in order, batched in one pipeline);
        ``unheard`` is called if nobody was subscribed to ``channel`` (nor could be told: a
        publication that failed), so that what needed an answer gets one."""
        self._queue.append((channel, data, unheard))
        self._wake.set()

    async def subscribe(self, *channels: str) -> None:
        self._channels.update(channels)
        await self._command("SUBSCRIBE", channels)

    async def unsubscribe(self, *channels: str) -> None:
        self._channels.difference_update(channels)
        await self._command("UNSUBSCRIBE", channels)

    async def _command(self, command: str, channels: tuple[str, ...]) -> None:
        if self._gap:
            return  # Redis is away: the subscription is set right once it answers (_healed)
        async with self._commands:
            try:
                if command == "SUBSCRIBE":
                    await self._pubsub.subscribe(*channels)
                else:
                    await self._pubsub.unsubscribe(*channels)
            except Exception as error:  # whatever redis-py raises mid-reconnect: healed later
                log.warning("cluster: %s %s failed: %s", command, " ".join(channels), error)
                self._gap = True

    async def start(self, *channels: str) -> None:
        self._channels.update(channels)
        await self._pubsub.subscribe(*channels)
        # Every later (re)connection of the subscriber is a gap: redis-py reconnects and
        # re-subscribes on its own (its retries), and nothing published meanwhile was kept.
        self._pubsub.connection.register_connect_callback(self._reconnected)
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
                heard = await self._publish(batch)
            except (RedisError, OSError) as error:
                log.error("cluster: %d messages could not be published: %s", len(batch), error)
                heard = [0] * len(batch)
                self._gap = True
            for (_, _, unheard), receivers in zip(batch, heard, strict=True):
                if unheard is not None and not receivers:
                    try:
                        unheard()
                    except Exception:
                        log.exception("cluster: an unheard message could not be answered")

    async def _publish(self, batch: list[tuple[str, bytes, Callable[[], None] | None]]) -> list[int]:
        """Publish ``batch`` in one write on the bus's own connection: how many subscribers
        heard each message. Not a pipeline object: its setup and the pool's lending cost more
        than the commands themselves when a batch is one message (measured: about 110 µs of
        CPU a message against 50), and a batch is one message whenever the node is not busy."""
        connection = self._publisher
        if connection is None:
            pool: Any = self.client.connection_pool  # its methods are untyped
            connection = self._publisher = await pool.get_connection()
        try:
            await connection.send_packed_command(
                connection.pack_commands([("PUBLISH", channel, data) for channel, data, _ in batch])
            )
            return [int(await connection.read_response()) for _ in batch]
        except BaseException:
            # Whatever was half written or read: a new connection for the next batch.
            self._publisher = None
            with suppress(Exception):
                await connection.disconnect()
            await self.client.connection_pool.release(connection)
            raise

    def _reconnected(self, connection: object) -> None:
        self._gap = True

    async def _receive(self) -> None:
        while not self._closing:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except (RedisError, OSError) as error:
                if not self._gap:
                    log.error("cluster: the subscription failed: %s", error)
                self._gap = True
                await asyncio.sleep(0.2)
                continue
            if self._gap:
                # Subscribed again (a read went through): once publishing works too, the
                # node hears that messages may have been lost meanwhile.
                await self._healed()
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            try:
                self.deliver(
                    channel.decode() if isinstance(channel, bytes) else str(channel), message["data"]
                )
            except Exception:
                log.exception("cluster: a message could not be handled")

    async def _healed(self) -> None:
        try:
            await self.client.ping()
            async with self._commands:
                # The subscription as wanted now (a change made while Redis was away, or one
                # that failed, never reached it; redis-py re-subscribes what it knows).
                known = {c.decode() if isinstance(c, bytes) else str(c) for c in self._pubsub.channels}
                if known - self._channels:
                    await self._pubsub.unsubscribe(*(known - self._channels))
                await self._pubsub.subscribe(*self._channels)
        except Exception as error:  # not yet: tried again after the next read
            log.debug("cluster: Redis does not answer yet: %s", error)
            return
        self._gap = False
        self.gaps += 1
        log.warning("cluster: Redis answers again; messages between nodes may have been lost")
        if self.on_gap is not None:
            try:
                self.on_gap()
            except Exception:
                log.exception("cluster: the node failed to recover from lost messages")

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
        if self._publisher is not None:
            with suppress(Exception):
                await self.client.connection_pool.release(self._publisher)
            self._publisher = None
