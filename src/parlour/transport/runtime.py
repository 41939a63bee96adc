"""What every listener shares: connection ids, outboxes, effect execution, the ticker."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable

from parlour.core.effects import Close, ConnId, Effect, Send
from parlour.core.service import Service
from parlour.transport.outbox import Outbox

__all__ = ["Runtime"]

log = logging.getLogger("parlour.transport")


class Runtime:
    """Hosts services: hands out connection ids and executes their effects through outboxes.

    ``clock`` gives the ``now`` passed to services: wall-clock seconds since the epoch, so
    services can render timestamps from it (a test may inject its own).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.outboxes: dict[ConnId, Outbox] = {}
        self._ids = itertools.count(1)
        self.started = clock()

    def new_conn(self) -> ConnId:
        return next(self._ids)

    def execute(self, effects: list[Effect]) -> None:
        touched: dict[ConnId, Outbox] = {}
        for effect in effects:
            conn = effect.conn
            outbox = self.outboxes.get(conn)
            if outbox is None:
                continue  # the connection is already gone
            if isinstance(effect, Send):
                outbox.put(effect.data)
            elif isinstance(effect, Close):
                outbox.put(effect)
            touched[conn] = outbox
        # All of one input's messages to a connection leave together, in one write.
        for outbox in touched.values():
            outbox.flush_now()

    async def tick_forever(self, services: list[Service], seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            now = self.clock()
            for service in services:
                try:
                    self.execute(service.tick(now))
                except Exception:  # a failing check must not stop the ticker
                    log.exception("periodic checks failed")

    async def flush(self, timeout: float) -> None:
        await asyncio.gather(*(outbox.flush(timeout) for outbox in list(self.outboxes.values())))
