"""The composition root: settings -> services, runtime, listeners, ticker, signals."""

from __future__ import annotations

import asyncio
import logging
import signal
from random import Random

from parlour.protocols.apologies_ws import ApologiesService
from parlour.settings import Settings
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import serve_websocket

__all__ = ["SHUTDOWN_SIGNALS", "run_server"]

log = logging.getLogger("parlour")

SHUTDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: How long shutdown waits for goodbyes to reach slow clients before closing them anyway.
FLUSH_SECONDS = 2.0


async def run_server(settings: Settings, stop: asyncio.Event | None = None) -> int:
    """Serve until a shutdown signal (or ``stop``), then say goodbye to everyone and return 0."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in SHUTDOWN_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    runtime = Runtime()
    apologies = ApologiesService(settings, Random())
    async with serve_websocket(apologies, settings.host, settings.port, runtime) as listener:
        log.info("Apologies websocket server listening on ws://%s:%d/", settings.host, listener.port)
        ticker = asyncio.create_task(runtime.tick_forever([apologies], settings.tick_seconds))
        await stop.wait()
        log.info("shutting down")
        ticker.cancel()
        runtime.execute(apologies.shutdown(runtime.clock()))
        await runtime.flush(FLUSH_SECONDS)
    for sig in SHUTDOWN_SIGNALS:
        loop.remove_signal_handler(sig)
    return 0
