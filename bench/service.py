"""The Apologies service's CPU per client move, in-process: no sockets, no event loop, no writer.

``--clients`` players each play game after game against three greedy robots, as the clients of
``bench/server.py`` do (a random legal move at each of their turns), through the service's
``received`` alone; the CPU time of those calls (``time.process_time``) over the client moves
played is what is printed, with the store's records made (the journal recording, snapshots
included) and without. A client move is its ``EXECUTE_MOVE`` and the three robot moves that
follow. It is the service's share of the event loop's CPU in ``bench/server.py``; the rest of
the loop's is the transport's (sockets, framing, the runtime, the writer's hand-over).

Every message and record the service makes is hashed: the messages' digest is the same with and
without records (records never change what players are sent), and both digests are the same from
one build to the next when a change keeps the wire output and the stored rows (snapshots
included) identical.

``--baseline OTHER/.venv/bin`` runs this script with another installation (a checkout of an
earlier commit with its own virtualenv) in turn with this one, ``--rounds`` times, and prints
both builds' medians and their ratios.

    .venv/bin/python bench/service.py [--clients 20] [--moves 20000] [--rounds 3]
                                      [--baseline OTHER/.venv/bin]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parlour.core.effects import Send, Store
from parlour.core.ids import IdSource
from parlour.protocols.apologies_ws import ApologiesService
from parlour.settings import Settings

#: A message's type, read from the head of its frame (as bench/server.py's clients read it).
KIND = re.compile(rb'"message":"([A-Z_]+)"')
T0 = 1_800_000_000.0


@dataclass
class Result:
    #: Microseconds of CPU a client move in ``received``.
    cpu: float
    games: int
    moves: int
    records: int
    #: SHA-256 of every message sent, in order (connection and bytes).
    digest: str
    #: SHA-256 of every record made, in order (when asked).
    rows: str


def play(moves: int, record: bool, clients: int = 20, seed: int = 7, hash_records: bool = False) -> Result:
    """``clients`` players against robots until they have made ``moves`` client moves."""
    settings = replace(Settings(), robot="greedy", requests_per_second=1e9)
    service = ApologiesService(settings, Random(seed), ids=IdSource(seed))
    service.lobby.journal.recording = record
    digest, rows = hashlib.sha256(), hashlib.sha256()
    rngs = [Random(seed * 1000 + index) for index in range(clients)]
    players: dict[int, str] = {}
    inbox: list[tuple[int, bytes]] = []
    now = T0
    spent = 0.0
    played = games = records = 0

    def take(effects: list[object]) -> None:
        nonlocal records
        for effect in effects:
            if type(effect) is Send:
                digest.update(b"%d:%s" % (effect.conn, effect.data))
                inbox.append((effect.conn, effect.data))
            elif type(effect) is Store:
                records += len(effect.records)
                if hash_records:
                    for row in effect.records:
                        rows.update(repr(row).encode())

    def request(conn: int, body: dict[str, object]) -> None:
        take(service.received(conn, json.dumps(body), now))

    def advertise(conn: int) -> None:
        context = {
            "name": f"game {conn}",
            "mode": "STANDARD",
            "players": 4,
            "visibility": "PRIVATE",
            "invited_handles": [],
        }
        request(conn, {"message": "ADVERTISE_GAME", "player_id": players[conn], "context": context})
        request(conn, {"message": "START_GAME", "player_id": players[conn]})

    for conn in range(clients):
        take(service.connected(conn, now))
        request(conn, {"message": "REGISTER_PLAYER", "context": {"handle": f"bench{conn}"}})
    while played < moves and inbox:
        batch, inbox[:] = inbox[:], []
        for conn, data in batch:
            found = KIND.search(data, 0, 80)
            kind = found.group(1) if found else b""
            if kind == b"PLAYER_REGISTERED":
                players[conn] = json.loads(data)["player_id"]
                advertise(conn)
            elif kind == b"GAME_PLAYER_TURN":
                offered = list(json.loads(data)["context"]["moves"])
                move_id = offered[rngs[conn].randrange(len(offered))]
                now += 0.0013
                played += 1
                body = {
                    "message": "EXECUTE_MOVE",
                    "player_id": players[conn],
                    "context": {"move_id": move_id},
                }
                message = json.dumps(body, separators=(",", ":"))
                started = time.process_time()
                effects = service.received(conn, message, now)
                spent += time.process_time() - started
                take(effects)
            elif kind == b"GAME_COMPLETED":
                games += 1
                advertise(conn)
    return Result(
        spent / max(played, 1) * 1e6, games, played, records, digest.hexdigest()[:16], rows.hexdigest()[:16]
    )


def measure(moves: int, clients: int, rounds: int) -> dict[str, list[float]]:
    """CPU per client move without and with records, ``rounds`` times each (the first hashes
    the records too, and is not timed: it warms the caches)."""
    figures: dict[str, list[float]] = {"without records": [], "with records": []}
    for name, record in (("without records", False), ("with records", True)):
        first = play(moves, record, clients, hash_records=True)
        print(
            f"{name}: {first.games} games, {first.moves} client moves, {first.records} records, "
            f"messages {first.digest}, records {first.rows}",
            flush=True,
        )
        for _ in range(rounds):
            figures[name].append(play(moves, record, clients).cpu)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--moves", type=int, default=20000, help="client moves a measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="another installation's bin directory, measured in turn")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one round, for --baseline
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.moves, args.clients, 1)))
        return
    if not args.baseline:
        for name, values in measure(args.moves, args.clients, args.rounds).items():
            shown = ", ".join(f"{value:.1f}" for value in values)
            print(f"CPU per client move {name}: median {statistics.median(values):.1f} us ({shown})")
        return
    builds = {"before": str(Path(args.baseline) / "python"), "after": sys.executable}
    figures: dict[str, dict[str, list[float]]] = {build: {} for build in builds}
    for round_ in range(args.rounds):
        for build, python in builds.items():
            command = [python, __file__, "--json", "--moves", str(args.moves), "--clients", str(args.clients)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            lines = done.stdout.strip().splitlines()
            print(f"round {round_ + 1}, {build}: " + "; ".join(lines[:-1]), flush=True)
            for name, values in json.loads(lines[-1]).items():
                figures[build].setdefault(name, []).extend(values)
    for name in figures["after"]:
        before, after = statistics.median(figures["before"][name]), statistics.median(figures["after"][name])
        print(
            f"CPU per client move {name}: after {after:.1f} us, before {before:.1f} us (medians of "
            f"{args.rounds}): {after / before:.2f}x"
        )


if __name__ == "__main__":
    main()
