"""One ordered outbox per connection: effects are queued without awaiting any socket, and one
writer task per connection sends them in order. A slow or dead client therefore never blocks
the loop or delays anyone else's messages; one that falls too far behind is disconnected.

When the socket can take data right away (the common case), :meth:`Outbox.flush_now` hands the
queue to it synchronously, saving the writer task a wake-up per request; the queue stays the
single order of messages either way.

The queue holds messages as they go on the wire: ``frame`` (a websocket's frame header before
each message; none for line protocols) is applied once, when a message is queued, and whoever
sends one message to many connections (:func:`parlour.transport.delivery.deliver` for a
Broadcast) frames it once for all of them and queues the same bytes with :meth:`put_framed`.

Back-pressure: what waits in the queue is capped, in messages (``limit``) and in bytes
(``byte_limit``). A client past either does not read what it is sent: the queue is dropped and
``overflow`` is called at once, so the transport closes the connection without waiting for the
write it is stuck in (websocket: close frame 1008 then a drop; TCP: a drop), and the service
hears of a disconnection like any other (a robot takes the seat)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from parlour.core.effects import Close

__all__ = ["POLICY_VIOLATION", "Outbox"]

#: The websocket close code of a client that does not read (RFC 6455 7.4.1, 1008: it broke
#: the server's policy; 1013 "try again later" would invite it to come back and do it again).
POLICY_VIOLATION = 1008


class Outbox:
    def __init__(
        self,
        write: Callable[[list[bytes]], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        limit: int = 10_000,
        write_now: Callable[[list[bytes]], bool] | None = None,
        frame: Callable[[bytes], bytes] | None = None,
        byte_limit: int = 1 << 20,
        overflow: Callable[[], None] | None = None,
    ) -> None:
        #: Both write framed messages (what ``frame`` made of them), in order, in one write.
        self._write = write
        #: Writes a batch at once and returns True, or returns False when the socket cannot
        #: take it now (not open, or paused by flow control): the writer task then sends it.
        self._write_now = write_now
        self._close = close
        self._limit = limit
        self._byte_limit = byte_limit
        self._overflow = overflow
        #: Bytes of the messages in the queue (the fast path, straight to the socket, skips it).
        self._bytes = 0
        #: True once the client fell too far behind.
        self.overflowed = False
        #: What a message becomes on the wire (None: the message itself). Public: callers
        #: framing a message once for many outboxes compare it.
        self.frame = frame
        self._queue: deque[bytes | Close] = deque()
        self._ready = asyncio.Event()
        #: The connection is gone: the writer task returns at its next wake-up (see stop).
        self._stopped = False
        self._closing = False

    def put(self, item: bytes | Close) -> None:
        """Queue a message (framed here) or a Close."""
        if self.frame is not None and not isinstance(item, Close):
            item = self.frame(item)
        self._enqueue(item)

    def _enqueue(self, item: bytes | Close) -> None:
        if self._closing:
            return
        if isinstance(item, Close):
            self._closing = True
        else:
            self._bytes += len(item)
            if len(self._queue) >= self._limit or self._bytes > self._byte_limit:
                # The client does not read: drop what it will never read and let it go.
                self._queue.clear()
                self._bytes = 0
                self._closing = True
                self.overflowed = True
                item = Close(0, POLICY_VIOLATION, "too many unsent messages")
                if self._overflow is not None:
                    self._overflow()
        self._queue.append(item)
        if self._write_now is None:
            self._ready.set()
        # else the owner calls flush_now once it has put everything of this round

    def put_framed(self, chunks: list[bytes]) -> None:
        """Queue messages framed already (by ``frame``) and flush them: one round's messages
        to this connection. When nothing is queued before them they go straight to the socket,
        in one write, without passing through the queue."""
        if (
            not self._queue
            and self._write_now is not None
            and not self._closing
            and len(chunks) <= self._limit
            and self._write_now(chunks)
        ):
            return
        for chunk in chunks:
            self._enqueue(chunk)
        self.flush_now()

    def flush_now(self) -> None:
        """Send what is queued at once if the socket can take it; the writer task sends the rest."""
        queue = self._queue
        if self._write_now is not None and queue and not isinstance(queue[0], Close):
            batch: list[bytes] = []
            while queue and not isinstance(queue[0], Close):
                batch.append(queue.popleft())  # type: ignore[arg-type]
            if self._write_now(batch):
                self._bytes -= sum(map(len, batch))
            else:
                queue.extendleft(reversed(batch))
        if queue:
            self._ready.set()

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def pending_bytes(self) -> int:
        return self._bytes

    async def run(self) -> None:
        """Send queued messages in order until a Close is sent or the socket fails.

        Whatever has queued up since the last write goes out in one batch (one system call
        for many messages when a burst of game events is produced at once).
        """
        queue = self._queue
        while True:
            await self._ready.wait()
            self._ready.clear()
            while queue and not self._stopped:
                batch: list[bytes] = []
                while queue and not isinstance(queue[0], Close):
                    batch.append(queue.popleft())  # type: ignore[arg-type]
                if batch:
                    # Handed to the socket: the transport's own buffer is bounded by its
                    # flow control (the write waits while it is full).
                    self._bytes -= sum(map(len, batch))
                    await self._write(batch)
                elif queue:
                    item = queue.popleft()
                    assert isinstance(item, Close)
                    await self._close(item.code, item.reason)
                    return
            if self._stopped:
                return

    def stop(self) -> None:
        """The connection is gone: drop what is queued and let the writer task return (from
        waiting for work, or from a write its connection released). Not a cancellation: a
        cancelled task keeps its frames in the exception's traceback, a reference cycle
        through the whole connection that only the cyclic collector frees, late and at a cost,
        for every connection that ever closed."""
        self._stopped = True
        self._queue.clear()
        self._ready.set()

    async def flush(self, timeout: float) -> None:
        """Wait (bounded) until everything queued so far has been handed to the socket."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queue and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
