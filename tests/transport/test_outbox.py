"""The per-connection outbox: order kept, bursts batched, a reader that never reads let go."""

from __future__ import annotations

import asyncio

from parlour.core.effects import Close
from parlour.transport.outbox import Outbox


def test_order_batches_and_close() -> None:
    async def scenario() -> tuple[list[list[str]], list[tuple[int, str]]]:
        writes: list[list[str]] = []
        closes: list[tuple[int, str]] = []

        async def write(batch: list[str]) -> None:
            writes.append(batch)

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close)
        task = asyncio.create_task(outbox.run())
        for text in ("a", "b", "c"):
            outbox.put(text)
        outbox.put(Close(1, 4000, "bye"))
        outbox.put("after close")  # ignored: the connection is closing
        await asyncio.wait_for(task, 1)
        return writes, closes

    writes, closes = asyncio.run(scenario())
    assert writes == [["a", "b", "c"]] and closes == [(4000, "bye")]


def test_a_client_that_falls_too_far_behind_is_closed() -> None:
    async def scenario() -> tuple[int, list[tuple[int, str]]]:
        stuck = asyncio.Event()
        closes: list[tuple[int, str]] = []

        async def write(batch: list[str]) -> None:
            await stuck.wait()  # the peer never reads

        async def close(code: int, reason: str) -> None:
            closes.append((code, reason))

        outbox = Outbox(write, close, limit=10)
        task = asyncio.create_task(outbox.run())
        outbox.put("first")
        await asyncio.sleep(0)  # the writer takes "first" and blocks on the socket
        for i in range(11):
            outbox.put(str(i))
        pending = outbox.pending
        stuck.set()
        await asyncio.wait_for(task, 1)
        return pending, closes

    pending, closes = asyncio.run(scenario())
    assert pending == 1  # everything unsent was dropped for the close
    assert closes == [(1008, "too many unsent messages")]
