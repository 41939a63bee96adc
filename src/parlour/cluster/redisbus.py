"""Redis, the one engine the nodes share live: the lease scripts and the pub/sub bus.

The leases use redis-py's asyncio client as it is. The bus has two connections of its own, made
here with the event loop's own calls (``create_connection``, ``create_unix_connection``, TLS
through an ``ssl.SSLContext``) to what the node's URL says (``redis://``, ``rediss://``,
``unix://``; a username and password, a database number, TLS options as redis-py reads them):
each is authenticated and set to its database by commands the bus writes and whose answers it
reads, a refusal ending the connection with the reason logged. One publishes (every publication
of a loop iteration in one write, in the order of the calls, and Redis delivers each channel's
messages in that order), one is subscribed. Their bytes go to hiredis's parser from the loop's
read callback, with no task, timeout or health check per message: through redis-py's pub/sub
and command path, a message cost a node about 60 µs more CPU at each end (docs/cluster.md,
"What it costs"). A publication whose receivers need not be counted is sent after ``CLIENT
REPLY SKIP``: Redis writes no answer and the node reads none.

Pub/sub keeps nothing for a subscriber that is not connected: whatever was published while a
node's subscription was down (Redis restarting, a network cut), or could not be published,
is lost. The bus notices both (the subscribing connection lost; the publishing one lost with
publications written that Redis has not been seen to handle, or a publication that could not
be written), makes its connections again, subscribed as wanted, and once Redis answers tells
the node (``Bus.on_gap``), which closes the connections whose messages may have been lost so
that their clients reconnect and read the state afresh.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.connection import parse_url as _untyped_parse_url
from redis.exceptions import AuthenticationError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["Address", "Bus", "RedisError", "RedisLeaseBackend", "connect"]

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
#: restarted empty would otherwise hand a starting node the number of a live one. Answers
#: whether the key was still there.
BEAT: Final = """
local existed = redis.call('exists', KEYS[1])
redis.call('set', KEYS[1], '1', 'PX', ARGV[2])
local count = tonumber(redis.call('get', KEYS[2]) or '0')
if count < tonumber(ARGV[1]) then redis.call('set', KEYS[2], ARGV[1]) end
return existed
"""

#: Seconds between checks that an idle connection still works (redis-py pings it before
#: using it; the bus pings its own), so that a connection Redis closed (a restart) is found
#: before it is needed.
HEALTH_CHECK_SECONDS: Final = 2
#: How long the bus waits for Redis to answer (a PING, a subscription) before it takes the
#: connection for dead, as redis-py's ``socket_timeout`` below.
ANSWER_SECONDS: Final = 5.0
#: Between attempts to reach Redis again after a connection was lost.
RETRY_SECONDS: Final = 0.2
#: How long making a connection may take (TCP or the socket file, and TLS), as the lease
#: client's ``socket_connect_timeout`` below.
CONNECT_SECONDS: Final = 2.0


def connect(url: str) -> aioredis.Redis:
    """A client for ``url`` (redis://host:port/db); nothing is sent until it is used.

    A command that finds its pooled connection closed (Redis restarted since it was last used)
    is sent again at once on a new one, twice at most, quickly: a lease renewal must not fail
    on a stale connection while Redis is up, and must not outlast its lease retrying while
    Redis is down (redis-py's default retries for seconds)."""
    client: aioredis.Redis = aioredis.Redis.from_url(
        url,
        socket_connect_timeout=CONNECT_SECONDS,
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

    async def beat(self, alive: str, counter: str, node: int, ttl_ms: int) -> bool:
        """Set the node's liveness key ``alive`` and raise ``counter`` to at least ``node``;
        whether the key was still there (else it lapsed: the node was away for a lease)."""
        return bool(await self._beat(keys=[alive, counter], args=[node, ttl_ms]))


#: redis-py's reading of a URL (how the lease client reads it), which redis-py leaves untyped.
_parse_url: Callable[[str], dict[str, Any]] = _untyped_parse_url
#: ``ssl_cert_reqs`` in a ``rediss://`` URL, as redis-py reads it (its default: required).
_CERT_REQS: Final = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass(frozen=True)
class Address:
    """Where and how the bus reaches Redis: what the node's URL says, read as the lease
    client reads it (redis-py's ``parse_url``), so that both reach the same Redis the same way."""

    host: str = "localhost"
    port: int = 6379
    #: The socket file of a ``unix://`` URL (then ``host`` and ``port`` are unused).
    path: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    db: int = 0
    #: TLS (``rediss://``): verified against the system's authorities or ``ssl_ca_certs``.
    tls: ssl.SSLContext | None = field(default=None, repr=False)

    @classmethod
    def from_url(cls, url: str) -> Address:
        """``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (the same, over TLS,
        with redis-py's ``ssl_*`` options in the query) or ``unix://[[user]:password@]/path``
        (``?db=N``); a ValueError for anything else."""
        options = _parse_url(url)
        tls = _tls_context(options) if urlsplit(url).scheme == "rediss" else None
        return cls(
            host=options.get("host", "localhost"),
            port=int(options.get("port", 6379)),
            path=options.get("path"),
            username=options.get("username"),
            password=options.get("password"),
            db=int(options.get("db", 0)),
            tls=tls,
        )

    def greeting(self) -> list[tuple[bytes, ...]]:
        """The commands a new connection starts with: AUTH (as redis-py sends it: with the
        username when there is one), SELECT when the database is not 0, and a PING, whose
        answer says that the connection is usable (a Redis that wants a password refuses it)."""
        commands: list[tuple[bytes, ...]] = []
        if self.username or self.password:
            password = (self.password or "").encode()
            commands.append(
                (b"AUTH", self.username.encode(), password) if self.username else (b"AUTH", password)
            )
        if self.db:
            commands.append((b"SELECT", b"%d" % self.db))
        commands.append((b"PING",))
        return commands


def _tls_context(options: dict[str, Any]) -> ssl.SSLContext:
    reqs = str(options.get("ssl_cert_reqs", "required")).lower()
    if reqs not in _CERT_REQS:
        raise ValueError(f"ssl_cert_reqs must be one of {', '.join(_CERT_REQS)}, not {reqs!r}")
    context = ssl.create_default_context(
        cafile=options.get("ssl_ca_certs"), capath=options.get("ssl_ca_path")
    )
    # check_hostname first: it cannot stay on once certificates go unchecked.
    context.check_hostname = bool(options.get("ssl_check_hostname", True)) and reqs != "none"
    context.verify_mode = _CERT_REQS[reqs]
    if options.get("ssl_min_version") is not None:
        context.minimum_version = ssl.TLSVersion(options["ssl_min_version"])
    if options.get("ssl_certfile"):
        context.load_cert_chain(
            options["ssl_certfile"], options.get("ssl_keyfile"), options.get("ssl_password")
        )
    return context


Callback = Callable[[], None]
#: In the publisher's queue of awaited replies: the answer to a PING, not to a publication.
_PING: Final = "ping"


#: Before a publication whose subscribers need not be counted: Redis sends no answer to it,
#: so that neither Redis writes one nor the node wakes up to read it.
_SKIP: Final = b"*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$4\r\nSKIP\r\n"


def _publish_command(channel: bytes, data: bytes, skip: bool) -> bytes:
    return (_SKIP if skip else b"") + b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (
        len(channel),
        channel,
        len(data),
        data,
    )


def _command(*parts: bytes) -> bytes:
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%b\r\n" % (len(part), part) for part in parts)


class _Link(asyncio.Protocol):
    """One connection of the bus: every reply parsed goes to ``on_reply`` as it arrives, and
    ``on_lost`` hears once that the connection is gone (once it was made)."""

    def __init__(self, on_reply: Callable[[Any], None], on_lost: Callable[[_Link], None]) -> None:
        #: The loop's transport, once connected (asyncio's or uvloop's: no common base class).
        self.transport: Any = None
        self.reader = hiredis.Reader()
        self.on_reply = on_reply
        self.on_lost = on_lost
        self.closed = False
        #: When a PING went out that is still unanswered (None: none is).
        self.pinged: float | None = None
        #: While the greeting's answers are awaited: failed if the connection is lost meanwhile.
        self._greeted: asyncio.Future[None] | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    async def greet(self, commands: list[tuple[bytes, ...]]) -> str | None:
        """Write ``commands`` in one go and read their answers before anything else: the first
        error Redis answered with (AUTH refused, no such database...), or None."""
        answers: list[Any] = []
        greeted = self._greeted = asyncio.get_running_loop().create_future()

        def answered(reply: Any) -> None:
            answers.append(reply)
            if len(answers) == len(commands) and not greeted.done():
                greeted.set_result(None)

        on_reply, self.on_reply = self.on_reply, answered
        self.write(b"".join(_command(*command) for command in commands))
        try:
            await greeted
        finally:
            self.on_reply, self._greeted = on_reply, None
        for command, answer in zip(commands, answers, strict=True):
            if isinstance(answer, hiredis.ReplyError):
                return f"{command[0].decode()} refused: {answer}"
        return None

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        try:
            reply = reader.gets()
            while reply is not False:
                self.on_reply(reply)
                reply = reader.gets()
        except hiredis.ProtocolError as error:  # not Redis speaking: start over
            log.error("cluster: unreadable bytes from Redis: %s", error)
            self.close()

    def eof_received(self) -> bool:
        return False  # Redis closed its side: close ours (connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._greeted is not None and not self._greeted.done():
            self._greeted.set_exception(RedisConnectionError("Redis closed the connection"))
        if not self.closed:
            self.closed = True
            self.on_lost(self)

    def write(self, data: bytes) -> None:
        self.transport.write(data)

    def close(self) -> None:
        """Close it (what is written still goes out); ``on_lost`` is told."""
        if not self.closed and self.transport is not None:
            self.transport.close()


class Bus:
    """Publishes in call order; hands every message received to ``deliver``."""

    def __init__(self, url: str, deliver: Callable[[str, bytes], None]) -> None:
        """``url``: the Redis the nodes share, as the lease client's (``Address.from_url``)."""
        self.address = Address.from_url(url)
        self._greeting = self.address.greeting()
        #: The last refusal logged (see ``_open``).
        self._refusal: str | None = None
        self.deliver = deliver
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Publications not yet written (the publisher is connecting, or the write is due at
        #: the end of this loop iteration), and what the answer to each counted one is for.
        self._out: list[bytes] = []
        self._out_replies: list[tuple[Callback | str, int]] = []
        self._flush_due = False
        #: What each answer awaited on the publisher is for (an ``unheard`` callback, or
        #: _PING), in the order of the commands, with how many publications without an answer
        #: were written before it: an answer tells that Redis handled those too.
        self._replies: deque[tuple[Callback | str, int]] = deque()
        #: Publications without an answer, queued, written, and known handled by Redis (a later
        #: answer came): a publisher lost with some written and not known handled is a gap.
        self._skips_queued = self._skips_written = self._skips_handled = 0
        self._publisher: _Link | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._subscriber: _Link | None = None
        #: (Un)subscriptions awaiting Redis's confirmations: how many are still due, and who waits.
        self._confirming: deque[list[Any]] = deque()
        #: The channels Redis confirmed this node is subscribed to.
        self._subscribed: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self._closing = False
        #: While ``unheard`` callbacks are told of publications whose delivery is unknown.
        self.unsure = False
        #: Told once Redis answers again after messages may have been lost (see the module).
        self.on_gap: Callable[[], None] | None = None
        #: Set when a message may have been lost; cleared when on_gap is told.
        self._gap = False
        self.gaps = 0
        #: The channels this node wants: what the subscription is set to once Redis answers
        #: again (a change asked for meanwhile, or one that failed, is made then).
        self._channels: set[str] = set()
        #: How long Redis may take to answer the publisher before it is taken for gone (None:
        #: only the pings' ANSWER_SECONDS); the oldest awaited answer, and when it was seen so.
        self.answer_within: float | None = None
        self._oldest: object = None
        self._oldest_seen = 0.0

    # -- Publishing ------------------------------------------------------------------------------

    def publish(self, channel: str, data: bytes, unheard: Callback | None = None) -> None:
        """Queue a publication (written with the others of this loop iteration, in order);
        ``unheard`` is called if nobody was subscribed to ``channel`` (nor could be told: a
        publication that failed), so that what needed an answer gets one. A publication
        without ``unheard`` gets no answer from Redis (``CLIENT REPLY SKIP``)."""
        self._out.append(_publish_command(channel.encode(), data, unheard is None))
        if unheard is None:
            self._skips_queued += 1
        else:
            self._out_replies.append((unheard, self._skips_queued))
        if not self._flush_due:
            self._flush_due = True
            loop = self._loop or asyncio.get_running_loop()
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        if not self._out:
            return
        link = self._publisher
        if link is None or link.closed:
            if self._connecting is None and not self._closing:
                self._connecting = (self._loop or asyncio.get_running_loop()).create_task(self._reconnect())
            return
        self._replies.extend(self._out_replies)
        self._skips_written = self._skips_queued
        out = self._out
        self._out, self._out_replies = [], []
        link.write(out[0] if len(out) == 1 else b"".join(out))

    async def _reconnect(self) -> None:
        """A publisher for what waits: what it cannot send counts as unheard (a gap)."""
        try:
            self._publisher = await self._open(self._published)
        except Exception as error:  # OSError, RedisConnectionError...: Redis is away
            self._give_up_queued(error)
        finally:
            self._connecting = None
        self._flush()

    def _give_up_queued(self, error: Exception | None) -> None:
        """What waits for a publisher is lost: a gap, and each counted publication unheard."""
        failed = len(self._out)
        unheard = [callback for callback, _ in self._out_replies]
        self._out, self._out_replies = [], []
        self._skips_written = self._skips_handled = self._skips_queued
        if failed:
            log.error("cluster: %d messages could not be published: %s", failed, error or "no answer")
        self._lose_messages()
        self._tell_unheard(unheard)

    async def _new_publisher(self) -> None:
        """A publisher again (one connection at a time: replies are matched in order)."""
        if self._connecting is None:
            self._connecting = (self._loop or asyncio.get_running_loop()).create_task(self._reconnect())
        await asyncio.shield(self._connecting)
        if self._publisher is None:
            raise RedisConnectionError("no connection to publish on")

    def _published(self, reply: Any) -> None:
        if not self._replies:
            log.error("cluster: an answer from Redis nobody asked for: %r", reply)
            return
        waiting, self._skips_handled = self._replies.popleft()
        if waiting is _PING:
            if self._publisher is not None:
                self._publisher.pinged = None
        elif type(reply) is int:
            if not reply:
                self._tell_unheard([waiting])
        else:  # an error: nobody heard it
            log.error("cluster: Redis refused a publication: %r", reply)
            self._tell_unheard([waiting])

    def _tell_unheard(self, callbacks: list[Any], unsure: bool = False) -> None:
        """Tell each publication's ``unheard``; ``unsure`` (read by them as ``Bus.unsure``):
        they were written and Redis never said whether anyone received them (the connection
        was lost, or Redis did not answer in time), so they may have been delivered."""
        self.unsure = unsure
        try:
            for unheard in callbacks:
                if unheard is not None and unheard is not _PING:
                    try:
                        unheard()
                    except Exception:
                        log.exception("cluster: an unheard message could not be answered")
        finally:
            self.unsure = False

    # -- Subscribing -----------------------------------------------------------------------------

    async def subscribe(self, *channels: str) -> None:
        self._channels.update(channels)
        await self._change(b"SUBSCRIBE", channels)

    async def unsubscribe(self, *channels: str) -> None:
        self._channels.difference_update(channels)
        await self._change(b"UNSUBSCRIBE", channels)

    async def _change(self, command: bytes, channels: tuple[str, ...]) -> None:
        """Ask Redis to (un)subscribe and wait until it confirms: a node announces that it owns
        a service only once what is published to the service's channel reaches it."""
        link = self._subscriber
        if self._gap or link is None or not channels:
            return  # Redis is away: the subscription is set right once it answers (_heal)
        try:
            await self._confirmed(link, command, channels)
        except Exception as error:
            log.warning(
                "cluster: %s %s failed: %s", command.decode(), " ".join(channels), error or "no answer"
            )
            self._lose_messages()
            link.close()

    async def _confirmed(self, link: _Link, command: bytes, channels: tuple[str, ...] | list[str]) -> None:
        waiter = (self._loop or asyncio.get_running_loop()).create_future()
        self._confirming.append([len(channels), waiter])
        link.write(_command(command, *(channel.encode() for channel in channels)))
        await asyncio.wait_for(waiter, ANSWER_SECONDS)

    def _heard(self, reply: Any) -> None:
        # RESP2 (the connection never says HELLO): a message, a confirmation or a PING's
        # answer while subscribed is a list; a PING's answer with no subscription, +PONG.
        kind = reply[0] if isinstance(reply, list) and reply else reply
        if kind == b"message":
            try:
                self.deliver(reply[1].decode(), reply[2])
            except Exception:
                log.exception("cluster: a message could not be handled")
        elif kind == b"subscribe" or kind == b"unsubscribe":
            channel = reply[1].decode()
            if kind == b"subscribe":
                self._subscribed.add(channel)
            else:
                self._subscribed.discard(channel)
            if self._confirming:
                due = self._confirming[0]
                due[0] -= 1
                if due[0] <= 0:
                    self._confirming.popleft()
                    if not due[1].done():
                        due[1].set_result(None)
        elif kind == b"pong" or kind == b"PONG":  # the answer to a PING (see above)
            if self._subscriber is not None:
                self._subscriber.pinged = None
        else:
            log.error("cluster: an answer from Redis nobody asked for: %r", reply)

    # -- Connections -----------------------------------------------------------------------------

    async def start(self, *channels: str) -> None:
        self._loop = asyncio.get_running_loop()
        self._channels.update(channels)
        self._subscriber = await self._open(self._heard)
        await self._confirmed(self._subscriber, b"SUBSCRIBE", sorted(self._channels))
        self._publisher = await self._open(self._published)
        self._tasks = [self._loop.create_task(self._keep())]
        if self.answer_within is not None:
            self._tasks.append(self._loop.create_task(self._watch(self.answer_within)))

    async def _open(self, on_reply: Callable[[Any], None]) -> _Link:
        """A connection to Redis at ``address``, authenticated and on its database, whose
        replies go to ``on_reply`` from now on. A refusal (a wrong password, a database Redis
        does not have) is logged as an error, once until a connection succeeds again."""
        address, loop = self.address, self._loop or asyncio.get_running_loop()
        link = _Link(on_reply, self._lost)
        try:
            try:
                async with asyncio.timeout(CONNECT_SECONDS):
                    if address.path is not None:
                        await loop.create_unix_connection(lambda: link, address.path)
                    else:
                        await loop.create_connection(
                            lambda: link, address.host, address.port, ssl=address.tls
                        )
            except TimeoutError:
                raise RedisConnectionError(f"no connection to Redis in {CONNECT_SECONDS:g} s") from None
            try:
                async with asyncio.timeout(ANSWER_SECONDS):
                    refusal = await link.greet(self._greeting)
            except TimeoutError:
                raise RedisConnectionError(f"Redis did not answer in {ANSWER_SECONDS:g} s") from None
        except BaseException:
            link.close()
            raise
        if refusal is not None:
            link.close()
            if refusal != self._refusal:
                self._refusal = refusal
                log.error("cluster: Redis refused the bus's connection: %s", refusal)
            failure = AuthenticationError if "AUTH" in refusal else RedisConnectionError
            raise failure(refusal)
        self._refusal = None
        return link

    def _lost(self, link: _Link) -> None:
        if link is self._publisher:
            self._publisher = None
            waiting = [callback for callback, _ in self._replies if callback is not _PING]
            unsure = len(waiting) + self._skips_written - self._skips_handled
            self._replies.clear()
            self._skips_handled = self._skips_written
            if unsure:  # written, but whether Redis passed them on is unknown
                log.error("cluster: %d messages may not have been published", unsure)
                self._lose_messages()
                self._tell_unheard(waiting, unsure=True)
        elif link is self._subscriber:
            self._subscriber = None
            self._subscribed.clear()
            for _, waiter in self._confirming:
                if not waiter.done():
                    waiter.set_exception(RedisConnectionError("the subscription was lost"))
            self._confirming.clear()
            if not self._closing:
                if not self._gap:
                    log.error("cluster: the subscription to Redis was lost")
                self._lose_messages()

    def _lose_messages(self) -> None:
        """Messages may have been lost: the node is told once Redis answers again."""
        if not self._gap:  # the keeper tries again at its pace from now on
            self._gap = True
            self._wake.set()

    async def _keep(self) -> None:
        """Ping both connections every HEALTH_CHECK_SECONDS (one that does not answer in
        ANSWER_SECONDS is closed: a gap); while messages may have been lost, try to make what
        is missing again every RETRY_SECONDS, and tell the node once it is done."""
        while not self._closing:
            self._wake.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wake.wait(), RETRY_SECONDS if self._gap else HEALTH_CHECK_SECONDS
                )
            if self._closing:
                return
            if self._gap:
                await self._heal()
            else:
                self._ping()

    async def _watch(self, within: float) -> None:
        """Every third of ``within``, whether a publication waits too long (``overdue``); apart
        from ``_keep``, which waits for Redis while it makes a connection again."""
        period = within / 3
        while not self._closing:
            began = time.monotonic()
            await asyncio.sleep(period)
            now = time.monotonic()
            # Woken late, the loop was held up: answers may be waiting unread in the socket.
            if now - began < 2 * period:
                self.overdue(now)

    def overdue(self, now: float) -> bool:
        """Whether the oldest publication waiting for Redis has waited for longer than
        ``answer_within`` (seen first at a check, still the oldest at a later one): its answer
        on the publisher, or to be written while the publisher is made again. Redis does not
        answer: the publisher is closed, or what is queued for it given up, a gap either way;
        what waited for an answer is told it was unheard at once, and the node hears of the gap
        once Redis answers again."""
        link, within = self._publisher, self.answer_within
        connected = link is not None and not link.closed
        waiting = self._replies if connected else self._out_replies
        if within is None or not waiting:
            self._oldest = None
            return False
        oldest = waiting[0]
        if oldest is not self._oldest:
            self._oldest, self._oldest_seen = oldest, now
            return False
        if now - self._oldest_seen < within:
            return False
        log.error("cluster: Redis did not answer a publication in %.1f s", within)
        self._oldest = None
        if link is not None and connected:
            link.close()
        else:
            self._give_up_queued(None)
        return True

    def _ping(self) -> None:
        now = time.monotonic()
        for link in (self._publisher, self._subscriber):
            if link is None or link.closed:
                continue
            if link.pinged is not None:
                if now - link.pinged > ANSWER_SECONDS:
                    log.error("cluster: Redis did not answer in %.0f s: connecting again", ANSWER_SECONDS)
                    link.close()
                continue
            link.pinged = now
            if link is self._publisher:
                self._replies.append((_PING, self._skips_written))
            link.write(_command(b"PING"))

    async def _heal(self) -> None:
        try:
            if self._subscriber is None:
                self._subscriber = await self._open(self._heard)
            subscriber = self._subscriber
            # The subscription as wanted now (a change made while Redis was away, or one that
            # failed, never reached it), until it holds: a change made while this waits for
            # Redis is not sent either (the gap is not over), so it is set right here too.
            while self._subscribed != self._channels:
                extra = sorted(self._subscribed - self._channels)
                if extra:
                    await self._confirmed(subscriber, b"UNSUBSCRIBE", extra)
                missing = sorted(self._channels - self._subscribed)
                if missing:
                    await self._confirmed(subscriber, b"SUBSCRIBE", missing)
            if self._publisher is None:
                await self._new_publisher()
        except Exception as error:  # not yet: tried again in a moment
            log.debug("cluster: Redis does not answer yet: %s", error or "no answer")
            return
        if self._subscriber is None or self._subscriber.closed:
            return  # lost again meanwhile
        if self._subscribed != self._channels:
            return  # changed while a publisher was made: set right at the next try
        self._gap = False
        self.gaps += 1
        log.warning("cluster: Redis answers again; messages between nodes may have been lost")
        if self.on_gap is not None:
            try:
                self.on_gap()
            except Exception:
                log.exception("cluster: the node failed to recover from lost messages")

    async def close(self) -> None:
        # What is queued still goes out (a goodbye to other nodes' connections, a release),
        # and is known handled once Redis answers a PING written after it.
        publisher = self._publisher
        if publisher is not None and not publisher.closed:
            self._flush()
            self._replies.append((_PING, self._skips_written))
            publisher.write(_command(b"PING"))
        for _ in range(50):
            if not self._out and not self._replies and self._skips_handled == self._skips_written:
                break
            await asyncio.sleep(0.01)
        self._closing = True
        self._wake.set()
        for task in self._tasks:
            task.cancel()
        if self._connecting is not None:
            self._connecting.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=1.0)
        for link in (self._publisher, self._subscriber):
            if link is not None:
                link.close()
        self._publisher = self._subscriber = None
