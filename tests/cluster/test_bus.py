"""The bus between nodes (parlour.cluster.redisbus.Bus) against a real Redis, on both event
loops a node may run (asyncio's and uvloop's): the order of publications, the "unheard" answer
for a channel nobody holds, subscriptions in force once ``subscribe`` returns, and a publishing
connection lost with publications written but not known handled (a gap, told once Redis
answers again), one Redis closed while idle (no gap), and a Redis that stops answering. Then
what the URL says: a password (with or without a username; a wrong or missing one refused at
once, with Redis's reason logged), the database, TLS and a socket file, all on connections the
bus makes itself. A Redis restart is in test_faults.py."""

from __future__ import annotations

import asyncio
import shutil
import ssl
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop
from redis.asyncio import connection as aioredis_connection
from redis.exceptions import AuthenticationError

from parlour.cluster import redisbus
from parlour.cluster.redisbus import Address, Bus, connect
from tests.redisserver import redis_server

LOOPS = ["asyncio", "uvloop"]


def run(loop: str, scenario: Coroutine[Any, Any, None]) -> None:
    if loop == "uvloop":
        uvloop.run(scenario)
    else:
        asyncio.run(scenario)


async def until(condition: Callable[[], bool], what: str, seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.01)


async def with_buses(url: str, body: Callable[[Bus, Bus, list[tuple[str, bytes]]], Awaitable[None]]) -> None:
    """A publishing bus and a listening one (subscribed to ``a``), and what the latter heard."""
    heard: list[tuple[str, bytes]] = []
    sender = Bus(url, lambda channel, data: None)
    listener = Bus(url, lambda channel, data: heard.append((channel, data)))
    await sender.start("parlour:sender")
    await listener.start("a")
    try:
        await body(sender, listener, heard)
    finally:
        await sender.close()
        await listener.close()


@pytest.mark.parametrize("loop", LOOPS)
def test_publications_arrive_in_order_and_nobody_s_are_told(loop: str, redis_url: str) -> None:
    """Counted and uncounted publications (with and without ``unheard``) keep their order on
    a channel; ``unheard`` is called for exactly those to a channel nobody holds."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        unheard: list[bytes] = []
        sent: list[bytes] = []
        for index in range(300):
            data = b"%d" % index
            if index % 3 == 0:  # uncounted, to the listener
                sender.publish("a", data)
                sent.append(data)
            elif index % 3 == 1:  # counted, to the listener
                sender.publish("a", data, lambda data=data: unheard.append(data))
                sent.append(data)
            else:  # counted, to nobody
                sender.publish("b", data, lambda data=data: unheard.append(data))
            if index % 50 == 0:
                await asyncio.sleep(0)  # several loop iterations, several writes
        await until(lambda: len(heard) == len(sent), f"heard {len(heard)} of {len(sent)}")
        assert heard == [("a", data) for data in sent]
        await until(lambda: len(unheard) == 100, f"{len(unheard)} told unheard of 100")
        assert unheard == [b"%d" % index for index in range(2, 300, 3)]
        assert sender.gaps == listener.gaps == 0

    run(loop, with_buses(redis_url, body))


@pytest.mark.parametrize("loop", LOOPS)
def test_a_subscription_is_in_force_once_subscribe_returns(loop: str, redis_url: str) -> None:
    """What is published after ``subscribe`` returns reaches the subscriber (a node announces
    it owns a service only then); after ``unsubscribe``, nobody holds the channel."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        unheard: list[bytes] = []
        await listener.subscribe("c")
        sender.publish("c", b"first", lambda: unheard.append(b"first"))
        await until(lambda: heard == [("c", b"first")], f"heard {heard}")
        await listener.unsubscribe("c")
        sender.publish("c", b"second", lambda: unheard.append(b"second"))
        await until(lambda: unheard == [b"second"], f"unheard {unheard}")
        assert heard == [("c", b"first")] and not unheard[:-1]

    run(loop, with_buses(redis_url, body))


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("counted", [True, False])
def test_a_publisher_lost_mid_publication_is_a_gap(loop: str, counted: bool, redis_url: str) -> None:
    """The publishing connection dies with a publication written and not known handled: the
    node hears of the gap once Redis answers again, a counted publication is told unheard
    (its sender answers it), and publishing goes on on a new connection."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        gaps: list[int] = []
        sender.on_gap = lambda: gaps.append(sender.gaps)
        unheard: list[bytes] = []
        sender.publish("a", b"before", (lambda: unheard.append(b"before")) if counted else None)
        await asyncio.sleep(0)  # written at the end of the iteration
        link = sender._publisher
        assert link is not None
        link.transport.abort()  # as a connection Redis dropped
        await until(lambda: gaps == [1], f"gaps told: {gaps}")
        assert unheard == ([b"before"] if counted else [])
        sender.publish("a", b"after", lambda: unheard.append(b"after"))
        await until(lambda: ("a", b"after") in heard, f"heard {heard}")
        assert sender._publisher is not link and listener.gaps == 0
        assert unheard == ([b"before"] if counted else [])

    run(loop, with_buses(redis_url, body))


@pytest.mark.parametrize("loop", LOOPS)
def test_an_idle_publisher_lost_is_made_again_without_a_gap(loop: str, redis_url: str) -> None:
    """A publishing connection lost with everything written known handled loses nothing: no
    gap, and the next publication goes out on a new connection."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        unheard: list[bytes] = []
        sender.publish("a", b"one", lambda: unheard.append(b"one"))
        await until(lambda: len(heard) == 1 and not sender._replies, "the answer")
        assert sender._publisher is not None
        sender._publisher.transport.abort()
        await asyncio.sleep(0.05)
        sender.publish("a", b"two", lambda: unheard.append(b"two"))
        await until(lambda: len(heard) == 2, f"heard {heard}")
        assert heard == [("a", b"one"), ("a", b"two")] and not unheard and sender.gaps == 0

    run(loop, with_buses(redis_url, body))


@pytest.mark.parametrize("loop", LOOPS)
def test_a_publisher_redis_closed_while_idle_costs_no_gap(loop: str, redis_url: str) -> None:
    """Redis closes the publishing connection while nothing it carried is unconfirmed (an
    admin's CLIENT KILL, a proxy's idle timeout): the next publication goes out on a new
    connection and is heard, with no gap (a gap would close every connection that crosses
    Redis for nothing, as a stale connection once cost a needless failover)."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        unheard: list[bytes] = []
        sender.publish("a", b"one", lambda: unheard.append(b"one"))
        await until(lambda: len(heard) == 1 and not sender._replies, "the answer")
        link = sender._publisher
        killer = connect(redis_url)
        try:  # every ordinary connection but the killer's: the publisher, the lease client's
            await killer.execute_command("CLIENT", "KILL", "TYPE", "normal")
        finally:
            await killer.aclose()
        await asyncio.sleep(0.05)
        sender.publish("a", b"two", lambda: unheard.append(b"two"))
        await until(lambda: len(heard) == 2 and not sender._replies, f"heard {heard}")
        assert sender._publisher is not link and not unheard and sender.gaps == 0

    run(loop, with_buses(redis_url, body))


def test_a_redis_that_stops_answering_is_left_and_found_again(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis paused (``CLIENT PAUSE``: connections open, nothing answered) is taken for dead
    once a ping goes unanswered for ANSWER_SECONDS (here shortened, as the ping period): both
    connections are closed, the node hears of the gap once Redis answers again, and messages
    flow again."""
    monkeypatch.setattr(redisbus, "HEALTH_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(redisbus, "ANSWER_SECONDS", 0.4)

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        gaps: list[int] = []
        listener.on_gap = lambda: gaps.append(listener.gaps)
        before = listener._subscriber
        pauser = connect(redis_url)
        try:
            await pauser.execute_command("CLIENT", "PAUSE", "2000", "ALL")
        finally:
            await pauser.aclose()
        await until(lambda: before is not None and before.closed, "the unanswered subscriber closed")
        await until(lambda: gaps == [1], f"gaps told: {gaps}", seconds=10.0)
        sender.publish("a", b"again")
        await until(lambda: ("a", b"again") in heard, f"heard {heard}")

    asyncio.run(with_buses(redis_url, body))


def test_subscriptions_changed_while_a_gap_heals_are_set_right_before_it_ends(redis_url: str) -> None:
    """While messages may have been lost (a gap), a change of subscription is not sent: the
    healing sets the subscription right once Redis answers. A change made while the healing
    waits for Redis (a shard let go as Redis stalls) is set right too, before the gap ends: a
    subscription left behind would count this node among a channel's receivers for ever, and a
    note published there would be taken for heard with nobody to take it."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        await listener.subscribe("b", "c")
        pauser = connect(redis_url)
        try:
            await pauser.execute_command("CLIENT", "PAUSE", "800", "ALL")
            listener._lose_messages()  # a publication went unanswered: a gap
            await listener.unsubscribe("b")  # not sent: the healing sets it right
            await until(lambda: bool(listener._confirming), "the healing waits for Redis")
            await listener.unsubscribe("c")  # while the healing waits
            await until(lambda: not listener._gap, "the gap healed", seconds=10.0)
            counts = dict(await pauser.pubsub_numsub("a", "b", "c"))
            assert counts == {b"a": 1, b"b": 0, b"c": 0}, counts
        finally:
            await pauser.aclose()

    asyncio.run(with_buses(redis_url, body))


# -- Reaching Redis: what the URL says ----------------------------------------------------------


async def exchange(url: str) -> None:
    """A counted and an uncounted publication, heard by another bus on ``url``."""

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        unheard: list[bytes] = []
        sender.publish("a", b"counted", lambda: unheard.append(b"counted"))
        sender.publish("a", b"uncounted")
        await until(lambda: len(heard) == 2, f"heard {heard}")
        assert heard == [("a", b"counted"), ("a", b"uncounted")] and not unheard

    await with_buses(url, body)


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("with_username", [False, True])
def test_a_password_is_given_with_or_without_a_username(
    loop: str, with_username: bool, tmp_path: Path, redis_bin: str
) -> None:
    """A Redis that requires a password (``--requirepass``) takes the bus's connections with
    the URL's password, alone (``AUTH password``) or with the username (``AUTH default
    password``, Redis 6's form)."""
    with redis_server(tmp_path / "redis", redis_bin, password="s3cret") as url:
        if with_username:
            url = url.replace("redis://:", "redis://default:")
        run(loop, exchange(url))


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize(("userinfo", "why"), [(":wrong@", "WRONGPASS"), ("", "NOAUTH")])
def test_a_wrong_or_missing_password_is_refused_with_a_clear_error(
    loop: str, userinfo: str, why: str, tmp_path: Path, redis_bin: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The bus does not start (nor wait for an answer that cannot come): ``start`` fails at
    once with Redis's reason, which is logged as an error."""
    caplog.set_level("ERROR", "parlour.cluster")

    async def scenario(url: str) -> None:
        bus = Bus(url, lambda channel, data: None)
        try:
            with pytest.raises(AuthenticationError, match=why):
                await asyncio.wait_for(bus.start("a"), 3.0)
        finally:
            await bus.close()

    with redis_server(tmp_path / "redis", redis_bin, password="s3cret") as url:
        run(loop, scenario(url.replace(":s3cret@", userinfo)))
    refusals = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert len(refusals) == 1 and "Redis refused the bus's connection" in refusals[0], refusals
    assert why in refusals[0] and "s3cret" not in caplog.text


@pytest.mark.parametrize("loop", LOOPS)
def test_the_url_s_database_is_selected(loop: str, redis_url: str) -> None:
    """Both connections of each bus are on the URL's database (``SELECT 3``): what Redis lists
    of its clients says so."""
    url = redis_url.replace("/0", "/3")

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        sender.publish("a", b"on 3")
        await until(lambda: heard == [("a", b"on 3")], f"heard {heard}")
        asking = connect(redis_url)
        try:
            me = await asking.client_id()
            others = [client for client in await asking.client_list() if int(client["id"]) != me]
        finally:
            await asking.aclose()
        assert len(others) == 4 and {client["db"] for client in others} == {"3"}, others

    run(loop, with_buses(url, body))


@pytest.mark.parametrize("loop", LOOPS)
def test_redis_over_tls(loop: str, tmp_path: Path, redis_bin: str) -> None:
    """``rediss://``: the connections are TLS, the server's certificate checked against the
    URL's ``ssl_ca_certs`` (and the password sent inside)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (a certificate is made for the test)")
    with redis_server(tmp_path / "redis", redis_bin, tls=True, password="s3cret") as url:
        assert url.startswith("rediss://")
        run(loop, exchange(url))


@pytest.mark.parametrize("loop", LOOPS)
def test_redis_by_its_socket_file(loop: str, tmp_path: Path, redis_bin: str) -> None:
    """``unix://path?db=N``: the connections go through the socket file."""
    with redis_server(tmp_path / "redis", redis_bin, unix=True) as url:
        assert url.startswith("unix://")
        run(loop, exchange(url.replace("db=0", "db=2")))


def test_an_untrusted_certificate_is_refused(tmp_path: Path, redis_bin: str) -> None:
    """Without the server's authority in ``ssl_ca_certs``, certificates are checked against
    the system's: a self-signed one is refused, and the bus does not start."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (a certificate is made for the test)")

    async def scenario(url: str) -> None:
        bus = Bus(url, lambda channel, data: None)
        try:
            with pytest.raises(ssl.SSLCertVerificationError):
                await bus.start("a")
        finally:
            await bus.close()

    with redis_server(tmp_path / "redis", redis_bin, tls=True) as url:
        asyncio.run(scenario(url.partition("?")[0]))


def test_the_bus_needs_none_of_redis_py_s_connections(
    monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    """The bus makes and reads its connections itself: with redis-py's connections and pools
    made unusable, it still starts, publishes and delivers; and its source reaches into no
    redis-py connection (``_reader``, ``_writer``, a pool)."""

    def unusable(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the bus used a redis-py connection")

    for owner in (aioredis_connection.AbstractConnection, aioredis_connection.ConnectionPool):
        for name in ("__init__", "connect", "make_connection", "get_connection"):
            if hasattr(owner, name):
                monkeypatch.setattr(owner, name, unusable)

    async def body(sender: Bus, listener: Bus, heard: list[tuple[str, bytes]]) -> None:
        sender.publish("a", b"without redis-py", lambda: None)
        await until(lambda: heard == [("a", b"without redis-py")], f"heard {heard}")

    asyncio.run(with_buses(redis_url, body))
    source = Path(redisbus.__file__).read_text()
    assert "._reader" not in source and "._writer" not in source and "connection_pool" not in source


def test_an_address_is_read_from_the_url_as_redis_py_reads_it() -> None:
    """Host, port, socket file, credentials (percent-decoded), database and TLS options; the
    commands a connection starts with; no password in the address's repr."""
    address = Address.from_url("redis://bus:p%40ss@redis.example:6380/4")
    assert (address.host, address.port, address.path, address.db) == ("redis.example", 6380, None, 4)
    assert (address.username, address.password, address.tls) == ("bus", "p@ss", None)
    assert address.greeting() == [(b"AUTH", b"bus", b"p@ss"), (b"SELECT", b"4"), (b"PING",)]
    assert "p@ss" not in repr(address)
    assert Address.from_url("redis://:pw@h").greeting() == [(b"AUTH", b"pw"), (b"PING",)]
    assert Address.from_url("redis://127.0.0.1").greeting() == [(b"PING",)]
    local = Address.from_url("unix:///run/redis.sock?db=2")
    assert (local.path, local.db, local.tls) == ("/run/redis.sock", 2, None)
    checked = Address.from_url("rediss://h:6390/0").tls
    assert checked is not None and checked.verify_mode == ssl.CERT_REQUIRED and checked.check_hostname
    unchecked = Address.from_url("rediss://h/0?ssl_cert_reqs=none").tls
    assert unchecked is not None and unchecked.verify_mode == ssl.CERT_NONE and not unchecked.check_hostname
    for wrong in ("http://h", "rediss://h/0?ssl_cert_reqs=sometimes"):
        with pytest.raises(ValueError):
            Address.from_url(wrong)
