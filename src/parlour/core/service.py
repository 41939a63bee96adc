"""The one seam between transports and protocol services.

A service is the sans-I/O side of one listener (the Apologies websocket protocol, the Fish
TCP protocol, ...). The transport owns sockets and time; it calls the service with what
happened and the current time, and executes the effects it gets back. Every call is made by
a single owner (one asyncio task at a time), so a service needs no locks.

A service that returns ``Store`` effects also says what happens when their commit fails: which
rows it needs read back (``reload``, run on the store's thread) and how it returns to them
(``store_failed``). The runtime runs both and knows none of the records.
"""

from __future__ import annotations

from typing import Any, Protocol

from parlour.core.effects import ConnId, Effect
from parlour.storage.base import Store
from parlour.storage.records import Record

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

    def reload(self, records: list[Record], store: Store) -> object:
        """A commit of ``records`` (this service's) failed: read back what the service needs to
        return to the stored state, and return it for ``store_failed``. Runs on the store's
        thread, before ``store_failed``: it may read ``store`` only, never the service's own
        state. A read that fails too is the service's to note in what it returns."""
        ...

    def store_failed(
        self, records: list[Record], conns: list[ConnId], reload: Any, now: float
    ) -> list[Effect]:
        """The commit of ``records`` failed: none of it happened. Return to the stored state
        (``reload`` is what ``reload`` returned, None when nothing was read back for this
        service) and refuse the requests of ``conns``, whose answers were never shown."""
        ...
