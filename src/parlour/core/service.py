"""The one seam between transports and protocol services.

A service is the sans-I/O side of one listener (the Apologies websocket protocol, the Fish
TCP protocol, ...). The transport owns sockets and time; it calls the service with what
happened and the current time, and executes the effects it gets back. Every call is made by
a single owner (one asyncio task at a time), so a service needs no locks.
"""

from __future__ import annotations

from typing import Protocol

from parlour.core.effects import ConnId, Effect

__all__ = ["Service"]


class Service(Protocol):
    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        """A new connection was accepted (it may be refused with a Close effect)."""
        ...

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        """Bytes or text arrived on ``conn`` (a websocket frame, or a chunk of a TCP stream)."""
        ...

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        """``conn`` is gone (closed by the peer, by an effect, or by a failure)."""
        ...

    def tick(self, now: float) -> list[Effect]:
        """Periodic checks and timers due at ``now`` (seconds on the transport's clock)."""
        ...

    def shutdown(self, now: float) -> list[Effect]:
        """The server is stopping: say goodbye to every connection."""
        ...
