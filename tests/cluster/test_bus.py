"""The bus between nodes (parlour.cluster.redisbus.Bus) against a real Redis, on both event
loops a node may run (asyncio's and uvloop's): the order of publications, the "unheard" answer
for a channel nobody holds, subscriptions in force once ``subscribe`` returns, and a publishing
connection lost with publications written but not known handled (a gap, told once Redis
answers again), one Redis closed while idle (no gap), and a Redis that stops answering. A Redis restart is in test_faults.py."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest
import uvloop

from parlour.cluster import redisbus
from parlour.cluster.redisbus import Bus, connect

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
