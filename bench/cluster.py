"""Cluster benchmark (issue 17): the turn throughput load of bench/async.py against one node and
against two nodes, and the cost of the cluster path on one node, in the same run.

Three servers on one fresh store each (SQLite, the default writer process) and one Redis
(Debian's ``redis-server``, started here on a free loopback port, without persistence):

1. ``one``: one node without ``--cluster``: the baseline;
2. ``one+cluster``: one node with ``--cluster``: it owns every service, so every input takes the
   owner's path (the lease check, the proxy) and no effect needs Redis: the overhead of being in
   a cluster at all. Target: >= 0.7x the baseline's commits/s;
3. ``two``: two nodes with ``--cluster``; in every game seat 1 is on the first node (the owner)
   and seat 2 on the second, so half the commits come in through a gateway and half of every
   game's messages go out through Redis: the cost of crossing nodes. On 2 cores a speed-up is
   not expected (the owner still runs every game); the point is that this path works and what
   it costs.

Printed: commits/s and p50/p99 commit latency of each, and the ratios to the baseline.

    python bench/cluster.py [--clients 200] [--seconds 10] [--warmup 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._wsclient import WireClient, open_client
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
TARGET = 0.7
LEASE = "3"


def node_command(port: int, store: Path, redis: str | None) -> list[str]:
    extra = ["--async-requests-per-second", f"{load.BENCH_RATE_LIMIT:g}", "--log-level", "WARNING"]
    if redis is not None:
        extra += ["--cluster", redis, "--cluster-lease", LEASE]
    return serve_command(port, *extra, store=str(store))


def split_setup(ports: list[int], tokens: SessionTokens) -> Callable[[], Any]:
    """bench/async.py's set-up, with seat 1 of every game on ``ports[0]`` and seat 2 on the last
    port: the game is created on one node and joined from the other."""

    def make() -> Any:
        gate = asyncio.Semaphore(load.SETUP_CONCURRENCY)
        loop = asyncio.get_running_loop()
        games: dict[int, asyncio.Future[int]] = {}

        async def setup(index: int) -> tuple[WireClient, int]:
            account_id = index + 1
            name = load.name_of(account_id)
            token, _ = tokens.issue(account_id, name, time.time())
            pair, seat = divmod(index, 2)
            port = ports[0] if seat == 0 else ports[-1]
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
def nodes(count: int, redis: str | None, store: Path) -> Iterator[tuple[list[int], int]]:
    """``count`` nodes on ``store``: their ports, and the process id of the first started (it
    owns every service: its CPU is what the bench reports)."""
    with ExitStack() as stack:
        ports: list[int] = []
        pids: list[int] = []
        for _ in range(count):
            port = free_port()
            process = stack.enter_context(running(node_command(port, store, redis), port, env=clean_env()))
            ports.append(port)
            pids.append(process.pid)
        yield ports, pids[0]


def measure(name: str, count: int, redis: str | None, args: argparse.Namespace, password_hash: str) -> Any:
    with (
        load.prepared_store(args.clients, password_hash) as (store, tokens),
        nodes(count, redis, store) as (ports, owner),
    ):
        result = load.run_loop(
            load.drive(split_setup(ports, tokens), args.clients, args.warmup, args.seconds, owner)
        )
    result.show(name, "commits")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200, help="clients, two per game (default: 200)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (default: 10)")
    parser.add_argument("--warmup", type=float, default=3.0, help="play before measuring (default: 3)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="measure each set-up this many times, interleaved; the best of each counts (default: 2)",
    )
    args = parser.parse_args()
    binary = redis_binary()
    if binary is None:
        print(
            "cluster bench skipped: redis-server is not installed and cannot be (apt-get install redis-server)"
        )
        return 0
    password_hash = hash_password(load.PASSWORD)
    print(
        f"cluster: {args.clients} clients in {args.clients // 2} games, 1 KiB broadcast commits, "
        f"{args.warmup:g}s warm-up then {args.seconds:g}s measured; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    )
    results: dict[str, list[Any]] = {"one": [], "one+clus": [], "two": []}
    # Interleaved rounds: a shared machine's load drifts; each set-up keeps its best round.
    with tempfile.TemporaryDirectory(prefix="parlour-bench-cluster-") as tmp:
        for round_ in range(args.rounds):
            results["one"].append(measure("one", 1, None, args, password_hash))
            with redis_server(Path(tmp) / f"redis{round_}a", binary) as url:
                results["one+clus"].append(measure("one+clus", 1, url, args, password_hash))
            with redis_server(Path(tmp) / f"redis{round_}b", binary) as url:
                results["two"].append(measure("two", 2, url, args, password_hash))
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
