"""The per-connection outbox: order kept, bursts batched, a reader that never reads let go."""

from __future__ import annotations

import asyncio

from parlour.core.effects import Close
from parlour.transport.outbox import Outbox


def test_order_batches_and_close() -> None:
    async def scenario() -> tuple[list[list[bytes]], list[tuple[int, str]]]:
        writes: list[list[bytes]] = []
        closes: list[tuple[int, str]] = []

        async def write(batch: list[bytes]) -> None:
            writes.append(batch)

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close)
        task = asyncio.create_task(outbox.run())
        for text in (b"a", b"b", b"c"):
            outbox.put(text)
        outbox.put(Close(1, 4000, "bye"))
        outbox.put(b"after close")  # ignored: the connection is closing
        await asyncio.wait_for(task, 1)
        return writes, closes

    writes, closes = asyncio.run(scenario())
    assert writes == [[b"a", b"b", b"c"]] and closes == [(4000, "bye")]


def test_a_client_that_falls_too_far_behind_is_closed() -> None:
    async def scenario() -> tuple[int, list[tuple[int, str]]]:
        stuck = asyncio.Event()
        closes: list[tuple[int, str]] = []

        async def write(batch: list[bytes]) -> None:
            await stuck.wait()  # the peer never reads

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close, limit=10)
        task = asyncio.create_task(outbox.run())
        outbox.put(b"first")
        await asyncio.sleep(0)  # the writer takes "first" and blocks on the socket
        for i in range(11):
            outbox.put(str(i).encode())
        pending = outbox.pending
        stuck.set()
        await asyncio.wait_for(task, 1)
        return pending, closes

    pending, closes = asyncio.run(scenario())
    assert pending == 1  # everything unsent was dropped for the close
    assert closes == [(1008, "too many unsent messages")]


def test_flush_now_writes_at_once_and_falls_back_to_the_writer_in_order() -> None:
    async def scenario() -> tuple[list[list[bytes]], list[list[bytes]], list[tuple[int, str]]]:
        direct: list[list[bytes]] = []
        queued: list[list[bytes]] = []
        closes: list[tuple[int, str]] = []
        socket_open = True

        def write_now(batch: list[bytes]) -> bool:
            if socket_open:
                direct.append(batch)
            return socket_open

        async def write(batch: list[bytes]) -> None:
            queued.append(batch)

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close, write_now=write_now)
        task = asyncio.create_task(outbox.run())
        outbox.put(b"a")
        outbox.put(b"b")
        outbox.flush_now()
        assert direct == [[b"a", b"b"]] and outbox.pending == 0  # sent before any task ran
        socket_open = False  # e.g. paused by flow control: the writer task takes over
        outbox.put(b"c")
        outbox.flush_now()
        assert outbox.pending == 1
        await asyncio.sleep(0)
        socket_open = True
        outbox.put(b"d")
        outbox.put(Close(1, 4000, "bye"))
        outbox.flush_now()  # "d" goes now; the close waits for the writer, after it
        await asyncio.wait_for(task, 1)
        return direct, queued, closes

    direct, queued, closes = asyncio.run(scenario())
    assert direct == [[b"a", b"b"], [b"d"]]
    assert queued == [[b"c"]]
    assert closes == [(4000, "bye")]


def test_the_byte_cap_counts_what_waits_and_overflows_at_once() -> None:
    async def scenario() -> None:
        stuck = asyncio.Event()
        written: list[list[bytes]] = []
        overflows: list[int] = []

        async def write(batch: list[bytes]) -> None:
            written.append(batch)
            await stuck.wait()  # the peer does not read

        async def close(code: int, reason: str) -> None:
            pass

        outbox = Outbox(write, close, byte_limit=1000, overflow=lambda: overflows.append(outbox.pending))
        task = asyncio.create_task(outbox.run())
        outbox.put(b"a" * 600)
        await asyncio.sleep(0)  # handed to the socket: no longer counted
        assert written == [[b"a" * 600]] and outbox.pending_bytes == 0
        outbox.put(b"b" * 600)
        outbox.put(b"c" * 400)
        assert outbox.pending_bytes == 1000 and not outbox.overflowed
        outbox.put(b"d")  # one byte past the cap
        # Told at once, while the writer is still stuck in its write; the queue is dropped.
        assert overflows == [0] and outbox.overflowed and outbox.pending_bytes == 0
        outbox.put(b"e" * 5000)  # closing: ignored
        assert outbox.pending == 1 and overflows == [0]
        stuck.set()
        await asyncio.wait_for(task, 1)

    asyncio.run(scenario())
