"""/async protocol benchmark (issues 13 and 14): turn throughput and latency, then lobby chat
fan-out, each against a bare websockets baseline in the same run, then the memory of idle
authenticated connections.

1. Throughput and latency. N clients (default 200), each signed in with its own account, play
   N/2 two-seat ``rules: "client"`` games (LobbyCreateGameRequest ``{"game_type": "bench",
   "max_players": 2}`` and a join: the game starts at once). On its ActionRequiredRequest a client
   commits at once: CommitActionRequest with a 1 KiB ``next_state``, ``broadcast: true``,
   ``next_players`` the other seat and the prompt's ``turn_index``. Parlour runs with its store on
   (a fresh SQLite file in a temporary directory, default settings, ``--log-level WARNING``).
   Measured over a fixed window (default 15 s, after a warm-up of 3 s): commits/s, and the p50/p99
   latency from sending CommitActionRequest to receiving its ActionCommitedRequest. One setting is
   changed: ``async_requests_per_second`` (default 50 per connection) is raised to 1000
   (``--rate-limit``; 0 keeps the default), because each client commits (commits/s) / N times a
   second: past 50 x N commits/s the default limit closes the connections (RATE_LIMITED, 1008) and
   the run measures the limiter. The per-client rate is printed beside the default.
   The baseline is a bare ``websockets`` server with no logic (bench/_echo.py, its own subprocess,
   uvloop as Parlour): for each commit frame, a small ack to the sender, then the frame and a prompt
   made of it to the paired client: the same frames and bytes as Parlour's ack, broadcast and next
   prompt. The same client code drives both. Targets: Parlour's commits/s >= 0.40x the baseline's
   round trips/s, Parlour's p99 < 20 ms.
2. Lobby chat fan-out. P players (default 2,000) sign in, enter the lobby
   (EnterLobbyRequest), each monitors the presence of the next 20 players (RegisterPresenceRequest)
   and subscribes (SubscribePresenceServiceRequest); S of them (default 200) then say a line in the
   lobby chat (MulticastChatRequest) R times a second each (default 1), their turns evenly spread:
   every line goes to everyone in the lobby, its sender included (S x R x P deliveries a second,
   400,000 by default), and is stored before it is shown. After a warm-up (at least 5 s: the last
   push of the lobby lists must be out), a window (``--seconds``) measures the fan-out latency,
   from a line sent to its ClientChatRequest received, on 50 probes (``--probes``, evenly spread
   among the players, in this process, which has nothing else to do); the other players, the
   senders among them, live in a drain process that reads frame headers only, counts the chat
   lines and skips payloads unread, so that the load generator does not cap the server. By default
   the drain clients read in bulk (SO_RCVLOWAT: told of data once a quarter second of it waits;
   ``--no-bulk-reads`` reads every write as it comes), which costs that process a fraction of the
   CPU; over loopback it also spares the server's writes the wake-up of a reader, which remote
   clients would not cost the server either. Reported: deliveries/s, p50/p99, and the server
   process's CPU (utime + stime from /proc/PID/stat, the store writer apart) over the window per
   delivered line. The baseline is bench/_echo.py's lobby mode with the same clients: every chat
   frame relayed to every client by websockets' ``broadcast``. Targets: fan-out p99 < 50 ms, and
   Parlour's server CPU per delivered line within 3x of the baseline's.
3. Idle connections. M connections (default 10,000) to a fresh Parlour server, each signed in
   (AsyncAuthRequest, then AsyncConnectedRequest) and then left open; the server process's RSS
   (VmRSS) before and after, per connection. Target: < 600 MB with 10,000 connections. The bench
   raises its RLIMIT_NOFILE to the hard limit (the server inherits it) and opens fewer connections,
   saying so, if that limit is too low.

Accounts never go through Argon2id (~50 ms of server CPU each, on purpose): the store is prepared
before the server starts, with ``parlour db import`` of accounts that share one precomputed hash
and a known ``session_secret``, so the bench mints valid session tokens itself.

Everything binds 127.0.0.1 on free ports, is bounded in count and time, and stops its subprocesses.
The clients use the lean websocket client of bench/_wsclient.py (uvloop when installed) and read
only the ``type`` of a frame, plus the ``turn_index`` of a prompt.

The machine's load average is printed at the start of each part, and, for the lobby, the share
of a CPU a short busy loop gets here (a shared host may give much less than its CPU count says).

    python bench/async.py [--clients 200] [--seconds 15] [--warmup 3] [--rate-limit 1000]
                          [--lobby 2000] [--senders 200] [--chat-rate 1] [--probes 50]
                          [--watched 20] [--no-bulk-reads]
                          [--idle 10000] [--concurrency 200] [--only throughput,lobby,idle]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import multiprocessing
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._wsclient import DrainClient, WireClient, open_client
from tests.processes import BIN, clean_env, free_port, running, serve_command

from parlour.accounts.passwords import hash_password
from parlour.accounts.tokens import SessionTokens
from parlour.settings import Settings

T = TypeVar("T")

HOST = "127.0.0.1"
PARTS = ("throughput", "lobby", "idle")
ENCODE = msgspec.json.Encoder()
DECODE = msgspec.json.Decoder()

#: The type of a frame, read from its head only (the server writes it first).
KIND = re.compile(rb'"type"\s*:\s*"([A-Za-z]+)"')
#: A prompt's turn index, read from the end (it follows the 1 KiB state).
TURN = re.compile(rb'"turn_index"\s*:\s*(\d+)')
PROMPT = b"ActionRequiredRequest"
ACKED = b"ActionCommitedRequest"
FAILURES = frozenset({b"ErrorRequest", b"AsyncConnectionErrorRequest", b"LobbyJoinDeniedRequest"})
#: A refusal that asks for the request again (a cluster's game moving between nodes, or its
#: shard between owners): a client sends it again after a short wait, as the protocol says.
TRY_AGAIN = b'"TRY_AGAIN"'
RETRY_SECONDS = 0.02
#: A commit refused as stale (out of turn, or for a turn already played): in a cluster, a game
#: restored after its shard changed owner prompts again for a turn already stored, and a commit
#: sent again may find its turn gone. Counted; the game goes on.
STALE = (b'"NOT_YOUR_TURN"', b'"INDEX_CONFLICT"')

#: The 1 KiB state every commit carries (base64 text: nothing to escape in JSON).
STATE = base64.b64encode(os.urandom(768))
#: A commit, but for its turn index and the closing brace (fields in any order are fine).
COMMIT = (
    b'{"type":"CommitActionRequest","game_id":%d,"next_players":[%d],"broadcast":true,'
    b'"next_state":"%s","turn_index":'
)

#: Accounts: names, the password of each (its hash is computed once and shared), the secret.
PASSWORD = "bench-password"
SESSION_SECRET = "session_secret"
SESSION_TTL = 86400.0
#: Connections being opened (and signed in) at once, for the games and for the idle part.
SETUP_CONCURRENCY = 50
SETUP_SECONDS = 120.0
#: File descriptors kept aside from the idle connections, in the bench and in the server.
FD_MARGIN = 500
#: Parlour's default ``async_requests_per_second``: a client sending faster is disconnected.
DEFAULT_RATE_LIMIT = Settings().async_requests_per_second
#: What the throughput part runs Parlour with instead, so that it measures the server, not its limiter.
BENCH_RATE_LIMIT = 1000.0
#: The idle part's target: the server's RSS with 10,000 connections.
IDLE_TARGET_MB = 600
IDLE_TARGET_CONNECTIONS = 10_000


def kind_of(frame: bytes) -> bytes:
    found = KIND.search(frame, 0, 80)
    return found.group(1) if found else b""


def turn_of(frame: bytes) -> int:
    at = frame.rfind(b'"turn_index"')
    found = TURN.match(frame, at) if at >= 0 else None
    return int(found.group(1)) if found else 0


def name_of(account_id: int) -> str:
    return f"bench{account_id}"


def run_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop where it is installed (the clients stay cheap), else on asyncio's own loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency of Parlour
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


# -- The store: accounts and the session secret, imported before the server starts --------------


def import_accounts(store: str, accounts: int, password_hash: str, folder: Path) -> SessionTokens:
    """Import into ``store`` (an SQLite file or a postgresql:// URL) ``accounts`` accounts (ids
    1.., names ``bench<id>``, all with ``password_hash``) and a fresh session secret, through
    ``parlour db import`` (its export file is written in ``folder``); the tokens that secret
    signs."""
    secret = os.urandom(32)
    export = folder / "accounts.jsonl"
    now = time.time()
    with export.open("wb") as out:
        out.write(ENCODE.encode({"kind": "meta", "fields": {"key": SESSION_SECRET, "value": secret.hex()}}))
        out.write(b"\n")
        for account_id in range(1, accounts + 1):
            row = {"id": account_id, "name": name_of(account_id), "password_hash": password_hash}
            out.write(ENCODE.encode({"kind": "account", "fields": {**row, "created": now}}))
            out.write(b"\n")
    done = subprocess.run(
        [str(BIN / "parlour"), "db", "import", "--store", store, str(export)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"parlour db import failed: {done.stderr.strip() or done.stdout.strip()}")
    return SessionTokens(secret, SESSION_TTL)


@contextmanager
def prepared_store(accounts: int, password_hash: str) -> Iterator[tuple[Path, SessionTokens]]:
    """A fresh SQLite store in a temporary directory holding ``accounts`` accounts and a known
    session secret (import_accounts); and the tokens that secret signs. The directory goes at
    the end."""
    with tempfile.TemporaryDirectory(prefix="parlour-bench-async-") as tmp:
        store = Path(tmp) / "bench.db"
        yield store, import_accounts(str(store), accounts, password_hash, Path(tmp))


def parlour_command(port: int, store: Path, rate_limit: float = 0) -> list[str]:
    """Parlour with its store on ``store``, default settings but the log level and, when
    ``rate_limit`` is set, ``async_requests_per_second``."""
    extra = ["--async-requests-per-second", f"{rate_limit:g}"] if rate_limit else []
    return serve_command(port, "--log-level", "WARNING", *extra, store=str(store))


def echo_command(port: int) -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("_echo.py")), "--port", str(port)]


def healthz(port: int) -> dict[str, Any]:
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.request("GET", "/healthz")
        stats: dict[str, Any] = json.loads(connection.getresponse().read())
        return stats
    finally:
        connection.close()


# -- The load: the same turn loop for Parlour and the baseline -----------------------------------


@dataclass
class Meter:
    measuring: bool = False
    commits: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Commits sent again after a TRY_AGAIN refusal, and refused as stale (a cluster only).
    retries: int = 0
    refused: int = 0


async def expect(ws: WireClient, kind: bytes) -> bytes:
    """The next frame of this kind (others are skipped); a refusal fails."""
    while True:
        frame = await ws.recv()
        found = kind_of(frame)
        if found == kind:
            return frame
        if found in FAILURES:
            raise RuntimeError(f"expected {kind.decode()}, got {frame[:300].decode(errors='replace')}")


async def play(ws: WireClient, game_id: int, seat: int, meter: Meter) -> None:
    """One seat: commit on every prompt, time each commit until its acknowledgement."""
    head = COMMIT % (game_id, 3 - seat, STATE)
    perf = time.perf_counter
    sent_at = 0.0
    commit = b""
    try:
        while True:
            frame = await ws.recv()
            kind = kind_of(frame)
            if kind == PROMPT:
                sent_at = perf()
                commit = head + b"%d}" % turn_of(frame)
                ws.send(commit)
            elif kind == ACKED:
                if meter.measuring:
                    meter.commits += 1
                    meter.latencies.append(perf() - sent_at)
            elif TRY_AGAIN in frame and commit:
                # The same commit again (its latency still runs from the first send).
                meter.retries += 1
                await asyncio.sleep(RETRY_SECONDS)
                ws.send(commit)
            elif kind == b"ErrorRequest" and any(code in frame for code in STALE):
                meter.refused += 1
            elif kind in FAILURES:
                meter.errors.append(frame[:300].decode(errors="replace"))
                return
    except ConnectionError as error:
        meter.errors.append(f"connection lost: {error}")


Setup = Callable[[int], Awaitable[tuple[WireClient, int]]]


async def drive(
    make_setup: Callable[[], Setup], clients: int, warmup: float, seconds: float, server: int
) -> Result:
    """Set up every client (bounded), let them play ``warmup`` seconds, then measure ``seconds``."""
    meter = Meter()
    started = time.perf_counter()
    setup = make_setup()
    seated = await asyncio.wait_for(asyncio.gather(*(setup(i) for i in range(clients))), SETUP_SECONDS)
    setup_seconds = time.perf_counter() - started
    tasks = [
        asyncio.create_task(play(ws, game_id, index % 2 + 1, meter))
        for index, (ws, game_id) in enumerate(seated)
    ]
    await asyncio.sleep(warmup)
    processes = {"server": [server], "store writer": children(server)}
    cpu_before = {name: cpu_seconds(pids) for name, pids in processes.items()}
    client_before = sum(os.times()[:2])
    meter.measuring = True
    window = time.perf_counter()
    await asyncio.sleep(seconds)
    meter.measuring = False
    elapsed = time.perf_counter() - window
    cpu = {name: (cpu_seconds(pids) - cpu_before[name]) / elapsed for name, pids in processes.items() if pids}
    cpu["clients"] = (sum(os.times()[:2]) - client_before) / elapsed
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.wait_for(
        asyncio.gather(*(ws.close(2.0) for ws, _ in seated), return_exceptions=True), timeout=15
    )
    return Result(meter, elapsed, setup_seconds, cpu)


def parlour_setup(port: int, tokens: SessionTokens) -> Callable[[], Setup]:
    """Sign in, then seat 1 creates a game and seat 2 joins it (the game starts at once)."""

    def make() -> Setup:
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)
        loop = asyncio.get_running_loop()
        games: dict[int, asyncio.Future[int]] = {}

        async def setup(index: int) -> tuple[WireClient, int]:
            account_id = index + 1
            name = name_of(account_id)
            token, _ = tokens.issue(account_id, name, time.time())
            async with gate:
                ws = await open_client(HOST, port, "/async")
                ws.send(ENCODE.encode({"type": "AsyncAuthRequest", "name": name, "sessionToken": token}))
                await expect(ws, b"AsyncConnectedRequest")
            pair, seat = divmod(index, 2)
            game = games.setdefault(pair, loop.create_future())
            if seat == 0:
                configuration = {"game_type": "bench", "max_players": 2}
                ws.send(ENCODE.encode({"type": "LobbyCreateGameRequest", "configuration": configuration}))
                game_id: int = DECODE.decode(await expect(ws, b"LobbyGameCreatedRequest"))["game_id"]
                game.set_result(game_id)
                return ws, game_id
            game_id = await game
            ws.send(ENCODE.encode({"type": "LobbyJoinGameRequest", "game_id": game_id}))
            await expect(ws, b"GameCreatedRequest")
            return ws, game_id

        return setup

    return make


def echo_setup(port: int) -> Callable[[], Setup]:
    def make() -> Setup:
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def setup(index: int) -> tuple[WireClient, int]:
            pair, seat = divmod(index, 2)
            async with gate:
                return await open_client(HOST, port, f"/pair/{pair + 1}/{seat + 1}"), pair + 1

        return setup

    return make


@dataclass
class Result:
    meter: Meter
    elapsed: float
    setup_seconds: float
    #: CPU time over the window, in cores, by process.
    cpu: dict[str, float]

    @property
    def rate(self) -> float:
        return self.meter.commits / self.elapsed

    def percentile(self, share: float) -> float:
        latencies = sorted(self.meter.latencies)
        if not latencies:
            return float("nan")
        if share == 0.5:
            return statistics.median(latencies) * 1000
        return latencies[min(len(latencies) - 1, int(len(latencies) * share))] * 1000

    def show(self, name: str, unit: str) -> None:
        print(
            f"{name:9s} {unit}={self.meter.commits:7d} in {self.elapsed:5.1f}s  {unit}/s={self.rate:8.0f}  "
            f"p50={self.percentile(0.5):6.2f}ms  p99={self.percentile(0.99):6.2f}ms  "
            f"max={max(self.meter.latencies, default=float('nan')) * 1000:6.1f}ms  "
            f"errors={len(self.meter.errors)}  (setup {self.setup_seconds:.1f}s)"
            + (f"  TRY_AGAIN retries={self.meter.retries}" if self.meter.retries else "")
            + (f"  stale refusals={self.meter.refused}" if self.meter.refused else "")
        )
        shares = ", ".join(f"{process} {share:.0%}" for process, share in self.cpu.items())
        print(f"{'':9s} CPU over the window (% of one core): {shares}")
        for error in self.meter.errors[:3]:
            print(f"  error: {error}")


def throughput(args: argparse.Namespace, password_hash: str) -> None:
    print(
        f"throughput: {args.clients} clients in {args.clients // 2} games, 1 KiB broadcast commits, "
        f"{args.warmup:g}s warm-up then {args.seconds:g}s measured; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start"
    )
    if args.rate_limit:
        print(
            f"  Parlour runs with async_requests_per_second {args.rate_limit:g} (default "
            f"{DEFAULT_RATE_LIMIT:g}): past {DEFAULT_RATE_LIMIT * args.clients:g} commits/s the default "
            f"would disconnect these clients (--rate-limit 0 keeps it)"
        )
    with prepared_store(args.clients, password_hash) as (store, tokens):
        port = free_port()
        command = parlour_command(port, store, args.rate_limit)
        with running(command, port, env=clean_env()) as process:
            parlour = run_loop(
                drive(parlour_setup(port, tokens), args.clients, args.warmup, args.seconds, process.pid)
            )
            stats = healthz(port)
    parlour.show("parlour", "commits")
    per_client = parlour.rate / args.clients
    print(
        f"{'':9s} each client sent {per_client:.1f} commits/s: {per_client / DEFAULT_RATE_LIMIT:.0%} of the "
        f"default async_requests_per_second ({DEFAULT_RATE_LIMIT:g} per connection)"
    )
    if any("RATE_LIMITED" in error for error in parlour.meter.errors):
        print(f"{'':9s} RATE_LIMITED: the per-connection rate limit, not the server's speed, capped this run")
    transactions = int(stats.get("store_transactions", 0))
    records = int(stats.get("store_records", 0))
    print(
        f"{'':9s} store (whole run): {transactions} transactions, {records} records, "
        f"{records / max(transactions, 1):.1f} records/transaction"
    )
    port = free_port()
    with running(echo_command(port), port) as process:
        baseline = run_loop(drive(echo_setup(port), args.clients, args.warmup, args.seconds, process.pid))
    baseline.show("baseline", "trips")
    ratio = parlour.rate / baseline.rate if baseline.rate else float("nan")
    p99 = parlour.percentile(0.99)
    print(
        f"ratio commits/s parlour / round trips/s baseline = {ratio:.2f} (target >= 0.40: "
        f"{'met' if ratio >= 0.40 else 'MISSED'})"
    )
    print(
        f"parlour p99 = {p99:.2f} ms (target < 20 ms: {'met' if p99 < 20 else 'MISSED'}); "
        f"baseline p99 = {baseline.percentile(0.99):.2f} ms"
    )


# -- The lobby: chat fan-out ---------------------------------------------------------------------------

#: How a chat line relayed to its recipients starts, from Parlour (the type first) and the baseline.
CHAT_HEAD = b'{"type":"ClientChatRequest"'
#: A chat line sent: its text carries the line's number and the sender's clock at sending
#: (time.monotonic: CLOCK_MONOTONIC, one clock for every process of the machine).
CHAT = b'{"type":"MulticastChatRequest","text":"%d %.6f hello lobby, anyone for a game tonight?"}'
#: The sending time in a relayed line (the text comes first in both servers' frames).
SENT_AT = re.compile(rb'"text"\s*:\s*"\d+ (\d+\.\d+) ')
#: The lobby's warm-up, at least: Parlour pushes the lobby lists to everyone in the lobby at most
#: every ``async_list_interval`` (2 s) while they change (players entering), and the last push
#: (some 40 MB for 2,000 players) must be out before the window opens.
LOBBY_WARMUP = 5.0
#: Application keepalive (PingRequest) of clients that send nothing else: /async closes a
#: connection after 60 s without a frame.
LOBBY_KEEPALIVE = 25.0
#: The lobby part's targets.
LOBBY_TARGET_P99_MS = 50.0
LOBBY_TARGET_CPU_RATIO = 3.0


@dataclass(frozen=True)
class LobbyPlan:
    """Who does what in a lobby run (picklable: the drain process gets it too)."""

    #: "parlour" (sign in, enter the lobby, presence) or "echo" (the baseline's /lobby).
    server: str
    port: int
    players: int
    watched: int
    #: Player indices (0..players-1) of the probes, and of the senders (never probes).
    probes: frozenset[int]
    senders: tuple[int, ...]
    chat_rate: float
    #: SO_RCVLOWAT of the drain clients (0: every write is read as it comes).
    low_water: int = 0
    tokens: SessionTokens | None = None

    @classmethod
    def of(
        cls, server: str, port: int, args: argparse.Namespace, tokens: SessionTokens | None = None
    ) -> LobbyPlan:
        players = args.lobby
        probes = frozenset(spread(list(range(players)), min(args.probes, players - 1)))
        senders = spread([index for index in range(players) if index not in probes], args.senders)
        # A quarter second of each client's chat traffic (a relayed line: ~110 bytes), at most
        # 16 KiB: a few reads a second, and the server's pings still answered within the second.
        traffic = len(senders) * args.chat_rate * len(CHAT)
        low_water = 0 if args.no_bulk_reads else max(0, min(16384, int(traffic / 4)))
        return cls(
            server, port, players, args.watched, probes, tuple(senders), args.chat_rate, low_water, tokens
        )


@dataclass
class LobbyMeter:
    measuring: bool = False
    #: Lines sent (by the drain process) and the fan-out latencies the probes saw in the window.
    sent: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Probe(DrainClient):
    """A client that times every chat line it gets (sent -> received) while the meter measures;
    before :meth:`probe` it signs in as any client."""

    meter: LobbyMeter | None = None
    chats = 0

    def probe(self, meter: LobbyMeter) -> None:
        self.meter = meter
        self.messages.clear()

    def data_received(self, data: bytes) -> None:
        meter = self.meter
        if meter is None:
            super().data_received(data)
            return
        now = time.monotonic()
        super().data_received(data)
        messages = self.messages
        while messages:
            frame = messages.popleft()
            if not frame.startswith(CHAT_HEAD):
                continue
            self.chats += 1
            if meter.measuring:
                found = SENT_AT.search(frame)
                if found is not None:
                    meter.latencies.append(now - float(found.group(1)))


def spread(pool: list[int], count: int) -> list[int]:
    """``count`` items of ``pool`` evenly spaced."""
    count = max(0, min(count, len(pool)))
    return [pool[i * len(pool) // count] for i in range(count)] if count else []


def lobby_setup(plan: LobbyPlan) -> Callable[[int, type[DrainClient]], Awaitable[DrainClient]]:
    """How one player connects. Parlour: sign in, enter the lobby, monitor the presence of the
    next ``watched`` players, subscribe to presence. The baseline: connect to /lobby."""
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)

    async def parlour(index: int, factory: type[DrainClient]) -> DrainClient:
        assert plan.tokens is not None
        account_id = index + 1
        name = name_of(account_id)
        token, _ = plan.tokens.issue(account_id, name, time.time())
        count = min(plan.watched, plan.players - 1)
        others = [(index + step) % plan.players + 1 for step in range(1, count + 1)]
        async with gate:
            ws = await open_client(HOST, plan.port, "/async", factory)
            ws.send(ENCODE.encode({"type": "AsyncAuthRequest", "name": name, "sessionToken": token}))
            await expect(ws, b"AsyncConnectedRequest")
            ws.send(b'{"type":"EnterLobbyRequest"}')
            ws.send(ENCODE.encode({"type": "RegisterPresenceRequest", "player_ids": others}))
            ws.send(b'{"type":"SubscribePresenceServiceRequest","subscribe":true}')
            await expect(ws, b"LobbyEnteredRequest")
        return ws

    async def echo(index: int, factory: type[DrainClient]) -> DrainClient:
        async with gate:
            return await open_client(HOST, plan.port, "/lobby", factory)

    return parlour if plan.server == "parlour" else echo


async def chatter(senders: list[DrainClient], rate: float, meter: LobbyMeter) -> None:
    """Each sender says a line ``rate`` times a second, the senders' turns evenly spread (one
    line every 1 / (rate x senders) s); a late loop catches up without sleeping, yielding."""
    if not senders or rate <= 0:
        return
    period = 1.0 / (rate * len(senders))
    clock = time.monotonic
    start = clock()
    number = 0
    while True:
        for ws in senders:
            delay = start + number * period - clock()
            await asyncio.sleep(delay if delay > 0 else 0)
            if ws.closed:
                meter.errors.append("a sender's connection closed")
                return
            ws.send(CHAT % (number, clock()))
            number += 1
            meter.sent += 1


async def lobby_keepalive(clients: list[DrainClient], every: float = LOBBY_KEEPALIVE) -> None:
    while True:
        await asyncio.sleep(every)
        ping = b'{"type":"PingRequest","timestamp":%d}' % int(time.time() * 1000)
        for ws in clients:
            if not ws.closed:
                ws.send(ping)


async def receive(pipe: Connection, timeout: float) -> Any:
    """The next message on ``pipe``, without blocking the loop (TimeoutError after ``timeout``)."""
    if not pipe.poll():
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        loop.add_reader(pipe.fileno(), lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait_for(readable, timeout)
        finally:
            loop.remove_reader(pipe.fileno())
    return pipe.recv()


def lobby_worker(pipe: Connection, plan: LobbyPlan) -> None:
    """The drain process: every player but the probes (the senders among them), so that the
    probes' process has nothing else to do and times the fan-out as it arrives."""
    try:
        run_loop(drain_players(pipe, plan))
    except Exception as error:
        with suppress(OSError):
            pipe.send(("failed", repr(error)))


async def drain_players(pipe: Connection, plan: LobbyPlan) -> None:
    """Set up the players, send ("ready", setup seconds), then answer "count" with (chat lines
    counted, lines sent, connections lost, errors) until "stop"."""
    setup = lobby_setup(plan)
    meter = LobbyMeter()
    started = time.perf_counter()

    async def one(index: int) -> DrainClient:
        ws = await setup(index, DrainClient)
        ws.drain(CHAT_HEAD)
        return ws

    indices = [index for index in range(plan.players) if index not in plan.probes]
    clients = await asyncio.wait_for(asyncio.gather(*(one(index) for index in indices)), SETUP_SECONDS)
    by_index = dict(zip(indices, clients, strict=True))
    if plan.low_water > 1:
        for ws in clients:
            ws.read_in_bulk(plan.low_water)
    tasks = [asyncio.create_task(chatter([by_index[index] for index in plan.senders], plan.chat_rate, meter))]
    if plan.server == "parlour":
        tasks.append(asyncio.create_task(lobby_keepalive(clients)))
    pipe.send(("ready", time.perf_counter() - started))
    try:
        while True:
            question = await receive(pipe, 3600)
            if question != "count":
                break
            counted = sum(ws.counted for ws in clients)
            lost = sum(1 for ws in clients if ws.lost)
            pipe.send((counted, meter.sent, lost, meter.errors[:3]))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ws in clients:
            if ws.transport is not None:
                ws.transport.abort()
        await asyncio.sleep(0.2)


@dataclass
class LobbyResult:
    meter: LobbyMeter
    elapsed: float
    setup_seconds: float
    #: Chat lines received by every client in the window (a line to N players is N deliveries).
    delivered: int
    #: CPU seconds over the window, by process.
    cpu: dict[str, float]
    players: int

    @property
    def rate(self) -> float:
        return self.delivered / self.elapsed

    @property
    def per_delivery_us(self) -> float:
        """Server process CPU per delivered line, in microseconds."""
        return self.cpu["server"] / max(self.delivered, 1) * 1e6

    def percentile(self, share: float) -> float:
        latencies = sorted(self.meter.latencies)
        if not latencies:
            return float("nan")
        if share == 0.5:
            return statistics.median(latencies) * 1000
        return latencies[min(len(latencies) - 1, int(len(latencies) * share))] * 1000

    def show(self, name: str) -> None:
        offered = self.meter.sent * self.players
        print(
            f"{name:9s} lines={self.meter.sent} ({self.meter.sent / self.elapsed:.0f}/s)  "
            f"delivered={self.delivered} in {self.elapsed:4.1f}s: {self.rate:.0f}/s "
            f"({self.delivered / max(offered, 1):.0%} of lines x players)  "
            f"fan-out p50={self.percentile(0.5):.2f}ms  p99={self.percentile(0.99):.2f}ms  "
            f"max={max(self.meter.latencies, default=float('nan')) * 1000:.1f}ms  "
            f"errors={len(self.meter.errors)}  (setup {self.setup_seconds:.1f}s)"
        )
        shares = ", ".join(f"{process} {seconds / self.elapsed:.0%}" for process, seconds in self.cpu.items())
        print(
            f"{'':9s} server CPU per delivered line: {self.per_delivery_us:.2f} us; "
            f"CPU over the window (% of one core): {shares}"
        )
        for error in self.meter.errors[:3]:
            print(f"  error: {error}")


async def lobby_drive(plan: LobbyPlan, warmup: float, seconds: float, server: int) -> LobbyResult:
    """The drain process sets up its players while this one sets up the probes; the senders chat
    through the warm-up, then the window is measured."""
    meter = LobbyMeter()
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    worker = context.Process(target=lobby_worker, args=(theirs, plan), daemon=True)
    started = time.perf_counter()
    worker.start()
    probes: list[Probe] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        setup = lobby_setup(plan)

        async def one(index: int) -> Probe:
            probe = await setup(index, Probe)
            assert isinstance(probe, Probe)
            probe.probe(meter)
            return probe

        probes = await asyncio.wait_for(
            asyncio.gather(*(one(index) for index in sorted(plan.probes))), SETUP_SECONDS
        )
        answer = await receive(ours, SETUP_SECONDS + 30)
        if answer[0] != "ready":
            raise RuntimeError(f"the drain process failed: {answer[1]}")
        setup_seconds = time.perf_counter() - started
        if plan.server == "parlour":
            tasks.append(asyncio.create_task(lobby_keepalive(list(probes))))

        async def count() -> tuple[int, int, int, list[str]]:
            ours.send("count")
            counted, sent, lost, errors = await receive(ours, 60)
            return counted + sum(probe.chats for probe in probes), sent, lost, errors

        await asyncio.sleep(max(warmup, LOBBY_WARMUP))
        processes = {"server": [server], "store writer": children(server), "drain process": [worker.pid or 0]}
        cpu_before = {name: cpu_seconds(pids) for name, pids in processes.items()}
        probes_before = sum(os.times()[:2])
        delivered_before, sent_before, _, _ = await count()
        meter.measuring = True
        window = time.perf_counter()
        await asyncio.sleep(seconds)
        meter.measuring = False
        delivered_after, sent_after, lost, errors = await count()
        elapsed = time.perf_counter() - window
        cpu = {name: cpu_seconds(pids) - cpu_before[name] for name, pids in processes.items() if pids}
        cpu["probes process"] = sum(os.times()[:2]) - probes_before
        meter.sent = sent_after - sent_before
        meter.errors.extend(errors)
        lost += sum(1 for probe in probes if probe.lost)
        if lost:
            meter.errors.append(f"{lost} connections lost")
        ours.send("stop")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for probe in probes:
            if probe.transport is not None:
                probe.transport.abort()
        worker.join(10)
        if worker.is_alive():
            worker.kill()
            worker.join()
    return LobbyResult(meter, elapsed, setup_seconds, delivered_after - delivered_before, cpu, plan.players)


def cpu_share(seconds: float = 0.5) -> float:
    """The share of one CPU a busy loop gets here for ``seconds``: below 1 on a crowded host."""
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        pass
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def lobby(args: argparse.Namespace, password_hash: str) -> None:
    limit = raise_fd_limit()
    players = args.lobby
    fits = max(0, limit - FD_MARGIN)
    offered = args.senders * args.chat_rate
    print(
        f"lobby: {players} players in the lobby, each monitoring the presence of {args.watched} others "
        f"(subscribed); {args.senders} of them chat {args.chat_rate:g} line/s each ({offered:g} lines/s, "
        f"{offered * players:,.0f} deliveries/s offered); {args.probes} probes time the fan-out in this "
        f"process, the others only count frames in a drain process; {max(args.warmup, LOBBY_WARMUP):g}s "
        f"warm-up then {args.seconds:g}s measured; {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at the start, a busy loop gets {cpu_share():.0%} of a CPU"
    )
    if players > fits:
        print(f"  RLIMIT_NOFILE hard limit is {limit}: only {fits} players fit; measuring {fits}")
        players = args.lobby = fits
    if players < 2:
        print("  nothing to measure")
        return
    with prepared_store(players, password_hash) as (store, tokens):
        port = free_port()
        with running(parlour_command(port, store), port, env=clean_env()) as process:
            plan = LobbyPlan.of("parlour", port, args, tokens)
            parlour = run_loop(lobby_drive(plan, args.warmup, args.seconds, process.pid))
            stats = healthz(port)
    parlour.show("parlour")
    transactions = int(stats.get("store_transactions", 0))
    records = int(stats.get("store_records", 0))
    print(
        f"{'':9s} store (whole run): {transactions} transactions, {records} records (each chat line is "
        f"stored before it is shown)"
    )
    port = free_port()
    with running(echo_command(port), port) as process:
        baseline = run_loop(
            lobby_drive(LobbyPlan.of("echo", port, args), args.warmup, args.seconds, process.pid)
        )
    baseline.show("baseline")
    ratio = parlour.per_delivery_us / baseline.per_delivery_us if baseline.delivered else float("nan")
    p99 = parlour.percentile(0.99)
    print(
        f"server CPU per delivered line parlour / baseline = {ratio:.2f} "
        f"(target <= {LOBBY_TARGET_CPU_RATIO:g}: {'met' if ratio <= LOBBY_TARGET_CPU_RATIO else 'MISSED'})"
    )
    print(
        f"parlour fan-out p99 = {p99:.2f} ms (target < {LOBBY_TARGET_P99_MS:g} ms: "
        f"{'met' if p99 < LOBBY_TARGET_P99_MS else 'MISSED'}); baseline p99 = {baseline.percentile(0.99):.2f} ms"
    )


# -- Idle connections -------------------------------------------------------------------------------


def vm_rss_kib(pid: int | str) -> int:
    """A process's resident set (VmRSS) in KiB, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def children(pid: int) -> list[int]:
    """A process's direct children (Parlour's store writer)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user + system) the processes used so far, from /proc."""
    total = 0
    for pid in pids:
        with suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def children_rss_kib(pid: int) -> int:
    """The RSS of a process's direct children (the store writer, once started), in KiB."""
    total = 0
    for child in children(pid):
        with suppress(OSError, RuntimeError):
            total += vm_rss_kib(child)
    return total


def raise_fd_limit() -> int:
    """RLIMIT_NOFILE to its hard limit (subprocesses inherit it); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):
        return soft
    return wanted


async def keepalive(clients: list[WireClient], every: float = 30.0) -> None:
    """A PingRequest on every connection now and then, so that a long run is not closed as silent."""
    while True:
        await asyncio.sleep(every)
        ping = b'{"type":"PingRequest","timestamp":%d}' % int(time.time() * 1000)
        for ws in clients:
            if not ws.closed:
                ws.send(ping)
            ws.messages.clear()  # the echoes


@dataclass
class Idle:
    opened: int
    failures: list[str]
    open_seconds: float
    before_kib: int
    after_kib: int
    writer_kib: int
    client_kib: int


async def hold_idle(port: int, pid: int, tokens: SessionTokens, count: int, concurrency: int) -> Idle:
    await asyncio.sleep(1.0)  # the server settles after its restore
    before = vm_rss_kib(pid)
    clients: list[WireClient] = []
    failures: list[str] = []
    gate = asyncio.Semaphore(concurrency)

    async def one(account_id: int) -> None:
        name = name_of(account_id)
        token, _ = tokens.issue(account_id, name, time.time())
        auth = ENCODE.encode({"type": "AsyncAuthRequest", "name": name, "sessionToken": token})
        async with gate:
            try:
                ws = await open_client(HOST, port, "/async")
            except (OSError, ConnectionError) as error:
                failures.append(f"connect: {error!r}")
                return
            try:
                ws.send(auth)
                await expect(ws, b"AsyncConnectedRequest")
            except (OSError, ConnectionError, RuntimeError) as error:
                failures.append(f"sign-in: {error}")
                if ws.transport is not None:
                    ws.transport.abort()
                return
        clients.append(ws)

    pinger = asyncio.create_task(keepalive(clients))
    started = time.perf_counter()
    try:
        await asyncio.wait_for(
            asyncio.gather(*(one(account_id) for account_id in range(1, count + 1))),
            timeout=max(120.0, count / 50),
        )
        open_seconds = time.perf_counter() - started
        await asyncio.sleep(2.0)  # the server settles (its loop, its allocator)
        after = vm_rss_kib(pid)
        writer = children_rss_kib(pid)
        client = vm_rss_kib("self")
        lost = sum(1 for ws in clients if ws.lost)
        if lost:
            failures.append(f"{lost} connections closed while idle")
    finally:
        pinger.cancel()
        for ws in clients:
            if ws.transport is not None:
                ws.transport.abort()
        await asyncio.sleep(0.5)
    return Idle(len(clients), failures, open_seconds, before, after, writer, client)


def idle(args: argparse.Namespace, password_hash: str) -> None:
    limit = raise_fd_limit()
    count = args.idle
    fits = max(0, limit - FD_MARGIN)
    print(f"idle: {count} authenticated connections, opened {args.concurrency} at a time")
    if count > fits:
        print(
            f"  RLIMIT_NOFILE hard limit is {limit}: only {fits} connections fit "
            f"(the bench and the server each need one descriptor per connection); measuring {fits}"
        )
        count = fits
    if count < 1:
        print("  nothing to measure")
        return
    with prepared_store(count, password_hash) as (store, tokens):
        port = free_port()
        with running(parlour_command(port, store), port, env=clean_env()) as process:
            result = run_loop(hold_idle(port, process.pid, tokens, count, args.concurrency))
    mib = 1024.0
    grown = result.after_kib - result.before_kib
    per = grown / max(result.opened, 1)
    projected = (result.before_kib + per * IDLE_TARGET_CONNECTIONS) / mib
    print(
        f"  opened {result.opened} of {count} in {result.open_seconds:.1f}s "
        f"({result.opened / max(result.open_seconds, 1e-9):.0f}/s); failures {len(result.failures)}"
    )
    for failure in result.failures[:3]:
        print(f"  failure: {failure}")
    print(
        f"  server RSS before {result.before_kib / mib:.1f} MiB, after {result.after_kib / mib:.1f} MiB: "
        f"+{grown / mib:.1f} MiB, {per:.1f} KiB per connection"
    )
    verdict = "met" if projected < IDLE_TARGET_MB else "MISSED"
    what = "" if result.opened == IDLE_TARGET_CONNECTIONS else f" (projected to {IDLE_TARGET_CONNECTIONS})"
    print(
        f"  server RSS with {IDLE_TARGET_CONNECTIONS} connections{what}: {projected:.1f} MiB (target < 600 MB: {verdict})"
    )
    print(
        f"  for information: store writer process "
        f"{f'{result.writer_kib / mib:.1f} MiB' if result.writer_kib else 'not started (nothing to store)'}, "
        f"bench (client) process {result.client_kib / mib:.1f} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200, help="clients, two per game (default: 200)")
    parser.add_argument(
        "--seconds", type=float, default=15.0, help="measured window per server (default: 15)"
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="play before measuring (default: 3)")
    parser.add_argument("--idle", type=int, default=10_000, help="idle connections (default: 10000)")
    parser.add_argument(
        "--concurrency", type=int, default=200, help="idle connections opened at once (default: 200)"
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=BENCH_RATE_LIMIT,
        help="Parlour's async_requests_per_second for the throughput part: each client commits "
        f"(commits/s) / clients times a second, which passes the default "
        f"({DEFAULT_RATE_LIMIT:g}) on a fast machine; 0 keeps the default (default: {BENCH_RATE_LIMIT:g})",
    )
    parser.add_argument("--lobby", type=int, default=2000, help="players in the lobby part (default: 2000)")
    parser.add_argument("--senders", type=int, default=200, help="lobby players who chat (default: 200)")
    parser.add_argument(
        "--chat-rate", type=float, default=1.0, help="lines per second per sender (default: 1)"
    )
    parser.add_argument(
        "--probes", type=int, default=50, help="lobby players who time the fan-out (default: 50)"
    )
    parser.add_argument(
        "--watched",
        type=int,
        default=20,
        help="players whose presence each lobby player monitors (default: 20)",
    )
    parser.add_argument(
        "--no-bulk-reads",
        action="store_true",
        help="lobby drain clients read every write as it comes (default: SO_RCVLOWAT, a quarter "
        "second of traffic)",
    )
    parser.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated parts to run, from {', '.join(PARTS)}"
    )
    args = parser.parse_args()
    chosen = [part.strip() for part in args.only.split(",") if part.strip()]
    unknown = sorted(set(chosen) - set(PARTS))
    if unknown or not chosen:
        parser.error(f"--only takes names from {', '.join(PARTS)}, not {', '.join(unknown) or 'nothing'}")
    if args.clients < 2 or args.clients % 2:
        parser.error("--clients must be even and at least 2 (two seats per game)")
    if args.lobby < 0 or args.senders < 0 or args.probes < 0 or args.watched < 0 or args.chat_rate < 0:
        parser.error("--lobby, --senders, --probes, --watched and --chat-rate must not be negative")
    if args.seconds <= 0 or args.warmup < 0 or args.idle < 0 or args.concurrency < 1 or args.rate_limit < 0:
        parser.error(
            "--seconds must be positive, --warmup, --idle and --rate-limit not negative, --concurrency >= 1"
        )

    password_hash = hash_password(PASSWORD)  # once: every account shares it
    if "throughput" in chosen:
        throughput(args, password_hash)
    if "lobby" in chosen and args.lobby:
        lobby(args, password_hash)
    if "idle" in chosen and args.idle:
        idle(args, password_hash)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
