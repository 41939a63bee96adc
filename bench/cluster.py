"""Cluster benchmark (issues 17 and 24): a closed loop that compares one node with two, and an
open loop that offers the same commit rate to 1, 2 and 3 nodes and says what each commit costs.

Both use the turn load of bench/async.py: two clients per game, each committing a 1 KiB
``next_state`` with ``broadcast: true`` on its prompt.

**closed**: each client commits as soon as it is prompted. Three servers on one fresh
store each (SQLite, the default writer process) and one Redis (Debian's ``redis-server``, started
here on a free loopback port, without persistence):

1. ``one``: one node without ``--cluster``: the baseline;
2. ``one+cluster``: one node with ``--cluster``: it owns every service, so every input takes the
   owner's path (the lease check, the proxy) and no effect needs Redis: the overhead of being in
   a cluster at all. Target: >= 0.7x the baseline's commits/s;
3. ``two``: two nodes with ``--cluster``; in every game seat 1 is on the first node and seat 2 on
   the second, so half the commits come in through a gateway and half of every game's messages
   go out through Redis: the cost of crossing nodes.

Printed: commits/s and p50/p99 commit latency of each, and the ratios to the baseline.

**open**: the cluster as ``make cluster`` runs it (every node with ``--cluster`` on
one PostgreSQL and one Redis, both started here on loopback: PostgreSQL from Debian's binaries
with fsync on, tests/pg.py), offered a fixed rate of commits (bench/_openloop.py: every game
commits on a schedule, latency counted from the time a commit was due). In game g, seat 1
connects to node g mod N and seat 2 to node g+1 mod N, as players of one game come in through
different nodes; nothing assumes which node owns a game.

1. Calibration, on one node: the rate is adjusted until the node's process (its store writer
   process apart) uses about ``--target-cpu`` of a core (default 60%), measured from /proc;
2. that rate is offered to 1, 2 and 3 nodes (``--sizes``), each on a fresh database and a fresh
   Redis; after a warm-up, a window is measured.

Reported for each size: commits/s, commit p50/p99 (and the commits still unanswered when the load
stopped, counted with what they had waited); CPU per commit of every server process (nodes,
their writer processes, redis-server, the postmaster and every PostgreSQL backend and helper;
/proc before and after the window), in total and by kind; each node's share of the commits (the
turns each node committed, ``parlour_moves_total`` from its ``/metrics``); Redis commands,
PUBLISH calls and bytes per commit (``INFO``); PostgreSQL transactions per commit
(``pg_stat_database.xact_commit`` of the bench's database; PostgreSQL publishes a backend's
counts at most once a second, so over a short window this one is approximate) and the nodes'
own store transactions per commit. Ratios are against the 1-node run of the same invocation.
Targets: CPU per commit at 3 nodes <= 1.3x one node's; the busiest node commits <= 40% of the
commits at 3 nodes; commit p99 < 50 ms at every size. It ends with docs/cluster.md's capacity
model (Capacity) computed from the largest cluster's figures.

In both loops a commit answered TRY_AGAIN (its game's shard between owners) is sent again 20 ms
later, its latency still running; one refused as stale (NOT_YOUR_TURN or INDEX_CONFLICT: a
restored game prompting again for a turn already stored, or a commit sent again after its turn
was played) is counted and the game goes on. Both counts are printed.

    python bench/cluster.py [--only closed,open] [--quick]
                            [--clients 200] [--seconds 10] [--warmup 3] [--rounds 2]
                            [--open-clients 400] [--open-seconds 10] [--target-cpu 0.6]
                            [--rate R] [--start-rate R] [--sizes 1,2,3] [--logs DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.util
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._cpu import cpu_seconds, descendants, parents
from bench._openloop import Game, Measured, OpenLoad, Schedule, measure
from bench._wsclient import WireClient, open_client
from tests.pg import PostgresServer
from tests.pg import missing_reason as postgres_missing
from tests.processes import clean_env, free_port, running, serve_command
from tests.redisserver import redis_binary, redis_server

from parlour.accounts.passwords import hash_password
from parlour.accounts.tokens import SessionTokens


def _load_async_bench() -> Any:
    """bench/async.py as a module (its name is a keyword: imported by path)."""
    spec = importlib.util.spec_from_file_location("bench_async", Path(__file__).with_name("async.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_async"] = module
    spec.loader.exec_module(module)
    return module


load = _load_async_bench()
PARTS = ("closed", "open")
TARGET = 0.7
LEASE = "3"
#: The open loop's targets.
CPU_RATIO_TARGET = 1.3
BUSIEST_TARGET = 0.40
P99_TARGET_MS = 50.0
#: Calibration: the node's CPU within this of the target ends it.
CALIBRATION_TOLERANCE = 0.06
#: The share of a core a node may use in the capacity model.
HEADROOM = 0.8
#: Server processes by kind, in the order they are printed.
KINDS = ("node", "writer", "redis", "postgres")

# -- Nodes and their clients, for both loops ----------------------------------------------------------


def node_command(port: int, store: str, redis: str | None) -> list[str]:
    extra = ["--async-requests-per-second", f"{load.BENCH_RATE_LIMIT:g}", "--log-level", "WARNING"]
    if redis is not None:
        extra += ["--cluster", redis, "--cluster-lease", LEASE]
    return serve_command(port, *extra, store=store)


#: The port a game's seat (0 or 1) connects to, from the game's index and the nodes' ports.
Placement = Callable[[int, int, Sequence[int]], int]


def first_and_last(game: int, seat: int, ports: Sequence[int]) -> int:
    """The closed loop's placement: seat 1 on the first node, seat 2 on the last."""
    return ports[0] if seat == 0 else ports[-1]


def neighbours(game: int, seat: int, ports: Sequence[int]) -> int:
    """The open loop's: game g's seat 1 on node g, seat 2 on node g + 1 (mod the nodes)."""
    return ports[(game + seat) % len(ports)]


def split_setup(
    ports: list[int], tokens: SessionTokens, place: Placement = first_and_last
) -> Callable[[], Any]:
    """bench/async.py's set-up with each seat on the node ``place`` picks: seat 1 creates the game
    on its node, seat 2 joins it from its own."""

    def make() -> Any:
        gate = asyncio.Semaphore(load.SETUP_CONCURRENCY)
        loop = asyncio.get_running_loop()
        games: dict[int, asyncio.Future[int]] = {}

        async def setup(index: int) -> tuple[WireClient, int]:
            account_id = index + 1
            name = load.name_of(account_id)
            token, _ = tokens.issue(account_id, name, time.time())
            pair, seat = divmod(index, 2)
            port = place(pair, seat, ports)
            async with gate:
                ws = await open_client(load.HOST, port, "/async")
                ws.send(load.ENCODE.encode({"type": "AsyncAuthRequest", "name": name, "sessionToken": token}))
                await load.expect(ws, b"AsyncConnectedRequest")
            game = games.setdefault(pair, loop.create_future())
            if seat == 0:
                configuration = {"game_type": "bench", "max_players": 2}
                ws.send(
                    load.ENCODE.encode({"type": "LobbyCreateGameRequest", "configuration": configuration})
                )
                created = await load.expect(ws, b"LobbyGameCreatedRequest")
                game_id: int = load.DECODE.decode(created)["game_id"]
                game.set_result(game_id)
                return ws, game_id
            game_id = await game
            ws.send(load.ENCODE.encode({"type": "LobbyJoinGameRequest", "game_id": game_id}))
            await load.expect(ws, b"GameCreatedRequest")
            return ws, game_id

        return setup

    return make


@contextmanager
def nodes(
    count: int, redis: str | None, store: str, logs: Path | None = None
) -> Iterator[tuple[list[int], list[int]]]:
    """``count`` nodes on ``store``, started one after the other: their ports and process ids.
    Their output goes to ``logs``/node-PORT.log when ``logs`` is given, else nowhere."""
    with ExitStack() as stack:
        ports: list[int] = []
        pids: list[int] = []
        for _ in range(count):
            port = free_port()
            output: Any = subprocess.DEVNULL
            if logs is not None:
                logs.mkdir(parents=True, exist_ok=True)
                output = stack.enter_context((logs / f"node-{port}.log").open("ab"))
            command = node_command(port, store, redis)
            process = stack.enter_context(running(command, port, output, env=clean_env()))
            ports.append(port)
            pids.append(process.pid)
        yield ports, pids


#: What a node owns: its leases (``cluster_owns``) and its shards (``cluster_shards``).
Owned = tuple[list[str], list[int]]


def settle(ports: list[int], seconds: float = 30.0, steady: int = 6) -> list[Owned]:
    """Wait until what the nodes own (``cluster_owns`` and, where games are placed by shard,
    ``cluster_shards`` of each /healthz) covers ``/async`` and has not changed over ``steady``
    polls half a second apart: placement has settled (a node that joins takes its share of the
    shards from the others). What each node owns."""
    deadline = time.monotonic() + seconds
    last: list[Owned] = []
    same = 0
    while True:
        owns: list[Owned] = []
        for port in ports:
            health = load.healthz(port)
            owns.append((sorted(health.get("cluster_owns", [])), sorted(health.get("cluster_shards", []))))
        owned = {name for names, _ in owns for name in names}
        same = same + 1 if owns == last and any(name.startswith("async") for name in owned) else 0
        last = owns
        if same >= steady or time.monotonic() > deadline:
            return owns
        time.sleep(0.5)


def owned_words(owned: Owned) -> str:
    names, shards = owned
    return "+".join(names) + (f"+{len(shards)} shards" if shards else "") or "nothing"


# -- The closed loop -------------------------------------------------------------------------


def closed_measure(
    name: str, count: int, redis: str | None, args: argparse.Namespace, password_hash: str
) -> Any:
    with (
        load.prepared_store(args.clients, password_hash) as (store, tokens),
        nodes(count, redis, str(store)) as (ports, pids),
    ):
        result = load.run_loop(
            load.drive(split_setup(ports, tokens), args.clients, args.warmup, args.seconds, pids[0])
        )
    result.show(name, "commits")
    return result


def closed(args: argparse.Namespace, binary: str, password_hash: str) -> None:
    print(
        f"closed loop: {args.clients} clients in {args.clients // 2} games, 1 KiB broadcast commits, "
        f"{args.warmup:g}s warm-up then {args.seconds:g}s measured; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    )
    results: dict[str, list[Any]] = {"one": [], "one+clus": [], "two": []}
    # Interleaved rounds: a shared machine's load drifts; each set-up keeps its best round.
    with tempfile.TemporaryDirectory(prefix="parlour-bench-cluster-") as tmp:
        for round_ in range(args.rounds):
            results["one"].append(closed_measure("one", 1, None, args, password_hash))
            with redis_server(Path(tmp) / f"redis{round_}a", binary) as url:
                results["one+clus"].append(closed_measure("one+clus", 1, url, args, password_hash))
            with redis_server(Path(tmp) / f"redis{round_}b", binary) as url:
                results["two"].append(closed_measure("two", 2, url, args, password_hash))
    alone, clustered, two = (max(runs, key=lambda run: run.rate) for runs in results.values())
    base = alone.rate or float("nan")
    cost = clustered.rate / base
    print(
        f"one node with --cluster / without = {cost:.2f} (target >= {TARGET}: {'met' if cost >= TARGET else 'MISSED'}); "
        f"p99 {clustered.percentile(0.99):.2f} ms vs {alone.percentile(0.99):.2f} ms"
    )
    print(
        f"two nodes / one node = {two.rate / base:.2f} (half of every game through a gateway and Redis); "
        f"p99 {two.percentile(0.99):.2f} ms vs {alone.percentile(0.99):.2f} ms"
    )


# -- The open loop: what the servers read ------------------------------------------------

METRIC = re.compile(rb"^(parlour_moves_total|parlour_store_transactions_total) ([0-9.e+]+)$", re.MULTILINE)


def scrape(port: int) -> dict[str, float]:
    """The counters of a node's /metrics the bench reads."""
    connection = http.client.HTTPConnection(load.HOST, port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        body = connection.getresponse().read()
    finally:
        connection.close()
    return {name.decode(): float(value) for name, value in METRIC.findall(body)}


@dataclass
class Servers:
    """Every server process of one cluster, and how to read its counters."""

    ports: list[int]
    node_pids: list[int]
    redis: Any
    redis_pid: int
    postmaster: int
    pg: Any
    database: str


@dataclass
class Snapshot:
    """Counters read at one moment."""

    #: CPU seconds so far, by process id, with the kind of each process.
    cpu: dict[int, tuple[str, float]]
    #: By node: its process's CPU seconds (its writer apart), its turns committed
    #: (parlour_moves_total) and its store transactions.
    node_cpu: list[float]
    moves: list[float]
    transactions: list[float]
    #: Redis: commands processed, PUBLISH calls, bytes in + out.
    redis_commands: float
    redis_publish: float
    redis_bytes: float
    #: PostgreSQL: transactions committed in the bench's database.
    pg_xact: float
    #: The bench's own CPU seconds (its clients).
    clients: float


def snapshot(servers: Servers) -> Snapshot:
    tree = parents()
    kinds: dict[int, str] = {}
    for pid in servers.node_pids:
        kinds[pid] = "node"
        for child in descendants(pid, tree):
            kinds[child] = "writer"
    kinds[servers.redis_pid] = "redis"
    for pid in [servers.postmaster, *descendants(servers.postmaster, tree)]:
        kinds[pid] = "postgres"
    cpu = {pid: (kind, cpu_seconds([pid])) for pid, kind in kinds.items()}
    metrics = [scrape(port) for port in servers.ports]
    stats = servers.redis.info("stats")
    commands = servers.redis.info("commandstats")
    xact = servers.pg.execute(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (servers.database,)
    ).fetchone()
    return Snapshot(
        cpu=cpu,
        node_cpu=[cpu[pid][1] for pid in servers.node_pids],
        moves=[found.get("parlour_moves_total", 0.0) for found in metrics],
        transactions=[found.get("parlour_store_transactions_total", 0.0) for found in metrics],
        redis_commands=float(stats["total_commands_processed"]),
        redis_publish=float(commands.get("cmdstat_publish", {}).get("calls", 0)),
        redis_bytes=float(stats["total_net_input_bytes"]) + float(stats["total_net_output_bytes"]),
        pg_xact=float(xact[0]) if xact else 0.0,
        clients=sum(os.times()[:2]),
    )


@dataclass
class OpenResult:
    nodes: int
    measured: Measured
    #: Server CPU seconds in the window, by kind of process; the bench's own.
    cpu: dict[str, float]
    clients_cpu: float
    #: Each node's process's CPU seconds in the window.
    node_cpu: list[float]
    #: Turns each node committed in the window.
    moves: list[float]
    transactions: float
    redis_commands: float
    redis_publish: float
    redis_bytes: float
    pg_xact: float
    owns: list[Owned] = field(default_factory=list)

    @classmethod
    def of(cls, count: int, measured: Measured, owns: list[Owned]) -> OpenResult:
        before: Snapshot = measured.before
        after: Snapshot = measured.after
        cpu = dict.fromkeys(KINDS, 0.0)
        for pid, (kind, seconds) in after.cpu.items():
            # A process started in the window counts from zero; one gone by its end is not seen.
            cpu[kind] += seconds - before.cpu.get(pid, (kind, 0.0))[1]
        return cls(
            nodes=count,
            measured=measured,
            cpu=cpu,
            clients_cpu=after.clients - before.clients,
            node_cpu=[b - a for a, b in zip(before.node_cpu, after.node_cpu, strict=True)],
            moves=[b - a for a, b in zip(before.moves, after.moves, strict=True)],
            transactions=sum(after.transactions) - sum(before.transactions),
            redis_commands=after.redis_commands - before.redis_commands,
            redis_publish=after.redis_publish - before.redis_publish,
            redis_bytes=after.redis_bytes - before.redis_bytes,
            pg_xact=after.pg_xact - before.pg_xact,
            owns=owns,
        )

    @property
    def commits(self) -> float:
        return sum(self.moves)

    def per_commit(self, value: float) -> float:
        return value / self.commits if self.commits else float("nan")

    @property
    def cpu_us(self) -> float:
        """Server CPU per commit, all processes, in microseconds."""
        return self.per_commit(sum(self.cpu.values())) * 1e6

    @property
    def shares(self) -> list[float]:
        return [self.per_commit(moves) for moves in self.moves]

    @property
    def busiest(self) -> float:
        return max(self.shares, default=float("nan"))

    @property
    def p99(self) -> float:
        return self.measured.percentile_ms(0.99)


# -- The open loop: the load ----------------------------------------------------------------------------


def open_load(seated: list[tuple[WireClient, int]], rate: float) -> OpenLoad:
    """The games of ``seated`` (a game's two seats follow each other) on a schedule of ``rate``."""
    games = [
        Game(index, seated[2 * index][1], (seated[2 * index][0], seated[2 * index + 1][0]))
        for index in range(len(seated) // 2)
    ]
    heads = {
        (game.game_id, seat): load.COMMIT % (game.game_id, seat, load.STATE)
        for game in games
        for seat in (1, 2)
    }
    return OpenLoad(
        games,
        Schedule(len(games), rate, time.perf_counter()),
        load.kind_of,
        load.turn_of,
        lambda game_id, other, turn: heads[game_id, other] + b"%d}" % turn,
        load.FAILURES,
    )


@dataclass
class Step:
    """One calibration step: the rate offered, what was carried, the node's share of a core."""

    rate: float
    carried: float
    p99_ms: float
    used: float

    @property
    def carried_well(self) -> bool:
        """Every commit answered at the pace offered, within the latency target: a rate past
        this is limited by something else than the node's CPU (the machine, the store)."""
        return self.carried >= 0.95 * self.rate and self.p99_ms < P99_TARGET_MS


async def calibrate(
    running_load: OpenLoad, servers: Servers, args: argparse.Namespace
) -> tuple[float, list[str]]:
    """Offer rates to the one node until its process uses about ``args.target_cpu`` of a core.

    CPU used grows about in proportion to the rate, so each step scales the rate by target /
    used; a rate the cluster does not carry well (Step.carried_well) bounds the search from
    above, and the next step goes halfway back. The rate found (the step carried well whose CPU
    came closest to the target), and a line per step."""
    node = servers.node_pids[0]

    async def node_cpu() -> tuple[float, float]:
        return cpu_seconds([node]), time.perf_counter()

    rate = args.start_rate
    steps: list[Step] = []
    lines: list[str] = []
    high: float | None = None
    for number in range(args.calibration_steps):
        running_load.schedule.retime(rate, time.perf_counter())
        await asyncio.sleep(args.calibrate_settle)
        measured = await measure(running_load, args.calibrate_seconds, args.grace / 2, node_cpu)
        (cpu_before, at_before), (cpu_after, at_after) = measured.before, measured.after
        step = Step(
            rate,
            measured.rate,
            measured.percentile_ms(0.99),
            (cpu_after - cpu_before) / (at_after - at_before),
        )
        steps.append(step)
        lines.append(
            f"  calibration step {number + 1}: offered {rate:,.0f} commits/s, carried {step.carried:,.0f}/s, "
            f"p99 {step.p99_ms:.1f} ms, the node's process used {step.used:.0%} of a core"
            + ("" if step.carried_well else " (not carried well)")
        )
        good = [done.rate for done in steps if done.carried_well]
        if not step.carried_well:
            high = rate if high is None else min(high, rate)
            rate = (max(good) + rate) / 2 if good else rate / 2
        elif abs(step.used - args.target_cpu) <= CALIBRATION_TOLERANCE:
            break
        else:
            # Bounded steps: a noisy reading must not throw the rate far off.
            wanted = max(rate / 3, min(rate * 3, rate * args.target_cpu / max(step.used, 0.01)))
            rate = wanted if high is None else min(wanted, (rate + high) / 2)
        rate = max(10.0, round(rate / 10) * 10)
    carried = [step for step in steps if step.carried_well]
    if not carried:
        # The latency target was missed at every rate (a crowded machine): a tiny rate would
        # measure fixed costs, not commits; the highest rate whose commits kept pace is offered.
        kept = [step for step in steps if step.carried >= 0.95 * step.rate]
        rate = (
            max(step.rate for step in kept)
            if kept
            else max(10.0, round(min(s.rate for s in steps) / 20) * 10)
        )
        lines.append(
            f"  no rate tried was carried within the latency target: offering {rate:,.0f} commits/s, "
            "the highest whose commits kept pace"
        )
        return rate, lines
    best = min(carried, key=lambda step: abs(step.used - args.target_cpu))
    if abs(best.used - args.target_cpu) > CALIBRATION_TOLERANCE:
        lines.append(
            f"  the node's {args.target_cpu:.0%} of a core was not reached with the commits carried well "
            f"(this machine, or the store, limits first): offering {best.rate:,.0f} commits/s, where the node "
            f"used {best.used:.0%}"
        )
    return best.rate, lines


async def open_run(
    count: int, servers: Servers, tokens: SessionTokens, args: argparse.Namespace, rate: float | None
) -> tuple[OpenResult, float, list[str]]:
    """Seat the clients, find the rate if ``rate`` is None (calibration), warm up, measure."""
    setup = split_setup(servers.ports, tokens, neighbours)()
    seated = await asyncio.wait_for(
        asyncio.gather(*(setup(i) for i in range(args.open_clients))), load.SETUP_SECONDS
    )
    running_load = open_load(list(seated), rate or args.start_rate)
    running_load.start()
    lines: list[str] = []
    try:
        if rate is None:
            rate, lines = await calibrate(running_load, servers, args)
        running_load.schedule.retime(rate, time.perf_counter())
        await asyncio.sleep(args.open_warmup)
        measured = await measure(
            running_load, args.open_seconds, args.grace, lambda: asyncio.to_thread(snapshot, servers)
        )
    finally:
        await running_load.stop()
        await asyncio.wait_for(
            asyncio.gather(*(ws.close(2.0) for ws, _ in seated), return_exceptions=True), timeout=15
        )
    return OpenResult.of(count, measured, []), rate, lines


def postmaster_pid(pg: PostgresServer) -> int:
    return int((pg.data / "postmaster.pid").read_text().split()[0])


def open_size(
    count: int, pg: PostgresServer, folder: Path, binary: str, args: argparse.Namespace, rate: float | None
) -> tuple[OpenResult, float, list[str]]:
    """One size of cluster on a fresh database (a schema of its own) and a fresh Redis."""
    import psycopg
    import redis

    store = pg.database()
    (folder / f"n{count}").mkdir()
    tokens = load.import_accounts(store, args.open_clients, args.password_hash, folder / f"n{count}")
    with (
        redis_server(folder / f"redis{count}", binary) as redis_url,
        nodes(count, redis_url, store, args.logs) as (ports, pids),
        redis.Redis.from_url(redis_url) as client,
        psycopg.connect(pg.url("parlour"), autocommit=True) as admin,
    ):
        owns = settle(ports)
        servers = Servers(
            ports=ports,
            node_pids=pids,
            redis=client,
            redis_pid=int(client.info("server")["process_id"]),
            postmaster=postmaster_pid(pg),
            pg=admin,
            database="parlour",
        )
        result, rate, lines = load.run_loop(open_run(count, servers, tokens, args, rate))
    result.owns = owns
    return result, rate, lines


def open_table(results: list[OpenResult], rate: float) -> list[str]:
    """The open loop's figures as a Markdown table, ratios against the first (1-node) run."""
    base = results[0]
    rows = [
        "| nodes | commits/s (offered) | p50 / p99 ms | unanswered | server CPU per commit | "
        "node / writer / redis / postgres | CPU ratio | commits by node | Redis cmds, PUBLISH, KiB per commit | "
        "PostgreSQL xact per commit (nodes' own) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        measured = result.measured
        kinds = " / ".join(f"{result.per_commit(result.cpu[kind]) * 1e6:.0f}" for kind in KINDS)
        shares = " / ".join(f"{share:.0%}" for share in result.shares)
        rows.append(
            f"| {result.nodes} | {measured.rate:,.0f} ({rate:,.0f}) | {measured.percentile_ms(0.5):.1f} / "
            f"{result.p99:.1f} | {measured.late} | {result.cpu_us:.0f} µs | {kinds} µs | "
            f"{result.cpu_us / base.cpu_us:.2f}x | {shares} | {result.per_commit(result.redis_commands):.2f}, "
            f"{result.per_commit(result.redis_publish):.2f}, {result.per_commit(result.redis_bytes) / 1024:.1f} | "
            f"{result.per_commit(result.pg_xact):.3f} ({result.per_commit(result.transactions):.3f}) |"
        )
    return rows


def open_verdicts(results: list[OpenResult]) -> list[str]:
    def verdict(met: bool) -> str:
        return "met" if met else "MISSED"

    base = results[0]
    lines = []
    for result in results:
        if result.nodes == 3:
            ratio = result.cpu_us / base.cpu_us
            lines.append(
                f"CPU per commit at 3 nodes / 1 node = {ratio:.2f} (target <= {CPU_RATIO_TARGET}: "
                f"{verdict(ratio <= CPU_RATIO_TARGET)})"
            )
            lines.append(
                f"busiest node at 3 nodes commits {result.busiest:.0%} of the commits (target <= "
                f"{BUSIEST_TARGET:.0%}: {verdict(result.busiest <= BUSIEST_TARGET)})"
            )
    worst = max(result.p99 for result in results)
    lines.append(
        f"commit p99 at every size <= {worst:.1f} ms (target < {P99_TARGET_MS:g} ms: "
        f"{verdict(worst < P99_TARGET_MS)})"
    )
    return lines


@dataclass
class Capacity:
    """docs/cluster.md's capacity model, from one run's figures (``result``, the largest cluster
    measured): what ``games`` games in play, each committing once every ``every`` seconds, need.

    A node carries C = HEADROOM / (node-process CPU per commit) commits/s (its writer process,
    on another core, needs HEADROOM / (writer CPU per commit)); with S shards over N nodes the
    busiest node owns ceil(S / N) of them, so N is the least count whose busiest node stays under
    C, plus one spare so that a node lost leaves the others under it too. Redis and PostgreSQL
    carry the commit rate times what each commit cost them in the run."""

    result: OpenResult
    games: int = 10_000
    every: float = 5.0

    @property
    def rate(self) -> float:
        return self.games / self.every

    @property
    def node_cpu(self) -> float:
        """A node's process CPU seconds per commit: with shards, the nodes' total over every
        commit (each node owns games and relays for its players' games elsewhere); without, the
        owner's own (it processes every commit)."""
        result = self.result
        return result.per_commit(sum(result.node_cpu) if self.shards else max(result.node_cpu))

    @property
    def per_node(self) -> float:
        """Commits/s a node carries at HEADROOM of a core (its process or its writer's)."""
        return HEADROOM / max(self.node_cpu, self.result.per_commit(self.result.cpu["writer"]))

    @property
    def shards(self) -> int:
        return sum(len(shards) for _, shards in self.result.owns)

    def nodes(self) -> int | None:
        """Nodes needed (with the spare); None when one node carries every game whatever the
        count (no shards) and that is too much for it."""
        if not self.shards:
            return 1 + 1 if self.rate <= self.per_node else None
        for count in range(1, self.shards + 1):
            if self.rate * math.ceil(self.shards / count) / self.shards <= self.per_node:
                return count + 1
        return None

    def lines(self) -> list[str]:
        result = self.result
        per = result.per_commit
        node_us, writer_us = self.node_cpu * 1e6, per(result.cpu["writer"]) * 1e6
        needed = self.nodes()
        placement = (
            f"{self.shards} shards over the nodes"
            if self.shards
            else "every game on one owner (no shards): more nodes add no capacity"
        )
        return [
            f"capacity model (docs/cluster.md), from the {result.nodes}-node run: "
            f"{'node' if self.shards else 'the owner'} process "
            f"{node_us:.0f} µs and writer process {writer_us:.0f} µs of CPU per commit: a node carries "
            f"{self.per_node:,.0f} commits/s at {HEADROOM:.0%} of a core; Redis {per(result.redis_commands):.2f} "
            f"commands ({per(result.redis_publish):.2f} PUBLISH, {per(result.redis_bytes) / 1024:.1f} KiB) and "
            f"{per(result.cpu['redis']) * 1e6:.0f} µs, PostgreSQL {per(result.pg_xact):.3f} transactions and "
            f"{per(result.cpu['postgres']) * 1e6:.0f} µs per commit",
            f"  {self.games:,} games in play, a commit each every {self.every:g} s: {self.rate:,.0f} commits/s; "
            f"{placement}: "
            + (f"{needed} nodes (one of them spare)" if needed else "no count of nodes carries it")
            + f"; Redis {self.rate * per(result.redis_commands):,.0f} commands/s "
            f"({self.rate * per(result.redis_publish):,.0f} PUBLISH/s, "
            f"{self.rate * per(result.redis_bytes) / 2**20:.1f} MiB/s, "
            f"{self.rate * per(result.cpu['redis']):.0%} of a core); PostgreSQL "
            f"{self.rate * per(result.pg_xact):,.0f} transactions/s at the run's batching "
            f"(at most {self.rate:,.0f}: one a commit), {self.rate * per(result.cpu['postgres']):.0%} of a core",
        ]


def open_loop(args: argparse.Namespace, binary: str) -> None:
    reason = postgres_missing()
    if reason is not None:
        print(f"open loop skipped: {reason}")
        return
    games = args.open_clients // 2
    print(
        f"open loop: {args.open_clients} clients in {games} games on PostgreSQL and Redis, 1 KiB broadcast "
        f"commits at a fixed offered rate, seats of a game on neighbouring nodes; "
        f"{args.open_warmup:g}s warm-up then {args.open_seconds:g}s measured per size; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    )
    results: list[OpenResult] = []
    rate: float | None = args.rate
    pg = PostgresServer(fsync=True)
    try:
        with tempfile.TemporaryDirectory(prefix="parlour-bench-open-") as tmp:
            for count in args.sizes:
                result, rate, lines = open_size(count, pg, Path(tmp), binary, args, rate)
                for line in lines:
                    print(line)
                results.append(result)
                measured = result.measured
                shares = ", ".join(f"{share:.0%}" for share in result.shares)
                by_node = ", ".join(f"{seconds / measured.elapsed:.0%}" for seconds in result.node_cpu)
                cpu = ", ".join(
                    f"{kind} {seconds / measured.elapsed:.0%}" for kind, seconds in result.cpu.items()
                )
                print(
                    f"{count} node{'s' if count > 1 else ' '}: offered {rate:,.0f} commits/s, acknowledged "
                    f"{measured.rate:,.0f}/s, p50 {measured.percentile_ms(0.5):.1f} ms, p99 {result.p99:.1f} ms, "
                    f"{measured.late} unanswered, errors {len(measured.errors)}, TRY_AGAIN retries "
                    f"{measured.retries}, stale refusals {measured.refused}; commits by node {shares}, "
                    f"CPU by node {by_node}"
                )
                print(
                    f"         CPU (% of a core): {cpu}, bench clients {result.clients_cpu / measured.elapsed:.0%}; "
                    f"nodes own {', '.join(owned_words(owned) for owned in result.owns)}"
                )
                for error in measured.errors[:3]:
                    print(f"  error: {error}")
    finally:
        pg.stop()
    assert rate is not None
    for row in open_table(results, rate):
        print(row)
    for line in open_verdicts(results):
        print(line)
    for line in Capacity(results[-1]).lines():
        print(line)


# -- Command line ------------------------------------------------------------------------------------


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help=f"parts to run, from {', '.join(PARTS)}")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short slice: few clients, short windows, one round (the defaults below are for a full run)",
    )
    closed_group = parser.add_argument_group("closed loop")
    closed_group.add_argument("--clients", type=int, default=200, help="clients, two per game (default: 200)")
    closed_group.add_argument("--seconds", type=float, default=10.0, help="measured window (default: 10)")
    closed_group.add_argument("--warmup", type=float, default=3.0, help="play before measuring (default: 3)")
    closed_group.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="measure each set-up this many times, interleaved; the best of each counts (default: 2)",
    )
    open_group = parser.add_argument_group("open loop")
    open_group.add_argument(
        "--open-clients", type=int, default=400, help="clients, two per game (default: 400)"
    )
    open_group.add_argument(
        "--open-seconds", type=float, default=10.0, help="measured window per size (default: 10)"
    )
    open_group.add_argument(
        "--open-warmup", type=float, default=3.0, help="play at the rate before measuring (default: 3)"
    )
    open_group.add_argument(
        "--target-cpu",
        type=float,
        default=0.6,
        help="calibration: the share of a core the one node's process should use (default: 0.6)",
    )
    open_group.add_argument(
        "--rate", type=float, default=None, help="offer this many commits/s instead of calibrating"
    )
    open_group.add_argument(
        "--start-rate", type=float, default=1500.0, help="calibration's first rate (default: 1500)"
    )
    open_group.add_argument(
        "--logs", type=Path, default=None, help="keep each node's output in this folder (default: none)"
    )
    open_group.add_argument(
        "--sizes", default="1,2,3", help="cluster sizes, the first the baseline (default: 1,2,3)"
    )
    args = parser.parse_args(argv)
    # Calibration: at most this many steps, each of a settling time and a measured window;
    # after every window, the time its last commits have to be answered.
    args.calibration_steps, args.calibrate_settle, args.calibrate_seconds, args.grace = 5, 1.0, 3.0, 2.0
    if args.quick:
        args.clients, args.seconds, args.warmup, args.rounds = 40, 2.0, 1.0, 1
        args.open_clients, args.open_seconds, args.open_warmup = 40, 2.0, 1.0
        args.start_rate = min(args.start_rate, 200.0)
        args.calibration_steps, args.calibrate_settle, args.calibrate_seconds, args.grace = 2, 0.5, 1.5, 1.0
    chosen = [part.strip() for part in args.only.split(",") if part.strip()]
    if not chosen or set(chosen) - set(PARTS):
        parser.error(f"--only takes names from {', '.join(PARTS)}")
    args.parts = chosen
    args.sizes = [int(size) for size in args.sizes.split(",")]
    if not args.sizes or min(args.sizes) < 1:
        parser.error("--sizes takes node counts of 1 or more")
    for clients in (args.clients, args.open_clients):
        if clients < 2 or clients % 2:
            parser.error("the clients must be even and at least 2 (two seats per game)")
    if args.rate is not None and args.rate <= 0:
        parser.error("--rate must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(argv)
    binary = redis_binary()
    if binary is None:
        print(
            "cluster bench skipped: redis-server is not installed and cannot be (apt-get install redis-server)"
        )
        return 0
    args.password_hash = hash_password(load.PASSWORD)
    if "closed" in args.parts:
        closed(args, binary, args.password_hash)
    if "open" in args.parts:
        open_loop(args, binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
