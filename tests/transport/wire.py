"""Fake sockets behind real outboxes, for tests of how the runtime writes."""

from __future__ import annotations

import asyncio

from parlour.core.effects import ConnId
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import text_message

__all__ = ["Wire"]


class Wire:
    """Fake sockets behind real outboxes: what each connection was written, write by write."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.writes: dict[ConnId, list[list[bytes]]] = {}
        self.closes: dict[ConnId, tuple[int, str]] = {}
        self.open: dict[ConnId, bool] = {}
        self.tasks: list[asyncio.Task[None]] = []

    def add(self, conn: ConnId, framed: bool = True) -> Outbox:
        self.writes[conn] = []
        self.open[conn] = True

        def write_now(chunks: list[bytes]) -> bool:
            if self.open[conn]:
                self.writes[conn].append(list(chunks))
            return self.open[conn]

        async def write(chunks: list[bytes]) -> None:
            self.writes[conn].append(list(chunks))

        async def close(code: int, reason: str) -> None:
            self.closes[conn] = (code, reason)

        outbox = Outbox(write, close, write_now=write_now, frame=text_message if framed else None)
        self.runtime.outboxes[conn] = outbox
        self.tasks.append(asyncio.get_running_loop().create_task(outbox.run()))
        return outbox

    async def settle(self) -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
