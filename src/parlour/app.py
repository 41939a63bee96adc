"""The composition root: settings -> services, runtime, listeners, ticker, signals."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import time
from contextlib import AsyncExitStack
from random import Random
from typing import Any

from parlour.accounts.http import AccountRoutes
from parlour.accounts.limits import LoginLimiter
from parlour.accounts.tokens import ExternalJwt, SessionTokens
from parlour.core.effects import Store as Remember
from parlour.core.ledger import Ledger
from parlour.core.service import Service
from parlour.metrics import kinds
from parlour.metrics.collector import Exporter, Watched
from parlour.metrics.tally import Meter, TimedRobot
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.async_ws import devices, social
from parlour.protocols.async_ws.history import ReplayRoutes
from parlour.protocols.async_ws.hub import NEXT_GAME_KEY, AsyncLimits
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.streamed import aborted_tables
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings
from parlour.storage import Store, open_store
from parlour.transport.http import Reply
from parlour.transport.notifier import start_notifier, stop_notifier
from parlour.transport.runtime import DRAIN_SECONDS, HEARTBEAT_SECONDS, Runtime
from parlour.transport.tcp import serve_tcp
from parlour.transport.websocket import serve_websocket

__all__ = ["SHUTDOWN_SIGNALS", "run_server"]

log = logging.getLogger("parlour")

SHUTDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The websocket path of the Scalable Server workflows (S1); every other path is Apologies.
ASYNC_PATH = "/async"
#: The parlour_meta key of the secret session tokens are signed with.
SESSION_SECRET = "session_secret"
#: How long shutdown waits for goodbyes to reach slow clients before closing them anyway.
FLUSH_SECONDS = 2.0


def browser_url(host: str, port: int) -> str:
    """The address to open for the browser client: a wildcard bind is reached on loopback."""
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


async def run_server(settings: Settings, stop: asyncio.Event | None = None) -> int:
    """Serve until a shutdown signal (or ``stop``), then say goodbye to everyone and return 0."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    # StoreRefused (not a store, corrupt, too new) stops the start before anything listens.
    store = open_store(settings.store, settings.store_sync)
    for sig in SHUTDOWN_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    runtime = Runtime(store=store, store_writer=settings.store_writer)
    ledger = Ledger(settings.max_in_progress_games)  # one limit for every game of the server
    apologies = ApologiesService(settings, Random(), ledger)
    fish = FishService(settings, Random(), ledger=ledger) if settings.fish_port else None
    tsuro = TsuroService(settings, Random(), ledger) if settings.tsuro_port else None
    services: list[Service] = [service for service in (apologies, fish, tsuro) if service is not None]
    # /async (scalable-server-notes.md S4): tokens are signed with a secret kept in the store,
    # so that they outlive a restart (a fresh one per run with --store none).
    tokens = SessionTokens(
        store.ensure_secret(SESSION_SECRET) if store is not None else secrets.token_bytes(32),
        settings.session_ttl,
    )
    limiter = LoginLimiter(
        settings.login_failures_per_name, settings.login_failures_per_address, settings.login_window
    )
    async_service = AsyncService(
        tokens, async_limits(settings), Random(), ExternalJwt.from_settings(settings), limiter
    )
    accounts = AccountRoutes(async_service, runtime, tokens, limiter)
    replays = ReplayRoutes(async_service, runtime.clock)
    exporter = _metrics(runtime, apologies, async_service, fish, tsuro)
    async with AsyncExitStack() as stack:
        if store is not None:
            stack.push_async_callback(runtime.close_store)
            # Everything is back in place before the first connection is accepted.
            await _restore(store, runtime, services, settings)
            _restore_async(store, runtime, async_service)
        services.append(async_service)
        listener = await stack.enter_async_context(
            serve_websocket(
                apologies,
                settings.host,
                settings.port,
                runtime,
                routes={ASYNC_PATH: async_service},
                http_handlers={**accounts.routes(), **replays.routes()},
                metrics=lambda: Reply(200, exporter.render(), exporter.content_type),
            )
        )
        log.info("async protocol on ws://%s:%d%s", settings.host, listener.port, ASYNC_PATH)
        log.info("Apologies websocket server listening on ws://%s:%d/", settings.host, listener.port)
        log.info("open %s in a browser to play", browser_url(settings.host, listener.port))
        if fish is not None:
            tables = await stack.enter_async_context(
                serve_tcp(fish, settings.host, settings.fish_port, runtime)
            )
            log.info("Fish tables listening on tcp://%s:%d", settings.host, tables.port)
        if tsuro is not None:
            tsuro_tables = await stack.enter_async_context(
                serve_tcp(tsuro, settings.host, settings.tsuro_port, runtime)
            )
            log.info("Tsuro tables listening on tcp://%s:%d", settings.host, tsuro_tables.port)
        ticker = asyncio.create_task(
            runtime.tick_forever(services, settings.tick_seconds, settings.record_retention)
        )
        # Push notifications (S16): the store's outbox POSTed to notify_webhook_url, if set.
        notifier = start_notifier(runtime, store, settings)
        await stop.wait()
        log.info("shutting down")
        ticker.cancel()
        await stop_notifier(notifier)
        for service in services:
            runtime.execute(service.shutdown(runtime.clock()), service)
        await runtime.drain_store(DRAIN_SECONDS)
        await runtime.flush(FLUSH_SECONDS)
    for sig in SHUTDOWN_SIGNALS:
        loop.remove_signal_handler(sig)
    return 0


def _metrics(
    runtime: Runtime,
    apologies: ApologiesService,
    async_service: AsyncService,
    fish: FishService | None,
    tsuro: TsuroService | None,
) -> Exporter:
    """What GET /metrics reports: each listener's service watched under its protocol's label,
    the robots timed (wrapped here, so that no pure module reads a clock), the runtime's commits."""
    meter = runtime.meter = Meter()
    watched = [Watched("apologies", apologies), Watched("async", async_service)]
    meter.watch(apologies, "apologies", kinds.apologies_kind)
    meter.watch(async_service, "async", kinds.async_kind)
    apologies.lobby.robot = TimedRobot(apologies.lobby.robot, meter.robot("apologies"))
    for name, table in (("fish", fish), ("tsuro", tsuro)):
        if table is not None:
            watched.append(Watched(name, table))
            meter.watch(table, name, kinds.stream_kind)
            table.robot = TimedRobot(table.robot, meter.robot(name))
    return Exporter(runtime, meter, watched)


def async_limits(settings: Settings) -> AsyncLimits:
    return AsyncLimits(
        ping_timeout=settings.async_ping_timeout,
        max_offers=settings.async_max_offers,
        max_games=settings.async_max_games,
        max_state_bytes=settings.async_max_state_bytes,
        max_pause=settings.async_max_pause,
        requests_per_second=settings.async_requests_per_second,
        list_interval=settings.async_list_interval,
        outcome_retention=settings.async_outcome_retention,
        finished_retention=settings.game_retention,
        max_frame_bytes=3 * settings.async_max_state_bytes,
    )


def _restore_async(store: Store, runtime: Runtime, service: AsyncService) -> None:
    """Accounts, ratings and every live /async game, with the clocks not charged for the
    time the server was down (S10)."""
    beat = store.meta("heartbeat")
    service.restore(
        store.accounts(),
        store.ratings(),
        store.load_async_games(),
        store.meta(NEXT_GAME_KEY),
        float(beat) + HEARTBEAT_SECONDS if beat else None,
        runtime.clock(),
    )
    devices.restore_devices(service.hub, store.devices())
    social.restore(
        service.hub, store.load_chat([social.LOBBY, *service.hub.games], social.HISTORY), store.relations()
    )
    log.info(
        "async: %d accounts and %d live games restored", len(service.hub.accounts), len(service.hub.games)
    )


async def _restore(store: Store, runtime: Runtime, services: list[Any], settings: Settings) -> None:
    """Load what the store holds into every service, before any listener is bound."""
    started = time.perf_counter()
    snapshot = store.load_live()
    now = runtime.clock()
    for service in services:
        runtime.execute(service.restore(snapshot, now), service)
    # Tables of a listener turned off this time are aborted all the same.
    off = tuple(
        name for name, port in (("fish", settings.fish_port), ("tsuro", settings.tsuro_port)) if not port
    )
    if off:
        runtime.execute([Remember(list(aborted_tables(snapshot, off, now)))])
    log.info(
        "store %s: %d players and %d games in progress restored in %.3f s",
        store.location,
        len(snapshot.players),
        len(snapshot.games),
        time.perf_counter() - started,
    )
