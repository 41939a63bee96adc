"""The composition root: settings -> services, runtime, listeners, ticker, signals."""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from random import Random
from typing import TYPE_CHECKING, Any

from parlour.accounts.limits import LoginLimiter
from parlour.accounts.tokens import ExternalJwt, SessionTokens
from parlour.core.effects import Store as Remember
from parlour.core.ids import IdSource
from parlour.core.ledger import Ledger
from parlour.core.service import Service
from parlour.metrics import kinds
from parlour.metrics.collector import Exporter, Watched
from parlour.metrics.history import SAMPLE_SECONDS, History
from parlour.metrics.tally import Meter, TimedRobot, robot_timer
from parlour.node_games import ClusterGames, LocalGames, node_game_routes
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.async_ws.http.account_http import AccountSelfRoutes
from parlour.protocols.async_ws.http.account_routes import AccountRoutes
from parlour.protocols.async_ws.http.admin_http import AdminRoutes
from parlour.protocols.async_ws.http.profile_http import ProfileRoutes, stored_profiles
from parlour.protocols.async_ws.http.replay_http import ReplayRoutes, StoredGame, StoredRole, stored_games
from parlour.protocols.async_ws.players import devices, social
from parlour.protocols.async_ws.reference.catalogue import catalogue_routes
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.shards.placement import (
    Directory,
    Router,
    WantOnline,
    answer_keys,
    apply_everyone,
    awaited,
    encode_note,
    shard_name,
    unanswered,
    unheard,
)
from parlour.protocols.async_ws.shards.shard import ShardService
from parlour.protocols.async_ws.state.hub import NEXT_GAME_KEY, AsyncLimits
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.streamed import aborted_tables
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings
from parlour.storage import Store, StoreFailure, open_store
from parlour.storage.records import Snapshot
from parlour.transport.http import HttpHandler, Reply
from parlour.transport.limits import ConnectionLimits
from parlour.transport.notifier import start_notifier, stop_notifier
from parlour.transport.runtime import DRAIN_SECONDS, HEARTBEAT_SECONDS, Runtime
from parlour.transport.tcp import serve_tcp
from parlour.transport.websocket import serve_websocket

if TYPE_CHECKING:
    from parlour.cluster.node import ClusterNode
    from parlour.cluster.ownership import Factory, Owned

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


async def run_server(
    settings: Settings, stop: asyncio.Event | None = None, *, reuse_port: bool = False
) -> int:
    """Serve until a shutdown signal (or ``stop``), then say goodbye to everyone and return 0.
    ``reuse_port``: the websocket port is shared with other worker processes (parlour.workers)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    # StoreRefused (not a store, corrupt, too new) stops the start before anything listens.
    store = open_store(settings.store, settings.store_sync)
    for sig in SHUTDOWN_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    runtime = Runtime(
        store=store,
        # The nodes of a cluster read what the others commit: a node's store must hold what it
        # acknowledged, not a log that only its own writer applies.
        store_writer="process"
        if settings.cluster and settings.store_writer == "log"
        else settings.store_writer,
        limits=ConnectionLimits.from_settings(settings),
        fanout_slice=settings.broadcast_slice,
    )
    ledger = Ledger(settings.max_in_progress_games)  # one limit for every game of the server
    # Rules and robots draw from a Random each; every secret (ids, seeds) from the OS (secrets).
    ids = IdSource()
    apologies = ApologiesService(settings, Random(), ledger, ids, offload=True)
    fish = FishService(settings, Random(), ledger=ledger, ids=ids) if settings.fish_port else None
    tsuro = TsuroService(settings, Random(), ledger, ids) if settings.tsuro_port else None
    for table in (fish, tsuro):
        if table is not None:
            table.offload = True  # slow robots decide in the runtime's robots' process
    services: list[Service] = [service for service in (apologies, fish, tsuro) if service is not None]
    # /async (docs/async-decisions.md S4): tokens are signed with a secret kept in the store,
    # so that they outlive a restart (a fresh one per run with --store none).
    tokens = SessionTokens(
        store.ensure_secret(SESSION_SECRET) if store is not None else secrets.token_bytes(32),
        settings.session_ttl,
    )
    limiter = LoginLimiter(
        settings.login_failures_per_name, settings.login_failures_per_address, settings.login_window
    )
    async_service = AsyncService(
        tokens, async_limits(settings), Random(), ExternalJwt.from_settings(settings), limiter, ids
    )
    async_service.games.offload = True  # server-rules games' slow robots, likewise
    accounts = AccountRoutes(async_service, runtime, tokens, limiter)
    replays = ReplayRoutes(async_service, runtime.clock)
    profiles = ProfileRoutes(async_service)
    exporter = _metrics(runtime, apologies, async_service, fish, tsuro)
    history = History()  # the admin dashboard's last hour, sampled by _sample_forever
    http_handlers: dict[str, HttpHandler] = {
        **accounts.routes(),
        **_operator_routes(
            async_service,
            runtime,
            tokens,
            limiter,
            LocalGames(runtime, lambda: apologies, fish, tsuro),
            history.as_json,
        ),
        **replays.routes(),
        **catalogue_routes(),
        **profiles.routes(),
    }
    websocket_service: Service = apologies
    websocket_routes: dict[str, Service] = {ASYNC_PATH: async_service}
    notifier: asyncio.Task[None] | None = None
    node: ClusterNode | None = None
    async with AsyncExitStack() as stack:
        if settings.cluster:
            # Several nodes (docs/cluster.md): imported only here, so one node never loads Redis.
            assert store is not None  # settings refuse a cluster without a store
            stack.push_async_callback(runtime.close_store)
            node = await _start_cluster(
                settings, store, runtime, tokens, limiter, services, exporter, history
            )
            websocket_service = node.services["apologies"]
            websocket_routes = {ASYNC_PATH: node.services["async"]}
            http_handlers = {path: node.http_handler("async", path) for path in http_handlers}
            services[:] = [websocket_service, *(s for s in (fish, tsuro) if s is not None)]
            services.append(websocket_routes[ASYNC_PATH])
            services.extend(node.services[name] for name in node.shards)  # ticked where owned
            # /metrics counts the frames this node's connections send, whoever owns the service.
            exporter.collector.meter.watch(websocket_service, "apologies", kinds.apologies_kind)
            exporter.collector.meter.watch(websocket_routes[ASYNC_PATH], "async", kinds.async_kind)
        else:
            if store is not None:
                stack.push_async_callback(runtime.close_store)
                # Everything is back in place before the first connection is accepted.
                with _collector_paused():
                    await _restore(store, runtime, services, settings)
                    _restore_async(store, runtime, async_service)
                replays.stored = _stored_async_games(store, runtime)
                replays.role = _stored_role(store, runtime)
                profiles.read = stored_profiles(runtime.in_store_thread, store)
            services.append(async_service)
        listener = await stack.enter_async_context(
            serve_websocket(
                websocket_service,
                settings.host,
                settings.port,
                runtime,
                routes=websocket_routes,
                http_handlers=http_handlers,
                metrics=lambda: Reply(200, exporter.render(), exporter.content_type),
                reuse_port=reuse_port,
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
        sampler = asyncio.create_task(_sample_forever(history, exporter, runtime.clock))
        if node is None:
            # Push notifications (S16): the store's outbox POSTed to notify_webhook_url, if set
            # (in a cluster, by the owner of /async only).
            notifier = start_notifier(runtime, store, settings)
        await stop.wait()
        log.info("shutting down")
        ticker.cancel()
        sampler.cancel()
        await stop_notifier(notifier)
        for service in services:
            runtime.execute(service.shutdown(runtime.clock()), service)
        await runtime.drain_store(DRAIN_SECONDS)
        await runtime.flush(FLUSH_SECONDS)
        if node is not None:
            await node.stop()  # hands the leases over once everything is stored
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
    apologies.lobby.turns.robot = TimedRobot(apologies.lobby.turns.robot, meter.robot("apologies"))
    async_service.games.robot_timer = robot_timer(meter)  # server-rules games of /async
    for name, table in (("fish", fish), ("tsuro", tsuro)):
        if table is not None:
            watched.append(Watched(name, table))
            meter.watch(table, name, kinds.stream_kind)
            table.robot = TimedRobot(table.robot, meter.robot(name))
    return Exporter(runtime, meter, watched)


async def _sample_forever(history: History, exporter: Exporter, clock: Callable[[], float]) -> None:
    """The dashboard's figures, read every SAMPLE_SECONDS on the loop (between inputs, so
    what is read is consistent), for the last hour."""
    while True:
        history.sample(exporter.collector.reading(clock()))
        await asyncio.sleep(SAMPLE_SECONDS)


def _operator_routes(
    service: AsyncService,
    runtime: Runtime,
    tokens: SessionTokens,
    limiter: LoginLimiter,
    other_games: LocalGames | ClusterGames | None = None,
    dashboard: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, HttpHandler]:
    """A player's own account routes and the admin routes, bound to the /async
    service that keeps the accounts (in a cluster: the hub's owner, where they are forwarded;
    there the games of the other protocols are asked of every node: ClusterGames)."""
    own = AccountSelfRoutes(service, runtime, tokens, limiter)
    return {**own.routes(), **AdminRoutes(service, runtime, tokens, own, other_games, dashboard).routes()}


def async_limits(settings: Settings) -> AsyncLimits:
    return AsyncLimits(
        ping_timeout=settings.async_ping_timeout,
        max_offers=settings.async_max_offers,
        max_games=settings.async_max_games,
        max_state_bytes=settings.async_max_state_bytes,
        max_pause=settings.async_max_pause,
        requests_per_second=settings.async_requests_per_second,
        list_interval=settings.async_list_interval,
        list_cap=settings.async_lobby_list_cap,
        outcome_retention=settings.async_outcome_retention,
        finished_retention=settings.game_retention,
        max_frame_bytes=3 * settings.async_max_state_bytes,
    )


def _restore_async(
    store: Store, runtime: Runtime, service: AsyncService, heartbeat: float | None = None
) -> None:
    """Accounts, ratings and every live /async game, with the clocks not charged for the
    time the server was down (S10): from ``heartbeat`` (when it was last known alive; by
    default the store's heartbeat) to now. On the store's own thread when it has one."""
    if heartbeat is None:
        beat = store.meta("heartbeat")
        heartbeat = float(beat) + HEARTBEAT_SECONDS if beat else None
    service.restore(
        store.accounts(),
        store.ratings(),
        store.load_async_games(),
        store.meta(NEXT_GAME_KEY),
        heartbeat,
        runtime.clock(),
    )
    devices.restore_devices(service.hub, store.devices())
    social.restore(
        service.hub,
        store.load_chat([social.LOBBY, *service.hub.games], social.HISTORY),
        store.relations(),
        store.meta(social.MUTES_KEY),
        store.reports(social.REPORTS_RESTORED),
        runtime.clock(),
    )
    log.info(
        "async: %d accounts and %d live games restored", len(service.hub.accounts), len(service.hub.games)
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the store's games are rebuilt: everything a restore
    makes lives on (or is freed by its reference count), and the collections the allocations set
    off only walk it again and again: 0.4-0.6 s of a 3.2-3.6 s restore of 10,000 Apologies
    games in progress (bench/restart.py's store)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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


def _stored_async_games(store: Store, runtime: Runtime) -> StoredGame:
    """/async games read from the store, off the event loop: replays of games no longer in memory
    (finished before a restart, or forgotten after their retention)."""

    def load_doc(game_id: int) -> bytes | None:
        row = store.load_async_game(game_id)
        return None if row is None else row.doc

    return stored_games(runtime.in_store_thread, load_doc)


def _stored_role(store: Store, runtime: Runtime) -> StoredRole:
    """An account's role as the store holds it now (``parlour admin grant|revoke`` changes it
    there), read off the event loop: "" when the store cannot say (no admin's powers then)."""

    async def role(account_id: int) -> str:
        try:
            row = await runtime.in_store_thread(lambda: store.account(account_id))
        except StoreFailure:
            return ""
        return "" if row is None else row.role

    return role


class CannotStart(Exception):
    """The server cannot start now (its cluster's Redis or store does not answer): one line,
    no traceback; ``parlour serve`` exits with status 1."""


async def _start_cluster(
    settings: Settings,
    store: Store,
    runtime: Runtime,
    tokens: SessionTokens,
    limiter: LoginLimiter,
    services: list[Any],
    exporter: Exporter,
    history: History,
) -> ClusterNode:
    """Join the cluster (docs/cluster.md): this node's Fish and Tsuro tables are its own; the
    Apologies and /async services are owned by one node at a time, each restored from the
    store by the node that takes its lease (before this node listens, if it is the first)."""
    from parlour.cluster.node import ClusterNode
    from parlour.cluster.ownership import Owned

    # Tables are this node's alone: another node's live tables in the store are not aborted
    # here (nothing is restored into them, and they are not this node's to end).
    now = runtime.clock()
    for service in services:
        if not isinstance(service, ApologiesService):
            runtime.execute(service.restore(Snapshot([], [], {}, None), now), service)

    placeholder: dict[str, object] = {
        watched.protocol: watched.service for watched in exporter.collector.watched
    }

    async def own_apologies(heartbeat: float | None) -> Owned:
        # A ledger per tenure: the games of an earlier tenure are the next owner's to count.
        service = ApologiesService(
            settings, Random(), Ledger(settings.max_in_progress_games), IdSource(), offload=True
        )
        snapshot = await runtime.in_store_thread(store.load_live)
        if heartbeat is not None:
            snapshot.heartbeat = heartbeat
        runtime.execute(service.restore(snapshot, runtime.clock()), service)
        return Owned(service, stop=_reported(exporter, "apologies", service, placeholder))

    # The admin routes run on the hub's owner; each node answers for its own games.
    cluster_games = ClusterGames(lambda request: node.ask_every_node(request))

    def running_apologies() -> ApologiesService | None:
        acting = node.services["apologies"].acting()
        return acting if isinstance(acting, ApologiesService) else None

    tables = {type(service): service for service in services}
    fish, tsuro = tables.get(FishService), tables.get(TsuroService)
    shards = settings.cluster_shards
    # Every node's copy of the accounts, for the games it runs on its shards (placement.py).
    directory = Directory()
    try:
        accounts, ratings = await runtime.in_store_thread(lambda: (store.accounts(), store.ratings()))
    except StoreFailure as failure:
        # The store went away as this node joined (PostgreSQL restarting, say): as without
        # Redis, the node ends with the reason on one line, for its supervisor to start again.
        raise CannotStart(f"cannot join the cluster: the store does not answer: {failure}") from None
    directory.load(list(accounts), list(ratings))

    async def own_async(heartbeat: float | None) -> Owned:
        service = AsyncService(
            tokens,
            async_limits(settings),
            Random(),
            ExternalJwt.from_settings(settings),
            limiter,
            IdSource(),
            shards=shards,
        )
        service.games.offload = True
        await runtime.in_store_thread(lambda: _restore_async(store, runtime, service, heartbeat))
        replays = ReplayRoutes(service, runtime.clock)
        replays.stored = _stored_async_games(store, runtime)
        replays.role = _stored_role(store, runtime)
        routes = {
            **AccountRoutes(service, runtime, tokens, limiter).routes(),
            **_operator_routes(service, runtime, tokens, limiter, cluster_games, history.as_json),
            **replays.routes(),
            **catalogue_routes(),
            **ProfileRoutes(service, stored_profiles(runtime.in_store_thread, store)).routes(),
        }
        notifier = start_notifier(runtime, store, settings)
        unreport = _reported(exporter, "async", service, placeholder)

        async def stop() -> None:
            await stop_notifier(notifier)
            await unreport()

        # The new hub's word that nobody is signed in with it yet: once its tenure is certain.
        # Said by a takeover given up while restoring, it would clear every node's directory
        # after players had signed in with the hub that did take over.
        return Owned(
            service, routes, stop, begin=lambda: runtime.execute(service.hello(runtime.clock()), service)
        )

    def own_shard(shard: int) -> Factory:
        async def own(heartbeat: float | None) -> Owned:
            service = ShardService(shard, shards, directory, async_limits(settings), Random(), IdSource())
            service.games.robot_timer = robot_timer(exporter.collector.meter)
            service.games.offload = True
            service.fetch = _game_reader(
                service, store, runtime, lambda: node.services[shard_name(shard)].acting() is service
            )
            rows = await runtime.in_store_thread(lambda: store.load_async_shard(shard, shards))
            if heartbeat is None:
                beat = await runtime.in_store_thread(lambda: store.meta("heartbeat"))
                heartbeat = float(beat) + HEARTBEAT_SECONDS if beat else None
            runtime.execute(service.restore(rows, heartbeat, runtime.clock()), service)
            return Owned(service)

        return own

    names = [shard_name(shard) for shard in range(shards)]
    node = ClusterNode(
        settings.cluster,
        runtime,
        {
            "apologies": own_apologies,
            "async": own_async,
            **{name: own_shard(int(name[6:])) for name in names},
        },
        ttl=settings.cluster_lease,
        shards=names,
        on_everyone=lambda data: apply_everyone(directory, data),
        unheard=lambda to, data: unheard(data),
        unanswered=lambda to, data: unanswered(data),
        awaited=awaited,
        answer_keys=answer_keys,
    )
    node.node_routes.update(
        node_game_routes(
            LocalGames(
                runtime,
                running_apologies,
                fish if isinstance(fish, FishService) else None,
                tsuro if isinstance(tsuro, TsuroService) else None,
            )
        )
    )
    from parlour.cluster.redisbus import RedisError

    try:
        await node.start()
    except (RedisError, OSError) as error:
        # Redis went away while this node joined (it restarts, say): the node ends with the
        # reason on one line, for whatever supervises it to start it again.
        raise CannotStart(f"cannot join the cluster: Redis does not answer: {error}") from None
    limits = async_limits(settings)
    router = Router(
        directory,
        shards,
        lambda name: node.services[name].owner != 0,
        limits.requests_per_second,
        limits.max_frame_bytes,
    )
    # A WhatsNewPussycatRequest without a game goes to the hub and is answered by a shard's
    # owner: this node waits for its answer (docs/cluster.md, "Every request is answered").
    router.waits = lambda conn, key, data: node.notes.await_whole(conn, key, "async", data)
    node.services["async"].router = router
    # /metrics: this node's shards and their games.
    exporter.collector.shards = lambda: {
        shard: inner
        for shard, name in enumerate(names)
        if isinstance(inner := node.services[name].inner, ShardService)
    }
    # The hub's list of who is signed in, for this node's directory (the hub answers all).
    node.notes.send("async", encode_note(WantOnline()))
    return node


def _game_reader(
    service: ShardService, store: Store, runtime: Runtime, acting: Callable[[], bool]
) -> Callable[[int], None]:
    """ShardService.fetch: one game read on the store's thread, then handed to the shard as an
    input of its own, while this node still runs the shard (``acting``)."""
    reads: set[asyncio.Task[None]] = set()

    async def read(game_id: int) -> None:
        try:
            row = await runtime.in_store_thread(lambda: store.load_async_game(game_id))
        except StoreFailure as failure:
            log.warning("%s: cannot read game %d: %s", service.name, game_id, failure)
            service.unread(game_id)
            return
        if acting():
            runtime.execute(service.found(game_id, row, runtime.clock()), service)

    def fetch(game_id: int) -> None:
        task = asyncio.get_running_loop().create_task(read(game_id))
        reads.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(reads.discard)

    return fetch


def _reported(
    exporter: Exporter, protocol: str, service: object, placeholders: dict[str, object]
) -> Callable[[], Awaitable[None]]:
    """/metrics reports the state of ``service`` while this node owns it (and the empty
    placeholder built at start otherwise); the returned callable puts the placeholder back."""
    watched = exporter.collector.watched

    def swap(current: object) -> None:
        for index, entry in enumerate(watched):
            if entry.protocol == protocol:
                watched[index] = Watched(protocol, current)

    swap(service)

    async def unreport() -> None:
        swap(placeholders[protocol])

    return unreport
