"""Websocket server benchmark: Parlour against the reference Apologies server, same load, same run.

N concurrent clients (default 20) each register, advertise a private 4-seat game, start it at once
(three programmatic seats) and play random legal moves to completion, game after game, until the
time budget is spent. The servers run one after the other, as subprocesses bound to 127.0.0.1 on
free ports: Parlour without a store (``--store none``), Parlour with its durable store (a fresh SQLite file in a temporary directory, default ``store_sync``), and the
reference server. The load
is bounded in games and in time and stops by itself. The clients use a minimal websocket client
(bench/_wsclient.py), the same for every server, so that they stay cheap next to the server.

Printed for each server: completed games/s, and p50/p99 latency from EXECUTE_MOVE sent to the next
GAME_PLAYER_TURN received; for the store, its group commit as /healthz and ``parlour db check``
report it (commits/s, records and moves per commit); then the ratios. Targets: >= 50x the
reference's games/s and a p99 below a tenth of the reference's; with the store, >= 0.8x the games/s without it and still a p99 below a tenth of
the reference's.

    python bench/server.py [--clients 20] [--seconds 20] [--max-games 5000] [--mode STANDARD]
                           [--only parlour,parlour-store,reference]
    python bench/server.py --robot-latency [--clients 20] [--fish-clients 1] [--seconds 20]
    python bench/server.py --runs 5 [--seconds 6] [--baseline OTHER/.venv/bin]

Each server's CPU per client move is printed too, split into its event loop (the main thread),
its other threads and its store writer process, read from /proc from the load's second second
to its end. ``--runs N`` measures only the store's cost: without then with the store, N times at
--clients and at --busy-clients, each run's ratio and their spread; with ``--baseline``, another
installation (a checkout of an earlier commit with its own virtualenv) is measured the same way
just before this one in every run, so that before and after share each moment of a busy machine.

``--robot-latency`` measures something else: the human seats' latency while the clients play
Apologies and ``--fish-clients`` others play Fish (one human and one robot a table), against
``easy`` robots, then ``normal`` ones (which decide on the event loop), then ``hard`` ones (which
decide in the robots' process): from a human's move to the first state that shows it (nothing in
it waits for a robot, unless a robot decides on the loop), and a player in no game (a request
every 5 ms); it prints the p99s and their ratios to ``normal``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._cpu import cpu_seconds, descendants, thread_cpu_seconds
from bench._wsclient import WireClient, open_client
from tests.processes import BIN, free_port, running, serve_command

DECODE = msgspec.json.Decoder()
ENCODE = msgspec.json.Encoder()
# The client only needs the type of most events (a GAME_STATE_CHANGE per move): read it from the
# head of the frame instead of decoding the whole body, so the load generator stays cheap and does
# not cap the faster server. Works for compact and pretty-printed JSON alike.
KIND = re.compile(rb'"message"\s*:\s*"([A-Z_]+)"')


def kind_of(frame: bytes) -> bytes:
    found = KIND.search(frame, 0, 80)
    return found.group(1) if found else b""


@dataclass
class Load:
    games: int = 0
    moves: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: A human seat's own move, from its request to the first state that shows it: nothing in
    #: it waits for a robot, unless a robot decides on the event loop in the same input.
    acks: list[float] = field(default_factory=list)
    #: CPU per client move (EXECUTE_MOVE, the robots' three moves that follow included), in
    #: microseconds, from the second second of the load to its end: the server's event loop
    #: (its main thread), its other threads, and its store writer process.
    cpu: dict[str, float] = field(default_factory=dict)


def _cpu_now(pid: int) -> tuple[float, float, float]:
    """(event loop, other threads, writer processes) CPU seconds of server ``pid`` so far."""
    loop = thread_cpu_seconds(pid, pid)
    return loop, cpu_seconds([pid]) - loop, cpu_seconds(descendants(pid))


async def sample_cpu(pid: int, load: Load, warmup: float, stop_at: float) -> None:
    """Fill ``load.cpu`` over the load's window after ``warmup`` seconds (the writer process
    starts with the first commit and its start-up is not a move's cost)."""
    await asyncio.sleep(warmup)
    before, moves = _cpu_now(pid), load.moves
    await asyncio.sleep(max(0.0, stop_at - time.monotonic()))
    after, played = _cpu_now(pid), max(load.moves - moves, 1)
    names = ("loop", "threads", "writer")
    load.cpu = {name: (b - a) / played * 1e6 for name, a, b in zip(names, before, after, strict=True)}


#: The servers a run can measure, in the order they run.
SERVERS = ("parlour", "parlour-store", "reference")


def parlour_command(port: int, store: str = "none", robot: str = "greedy") -> list[str]:
    """Parlour on ``port`` alone (no Fish or Tsuro listener), with the store ``store``.

    Each bench client is a robot that answers every turn at once, a few hundred requests a
    second: far past the per-connection rate a person needs (``requests_per_second``). The rate
    is raised out of its way, not turned off, so its check is still paid for on every frame."""
    return serve_command(
        port, "--robot", robot, "--log-level", "WARNING", "--requests-per-second", "1000000", store=store
    )


def reference_command(port: int) -> list[str]:
    overrides = {
        "server_host": "127.0.0.1",
        "server_port": port,
        "websocket_limit": 10000,
        "registered_player_limit": 10000,
        "total_game_limit": 100000,
        "in_progress_game_limit": 10000,
    }
    command = [str(BIN / "apologies-server"), "--quiet"]
    for key, value in overrides.items():
        command += ["--override", f"{key}:{value}"]
    return command


def request(ws: WireClient, message: str, player_id: str | None = None, **context: object) -> None:
    body: dict[str, object] = {"message": message}
    if player_id is not None:
        body["player_id"] = player_id
    if context:
        body["context"] = context
    ws.send(ENCODE.encode(body))


async def client(
    port: int, index: int, mode: str, load: Load, stop_at: float, max_games: int, rng: random.Random
) -> None:
    """One player: game after game against three programmatic seats until time or games run out."""
    ws = await open_client("127.0.0.1", port)
    try:
        request(ws, "REGISTER_PLAYER", handle=f"bench{index}")
        player_id = None
        while player_id is None:
            reply = DECODE.decode(await ws.recv())
            if reply["message"] == "PLAYER_REGISTERED":
                player_id = reply["player_id"]
            elif reply["message"] == "REQUEST_FAILED":
                raise RuntimeError(f"register failed: {reply}")
        while time.monotonic() < stop_at and load.games < max_games:
            request(
                ws,
                "ADVERTISE_GAME",
                player_id,
                name=f"bench {index}",
                mode=mode,
                players=4,
                visibility="PRIVATE",
                invited_handles=[],
            )
            request(ws, "START_GAME", player_id)
            sent_at: float | None = None
            shown: float | None = None  # the move whose GAME_STATE_CHANGE is awaited
            while True:
                frame = await ws.recv()
                kind = kind_of(frame)
                if kind == b"GAME_STATE_CHANGE" and shown is not None:
                    load.acks.append(time.perf_counter() - shown)
                    shown = None
                elif kind == b"GAME_PLAYER_TURN":
                    if sent_at is not None:
                        load.latencies.append(time.perf_counter() - sent_at)
                    event = DECODE.decode(frame)
                    move_id = rng.choice(list(event["context"]["moves"]))
                    sent_at = shown = time.perf_counter()
                    load.moves += 1
                    request(ws, "EXECUTE_MOVE", player_id, move_id=move_id)
                elif kind == b"GAME_COMPLETED":
                    load.games += 1
                    break
                elif kind in (b"GAME_CANCELLED", b"REQUEST_FAILED"):
                    load.errors.append(f"{kind.decode()}: {DECODE.decode(frame).get('context')}")
                    return
        request(ws, "UNREGISTER_PLAYER", player_id)
    finally:
        await ws.close()


async def drive(
    port: int, clients: int, seconds: float, max_games: int, mode: str, seed: int, pid: int | None = None
) -> tuple[Load, float]:
    load = Load()
    started = time.monotonic()
    stop_at = started + seconds
    tasks = [
        client(port, i, mode, load, stop_at, max_games, random.Random(seed * 1000 + i))
        for i in range(clients)
    ]
    if pid is not None:
        tasks.append(sample_cpu(pid, load, min(1.0, seconds / 4), stop_at))
    # A hard ceiling on top of the soft budget: a game in flight finishes, a stuck server does not hang us.
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=seconds + 120)
    return load, time.monotonic() - started


async def probe(port: int, stop_at: float, latencies: list[float]) -> None:
    """Another player, in no game: LIST_AVAILABLE_GAMES every few milliseconds, timed from the
    request to its answer. Nothing in it waits for a robot, so a robot holding up the event loop
    shows in its latency, and a robot thinking off the loop does not."""
    ws = await open_client("127.0.0.1", port)
    try:
        request(ws, "REGISTER_PLAYER", handle="prober")
        player_id = None
        while player_id is None:
            reply = DECODE.decode(await ws.recv())
            if reply["message"] == "PLAYER_REGISTERED":
                player_id = reply["player_id"]
        while time.monotonic() < stop_at:
            sent_at = time.perf_counter()
            request(ws, "LIST_AVAILABLE_GAMES", player_id)
            while kind_of(await ws.recv()) != b"AVAILABLE_GAMES":
                pass
            latencies.append(time.perf_counter() - sent_at)
            await asyncio.sleep(0.005)
    finally:
        await ws.close()


async def registered(port: int, handle: str) -> tuple[WireClient, str]:
    ws = await open_client("127.0.0.1", port)
    request(ws, "REGISTER_PLAYER", handle=handle)
    while True:
        reply = DECODE.decode(await ws.recv())
        if reply["message"] == "PLAYER_REGISTERED":
            return ws, reply["player_id"]
        if reply["message"] == "REQUEST_FAILED":
            raise RuntimeError(f"register failed: {reply}")


async def human_side(ws: WireClient, player_id: str, load: Load, pause: float, rng: random.Random) -> None:
    """One human of a game with no robot, to its end: it answers each turn after ``pause``
    seconds (a person's pace, the same whatever the robots elsewhere do), and its acks are from
    its move to the GAME_STATE_CHANGE that shows it."""
    shown: float | None = None
    while True:
        frame = await ws.recv()
        kind = kind_of(frame)
        if kind == b"GAME_STATE_CHANGE" and shown is not None:
            load.acks.append(time.perf_counter() - shown)
            shown = None
        elif kind == b"GAME_PLAYER_TURN":
            moves = list(DECODE.decode(frame)["context"]["moves"])
            await asyncio.sleep(pause)
            shown = time.perf_counter()
            load.moves += 1
            request(ws, "EXECUTE_MOVE", player_id, move_id=rng.choice(moves))
        elif kind == b"GAME_COMPLETED":
            return
        elif kind == b"GAME_INVITATION":
            request(ws, "JOIN_GAME", player_id, game_id=DECODE.decode(frame)["context"]["game"]["game_id"])
        elif kind in (b"GAME_CANCELLED", b"REQUEST_FAILED"):
            load.errors.append(f"{kind.decode()}: {DECODE.decode(frame).get('context')}")
            return


async def human_pair(
    port: int, index: int, load: Load, stop_at: float, pause: float, rng: random.Random
) -> None:
    """Two humans playing each other, game after game, with no robot in their games."""
    (first, first_id), (second, second_id) = [await registered(port, f"human{index}{side}") for side in "ab"]
    try:
        while time.monotonic() < stop_at:
            request(
                first,
                "ADVERTISE_GAME",
                first_id,
                name=f"humans {index}",
                mode="STANDARD",
                players=2,
                visibility="PRIVATE",
                invited_handles=[f"human{index}b"],
            )
            await asyncio.gather(
                human_side(first, first_id, load, pause, rng), human_side(second, second_id, load, pause, rng)
            )
            load.games += 1
    finally:
        await first.close()
        await second.close()


FISH_DIRECTIONS = ("north", "northeast", "southeast", "south", "southwest", "northwest")


def fish_move(state: dict[str, Any], me: int, rng: random.Random) -> dict[str, Any]:
    """A random legal Fish move of ``me``, read from the NewGameState the server sent."""
    tiles = {tile["tile_id"]: tile for tile in state["board"]["tiles"]}
    players = state["players"]
    taken = {g["tile_id"] for p in players for g in p["penguins"] if g["tile_id"] is not None}
    mine = next(p for p in players if p["player_id"] == me)["penguins"]
    if any(g["tile_id"] is None for g in mine):
        return {"type": "PlacePenguin", "tile_id": rng.choice([t for t in tiles if t not in taken])}
    moves = []
    for penguin in mine:
        for direction in FISH_DIRECTIONS:
            step = tiles[penguin["tile_id"]][direction]
            while step is not None and step not in taken:
                moves.append((penguin["penguin_id"], step))
                step = tiles[step][direction]
    penguin_id, target = rng.choice(moves)
    return {"type": "MovePenguin", "penguin_id": penguin_id, "next_tile_id": target}


async def fish_client(port: int, load: Load, stop_at: float, rng: random.Random) -> None:
    """One Fish player (a human seat): table after table against the robot that takes the
    other seat, random legal moves; its acks are from its move to the next NewGameState."""
    while time.monotonic() < stop_at:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b'{"type": "PlayerConnect", "age": 99}\n')  # older than robots: they start
            me: int | None = None
            shown: float | None = None
            while line := await reader.readline():
                message = json.loads(line)
                if message["type"] == "PlayerConnected":
                    me = message.get("player_id")
                    if me is None:
                        load.errors.append(str(message))
                        return
                    continue
                if message["type"] != "NewGameState":
                    continue
                if shown is not None:
                    load.acks.append(time.perf_counter() - shown)
                    shown = None
                state = message["state"]
                if state["winning_players"]:
                    load.games += 1
                elif state["current_turn"] == me:
                    writer.write(ENCODE.encode(fish_move(state, me, rng)) + b"\n")
                    shown = time.perf_counter()
                    load.moves += 1
        finally:
            writer.close()


async def _with_probe(
    port: int, fish_port: int, args: argparse.Namespace, latencies: list[float], fish: Load, humans: Load
) -> tuple[Load, float]:
    """The Apologies clients' load (against robots), the human pairs', the Fish players' and the
    prober, side by side."""
    stop_at = time.monotonic() + args.seconds
    others = [asyncio.ensure_future(probe(port, stop_at, latencies))]
    others += [
        asyncio.ensure_future(
            human_pair(
                port, index, humans, stop_at, args.human_pause, random.Random(args.seed * 104729 + index)
            )
        )
        for index in range(args.human_pairs)
    ]
    others += [
        asyncio.ensure_future(fish_client(fish_port, fish, stop_at, random.Random(args.seed * 7919 + index)))
        for index in range(args.fish_clients)
    ]
    played = await drive(port, args.clients, args.seconds, args.max_games, args.mode, args.seed)
    await asyncio.wait_for(asyncio.gather(*others), timeout=120)
    return played


def percentiles(values: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(values) or [float("nan")]
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


#: The levels --robot-latency measures, in the order they run: ``easy`` robots barely think
#: (a floor), ``normal`` ones decide on the event loop (the baseline), ``hard`` ones in the
#: robots' process.
LEVELS = ("easy", "normal", "hard")


def robot_latency(args: argparse.Namespace) -> None:
    """The human seats' latency (their own moves' acknowledgements: nothing in them waits for a
    robot) in Apologies and Fish games, and a player in no game, with robots of each level in
    turn on one server at a time, ``--rounds`` times over (interleaved, so that a machine whose
    load drifts treats every level alike); then the ratios of the median p99s to ``normal``'s."""
    results: dict[str, dict[str, list[float]]] = {level: {} for level in LEVELS}
    for round_ in range(args.rounds):
        for level in LEVELS:
            print(f"round {round_ + 1}, {level} robots:")
            for name, p99 in one_level(level, args).items():
                results[level].setdefault(name, []).append(p99)
    for name, normal in results["normal"].items():
        base = statistics.median(normal)
        for level in ("hard", "easy"):
            p99s = results[level][name]
            value = statistics.median(p99s) / base if base else float("nan")
            target = " (target: 1 within noise, or less)" if level == "hard" else ""
            shown = ", ".join(f"{p99:.1f}" for p99 in p99s)
            print(
                f"ratio p99 {name}, {level}/normal robots = {value:.2f}{target}; "
                f"p99s {shown} against {', '.join(f'{p99:.1f}' for p99 in normal)} ms"
            )


def one_level(level: str, args: argparse.Namespace) -> dict[str, float]:
    """One server, its robots at ``level``, under the load: each measure's p99 (ms)."""
    port, fish_port = free_port(), free_port()
    latencies: list[float] = []
    fish, humans = Load(), Load()
    # One human and one robot a table, started at the next tick (a short one keeps it busy).
    fish_flags = ["--fish-port", str(fish_port), "--fish-robot", level, "--fish-players", "2"]
    fish_flags += ["--fish-wait", "0", "--tick-seconds", "0.1"]
    command = [*parlour_command(port, robot=level), *fish_flags]
    with running(command, port):
        load, elapsed = asyncio.run(_with_probe(port, fish_port, args, latencies, fish, humans))
    summarize(f"robots {level}", load, elapsed)
    figures: dict[str, float] = {}
    for name, values, games in (
        ("apologies human seats beside robots, moves shown", load.acks, None),
        ("apologies human seats in games with no robot, moves shown", humans.acks, humans.games),
        ("fish human seats' moves shown", fish.acks, fish.games),
        ("a player in no game", latencies, None),
    ):
        p50, p99 = percentiles(values)
        figures[name] = p99
        counted = "" if games is None else f", {games} games ({games / elapsed:.2f}/s)"
        print(f"{'':14s} {name}: {len(values)} requests{counted}: p50={p50:.2f}ms p99={p99:.2f}ms")
    for error in (fish.errors + humans.errors)[:3]:
        print(f"  error: {error}")
    return figures


def healthz(port: int) -> dict[str, object]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/healthz")
        stats: dict[str, object] = json.loads(connection.getresponse().read())
        return stats
    finally:
        connection.close()


def store_check(store: Path) -> dict[str, int]:
    """The counts of rows ``parlour db check`` finds in a store (the server has stopped)."""
    done = subprocess.run(
        [str(BIN / "parlour"), "db", "check", "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"parlour db check failed: {done.stderr.strip() or done.stdout.strip()}")
    counts: dict[str, int] = json.loads(done.stdout)["counts"]
    return counts


def measure(
    command: Callable[[int], list[str]], args: argparse.Namespace, store: Path | None = None
) -> tuple[Load, float, dict[str, object] | None]:
    """One server under the load; with a store, its /healthz read at the end of the load."""
    port = free_port()
    stats = None
    with running(command(port), port) as process:
        load, elapsed = asyncio.run(
            drive(port, args.clients, args.seconds, args.max_games, args.mode, args.seed, process.pid)
        )
        if store is not None:
            stats = healthz(port)
    return load, elapsed, stats


def report_store(stats: dict[str, object], counts: dict[str, int], elapsed: float) -> None:
    commits = int(str(stats.get("store_transactions", 0)))
    records = int(str(stats.get("store_records", 0)))
    per = max(commits, 1)
    print(
        f"{'':14s} store: {commits} commits ({commits / elapsed:.0f}/s), {records} records, "
        f"{records / per:.1f} records/commit; stored {counts['moves']} moves of {counts['games']} games: "
        f"{counts['moves'] / per:.1f} moves/commit, {commits / max(counts['moves'], 1):.3f} commits/move "
        f"(store {stats.get('store')})"
    )


def summarize(name: str, load: Load, elapsed: float) -> dict[str, float]:
    latencies = sorted(load.latencies) or [float("nan")]
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    rate = load.games / elapsed
    print(
        f"{name:14s} games={load.games:5d} moves={load.moves:6d} elapsed={elapsed:6.1f}s "
        f"games/s={rate:8.2f} p50={p50:8.2f}ms p99={p99:8.2f}ms errors={len(load.errors)}"
    )
    if load.cpu:
        cpu = load.cpu
        print(
            f"{'':14s} CPU per client move: event loop {cpu['loop']:.0f} us, other threads "
            f"{cpu['threads']:.0f} us, writer process {cpu['writer']:.0f} us"
        )
    for error in load.errors[:3]:
        print(f"  error: {error}")
    return {"rate": rate, "p50": p50, "p99": p99, **load.cpu}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="time budget per server")
    parser.add_argument("--max-games", type=int, default=5000, help="game budget per server")
    parser.add_argument("--mode", choices=["STANDARD", "ADULT"], default="STANDARD")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--busy-clients",
        type=int,
        default=100,
        help="then Parlour with and without the store again, with this many clients, so that the "
        "server rather than the round trips sets the pace (0: skip; default: 100)",
    )
    parser.add_argument(
        "--only",
        default=",".join(SERVERS),
        help=f"comma-separated servers to run, from {', '.join(SERVERS)} (default: all)",
    )
    parser.add_argument(
        "--robot-latency",
        action="store_true",
        help="only this: the human seats' and a player in no game's request latency while the "
        "others play Apologies and Fish against easy, normal, then hard robots (which think in "
        "the robots' process), in one run",
    )
    parser.add_argument(
        "--fish-clients",
        type=int,
        default=1,
        help="with --robot-latency: Fish players at once (default: 1; a second one would often "
        "join the table the first has open, and play a human rather than a robot)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="with --robot-latency: how many times each level runs, interleaved (default: 2)",
    )
    parser.add_argument(
        "--human-pairs",
        type=int,
        default=5,
        help="with --robot-latency: pairs of humans playing Apologies each other (default: 5)",
    )
    parser.add_argument(
        "--human-pause",
        type=float,
        default=0.02,
        help="with --robot-latency: seconds those humans take to answer a turn (default: 0.02)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=0,
        help="only this: Parlour without then with the store, this many times in turn at --clients "
        "and at --busy-clients, each run's ratio and their spread, and the CPU per move",
    )
    parser.add_argument(
        "--baseline",
        metavar="BIN",
        help="with --runs: also measure the parlour installed in BIN (a virtualenv's bin of another "
        "checkout), before this one in every run",
    )
    args = parser.parse_args()
    if args.runs:
        store_runs(args)
        return 0
    if args.robot_latency:
        robot_latency(args)
        return 0
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SERVERS))
    if unknown or not chosen:
        parser.error(f"--only takes names from {', '.join(SERVERS)}, not {', '.join(unknown) or 'nothing'}")

    # The servers run from this interpreter's installation: compiled or not, as this says.
    spec = importlib.util.find_spec("parlour.core.lobby")
    compiled = spec is not None and not str(spec.origin).endswith(".py")
    print(f"compiled (mypyc) modules: {'yes' if compiled else 'no, plain Python'}")
    results = {}
    for name in (name for name in SERVERS if name in chosen):
        if name == "parlour-store":
            with tempfile.TemporaryDirectory(prefix="parlour-bench-") as tmp:
                store = Path(tmp) / "bench.db"
                load, elapsed, stats = measure(partial(parlour_command, store=str(store)), args, store)
                results[name] = summarize(name, load, elapsed)
                assert stats is not None
                report_store(stats, store_check(store), elapsed)
            continue
        command = parlour_command if name == "parlour" else reference_command
        load, elapsed, _ = measure(command, args)
        results[name] = summarize(name, load, elapsed)

    def ratio(name: str, over: str, key: str, target: str) -> None:
        if name in results and over in results:
            a, b = results[name][key], results[over][key]
            value = a / b if b else float("nan")
            shown = (f"{value:.1f}x" if value >= 10 else f"{value:.2f}x") if key == "rate" else f"{value:.3f}"
            label = "games/s" if key == "rate" else key
            print(f"ratio {label} {name}/{over} = {shown} (target {target})")

    # The targets are the default server's, the store on; without it, for comparison.
    ratio("parlour-store", "reference", "rate", ">= 50x")
    ratio("parlour-store", "reference", "p99", "< 0.1")
    ratio("parlour", "reference", "rate", "for information")
    ratio("parlour", "reference", "p99", "for information")
    ratio("parlour-store", "parlour", "rate", ">= 0.9x")
    ratio("parlour-store", "parlour", "p99", "for information")
    if args.busy_clients and {"parlour", "parlour-store"} <= set(chosen):
        busy(args)
    return 0


def _at(bin_dir: str | None, command: Callable[[int], list[str]]) -> Callable[[int], list[str]]:
    """``command`` run by the ``parlour`` of ``bin_dir`` (another installation) if given."""
    if bin_dir is None:
        return command
    return lambda port: [str(Path(bin_dir) / "parlour"), *command(port)[1:]]


def store_runs(args: argparse.Namespace) -> None:
    """The store's cost, ``args.runs`` times at each number of clients: each run measures the
    server without the store then with it, back to back, so that every ratio compares two
    measures of the same moment of a shared machine; then the spread of the ratios. With
    ``--baseline BIN``, each run first measures that installation the same way (before/after,
    interleaved)."""
    builds = [("before", args.baseline), ("after", None)] if args.baseline else [("", None)]
    for clients in (args.clients, args.busy_clients):
        if not clients:
            continue
        at = argparse.Namespace(**{**vars(args), "clients": clients})
        ratios: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        for run in range(1, args.runs + 1):
            print(f"{clients} clients, run {run}:")
            for build, bin_dir in builds:
                load, elapsed, _ = measure(_at(bin_dir, parlour_command), at)
                without = summarize(f"{build} off".strip(), load, elapsed)
                with tempfile.TemporaryDirectory(prefix="parlour-bench-") as tmp:
                    store = Path(tmp) / "bench.db"
                    load, elapsed, _ = measure(
                        _at(bin_dir, partial(parlour_command, store=str(store))), at, store
                    )
                    stored = summarize(f"{build} on".strip(), load, elapsed)
                ratio = stored["rate"] / without["rate"] if without["rate"] else float("nan")
                ratios.setdefault(build, []).append(ratio)
                print(f"{'':14s} ratio games/s store on/off {build} = {ratio:.2f}x")
                for side, result in (("off", without), ("on", stored)):
                    for key in ("loop", "threads", "writer"):
                        if key in result:
                            cpu.setdefault(f"{build} {key} {side}".strip(), []).append(result[key])
        for build, values in ratios.items():
            ordered = sorted(values)
            print(
                f"ratio games/s store on/off {build} at {clients} clients over {len(values)} runs: "
                f"min {ordered[0]:.2f}x, median {statistics.median(ordered):.2f}x, max {ordered[-1]:.2f}x "
                f"(target >= 0.9x)"
            )
        shown = ", ".join(f"{key} {statistics.median(values):.0f}" for key, values in cpu.items())
        print(f"median CPU per client move at {clients} clients (us): {shown}")


def busy(args: argparse.Namespace) -> None:
    """The store's cost when the server is saturated. With few clients each one waits for its
    move to be committed before it sends the next, so the store's latency (a commit, and the
    loop iterations around it) shows in games/s; with many, the loop always has other work and
    only the store's CPU does."""
    args = argparse.Namespace(**{**vars(args), "clients": args.busy_clients})
    print(f"with {args.clients} clients:")
    load, elapsed, _ = measure(parlour_command, args)
    without = summarize("parlour", load, elapsed)
    with tempfile.TemporaryDirectory(prefix="parlour-bench-") as tmp:
        store = Path(tmp) / "bench.db"
        load, elapsed, stats = measure(partial(parlour_command, store=str(store)), args, store)
        stored = summarize("parlour-store", load, elapsed)
        assert stats is not None
        report_store(stats, store_check(store), elapsed)
    value = stored["rate"] / without["rate"] if without["rate"] else float("nan")
    print(f"ratio games/s parlour-store/parlour at {args.clients} clients = {value:.2f}x (target >= 0.9x)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
