"""One ordered outbox per connection: effects are queued without awaiting any socket, and one
writer task per connection sends them in order. A slow or dead client therefore never blocks
the loop or delays anyone else's messages; one that falls too far behind is disconnected."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from parlour.core.effects import Close

__all__ = ["Outbox"]


class Outbox:
    def __init__(
        self,
        write: Callable[[list[str]], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        limit: int = 10_000,
    ) -> None:
        self._write = write
        self._close = close
        self._limit = limit
        self._queue: deque[str | Close] = deque()
        self._ready = asyncio.Event()
        self._closing = False

    def put(self, item: str | Close) -> None:
        if self._closing:
            return
        if isinstance(item, Close):
            self._closing = True
        elif len(self._queue) >= self._limit:
            # The client does not read: drop what it will never read and let it go.
            self._queue.clear()
            self._closing = True
            item = Close(0, 1008, "too many unsent messages")
        self._queue.append(item)
        self._ready.set()

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def run(self) -> None:
        """Send queued messages in order until a Close is sent or the socket fails.

        Whatever has queued up since the last write goes out in one batch (one system call
        for many messages when a burst of game events is produced at once).
        """
        queue = self._queue
        while True:
            await self._ready.wait()
            self._ready.clear()
            while queue:
                batch: list[str] = []
                while queue and not isinstance(queue[0], Close):
                    batch.append(queue.popleft())  # type: ignore[arg-type]
                if batch:
                    await self._write(batch)
                elif queue:
                    item = queue.popleft()
                    assert isinstance(item, Close)
                    await self._close(item.code, item.reason)
                    return

    async def flush(self, timeout: float) -> None:
        """Wait (bounded) until everything queued so far has been handed to the socket."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queue and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
