"""Websocket server benchmark: Parlour against the reference Apologies server, same load, same run.

N concurrent clients (default 20) each register, advertise a private 4-seat game, start it at once
(three programmatic seats) and play random legal moves to completion, game after game, until the
time budget is spent. Both servers run as subprocesses bound to 127.0.0.1 on free ports; the load
is bounded in games and in time and stops by itself. The clients use a minimal websocket client
(bench/_wsclient.py), the same for both servers, so that they stay cheap next to the server.

Printed for each server: completed games/s, and p50/p99 latency from EXECUTE_MOVE sent to the next
GAME_PLAYER_TURN received; then the ratios. Targets: >= 50x the reference's games/s and a p99 below
a tenth of the reference's.

    python bench/server.py [--clients 20] [--seconds 20] [--max-games 5000] [--mode STANDARD]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._wsclient import WireClient, open_client
from tests.processes import free_port, running

BIN = Path(sys.executable).parent
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


def parlour_command(port: int) -> list[str]:
    return [
        str(BIN / "parlour"),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--robot",
        "greedy",
        "--log-level",
        "WARNING",
    ]


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
            while True:
                frame = await ws.recv()
                kind = kind_of(frame)
                if kind == b"GAME_PLAYER_TURN":
                    if sent_at is not None:
                        load.latencies.append(time.perf_counter() - sent_at)
                    event = DECODE.decode(frame)
                    move_id = rng.choice(list(event["context"]["moves"]))
                    sent_at = time.perf_counter()
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
    port: int, clients: int, seconds: float, max_games: int, mode: str, seed: int
) -> tuple[Load, float]:
    load = Load()
    started = time.monotonic()
    stop_at = started + seconds
    tasks = [
        client(port, i, mode, load, stop_at, max_games, random.Random(seed * 1000 + i))
        for i in range(clients)
    ]
    # A hard ceiling on top of the soft budget: a game in flight finishes, a stuck server does not hang us.
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=seconds + 120)
    return load, time.monotonic() - started


def summarize(name: str, load: Load, elapsed: float) -> dict[str, float]:
    latencies = sorted(load.latencies) or [float("nan")]
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    rate = load.games / elapsed
    print(
        f"{name:10s} games={load.games:5d} moves={load.moves:6d} elapsed={elapsed:6.1f}s "
        f"games/s={rate:8.2f} p50={p50:8.2f}ms p99={p99:8.2f}ms errors={len(load.errors)}"
    )
    for error in load.errors[:3]:
        print(f"  error: {error}")
    return {"rate": rate, "p50": p50, "p99": p99}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="time budget per server")
    parser.add_argument("--max-games", type=int, default=5000, help="game budget per server")
    parser.add_argument("--mode", choices=["STANDARD", "ADULT"], default="STANDARD")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    results = {}
    for name, command in (("parlour", parlour_command), ("reference", reference_command)):
        port = free_port()
        with running(command(port), port):
            load, elapsed = asyncio.run(
                drive(port, args.clients, args.seconds, args.max_games, args.mode, args.seed)
            )
        results[name] = summarize(name, load, elapsed)

    ours, theirs = results["parlour"], results["reference"]
    speedup = ours["rate"] / theirs["rate"] if theirs["rate"] else float("inf")
    p99_ratio = ours["p99"] / theirs["p99"] if theirs["p99"] else float("nan")
    print(f"ratio games/s parlour/reference = {speedup:.1f}x (target >= 50x)")
    print(f"ratio p99 parlour/reference = {p99_ratio:.3f} (target < 0.1)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
