"""Restart benchmark: how long Parlour takes to come back with a full store.

Builds one SQLite store for the run (in a temporary directory, removed at the end) holding:

- finished games (default 10,000): 60% Apologies, 20% Fish, 20% Tsuro, about 5% of each cut short
  (Apologies CANCELLED, tables ABORTED). They are clones of a pool of games really played with the
  rules plugins and robots: each clone keeps its original's seed and moves under a new id, times and
  human handle, so every stored game still replays;
- Apologies games in progress (default 1,000), one registered human each (seat 0) against three
  greedy robots, played through the lobby itself (its own records: player, game, moves) with
  random human moves to about half of a game, and stopped on the human's turn (a pending turn with
  its move ids).

Rows are written through SQLiteStore.commit in batches. Then the restart is timed two ways, each
on the full store and, as a baseline, on an empty store (so the figure reads as a ratio too):

a. in-process: open the store, load_live, and restore every service (Apologies, Fish, Tsuro) the
   way parlour.app._restore does; median of --repeat runs, split into open / load / restore;
b. end to end: ``parlour serve --store FILE`` as a subprocess on free loopback ports, from spawn
   until ``GET /healthz`` answers with the restored players and games; median of --repeat runs,
   with the restore time the server logs itself.

Target: < 2 s with 10,000 finished games and 1,000 games in progress.

    python bench/restart.py [--finished 10000] [--playing 1000] [--pool 200] [--repeat 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from random import Random
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.processes import BIN, free_port, started

import parlour.core.lobby
from parlour.core.durable import encode_options
from parlour.core.events import Event
from parlour.core.ids import IdSource, new_id
from parlour.core.ledger import Ledger
from parlour.core.lobby import Lobby
from parlour.core.records import GameState, Visibility
from parlour.games.apologies.model import Mode
from parlour.games.registry import plugin
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.apologies_ws.service import ROBOT_HANDLES
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.robots.registry import robot
from parlour.settings import Settings
from parlour.storage import MOVE, GameRow, MoveRow, Record, SeatRow
from parlour.storage.sqlite import SQLiteStore

TARGET_SECONDS = 2.0
HOUR, DAY = 3600.0, 86400.0
#: Rows per SQLiteStore.commit while building the store.
BATCH_RECORDS = 50_000
#: How the finished games split between the protocols, and how many of them were cut short.
SHARES = {"apologies": 0.6, "fish": 0.2, "tsuro": 0.2}
CUT_SHORT = 0.05
RESTORED = re.compile(r"(\d+) players and (\d+) games in progress restored in ([0-9.]+) s")


class Quiet:
    """The lobby's sink while the store is built: nobody is connected, every event is dropped."""

    def send(self, conns: Any, event: Event) -> None:
        pass

    def close(self, conn: Any, code: int, reason: str) -> None:
        pass


Game = tuple[GameRow, list[MoveRow]]


# ---------------------------------------------------------------------------------------------
# Building the store


def lobby_for(seed: int) -> Lobby:
    lobby = Lobby(
        Settings(robot="greedy"), Random(seed), Quiet(), "apologies", ROBOT_HANDLES, ids=IdSource(seed)
    )
    lobby.journal.recording = True
    return lobby


def play_apologies(
    lobby: Lobby, conn: int, handle: str, now: float, pick: Random, stop: int | None
) -> tuple[list[Record], bool]:
    """One Apologies game through the lobby: a human (random moves) and three robots, played to
    the end, or until at least ``stop`` moves are played (always stopped on the human's turn).
    Returns (the lobby's records of the game, whether it is still being played)."""
    player = lobby.handles.get(handle) or lobby.register(conn, handle, now)
    game = lobby.advertise(
        player, f"{handle}'s game", {"mode": Mode.STANDARD}, 4, Visibility.PRIVATE, [], now
    )
    lobby.start(player, now)
    while game.state is GameState.PLAYING and (stop is None or len(game.times) - 1 < stop):
        now += pick.uniform(0.5, 4.0)
        lobby.execute(player, pick.choice(list(game.pending)), now)
    return lobby.journal.take(), game.state is GameState.PLAYING


def apologies_pool(size: int, seed: int, now: float) -> list[Game]:
    """Whole Apologies games as the lobby stores them."""
    lobby, pick, pool = lobby_for(seed), Random(seed + 1), []
    for index in range(size):
        records, _ = play_apologies(lobby, index + 1, f"pool{index}", now, pick, None)
        game = next(r for r in records if isinstance(r, GameRow))
        pool.append((game, [r for r in records if isinstance(r, MoveRow)]))
    return pool


def table_pool(protocol: str, size: int, seed: int, now: float) -> list[Game]:
    """Whole Fish or Tsuro tables as their services store them (robots play random moves)."""
    rules, chooser, pick = plugin(protocol), robot(protocol, "random"), Random(seed)
    pool = []
    for number in range(1, size + 1):
        if protocol == "fish":
            seats = pick.choice((2, 2, 3, 4))
            humans = pick.randint(1, seats)
            # A robot's seat has age 0, as the service seats it.
            ages = [pick.randint(8, 70) if i < humans else 0 for i in range(seats)]
            options: dict[str, Any] = {"ages": ages}
            rows = [
                SeatRow(f"player (age {age})", False, "PLAYING", extra={"age": age})
                if i < humans
                else SeatRow("robot", True, "PLAYING", extra={"age": age})
                for i, age in enumerate(ages)
            ]
        else:
            seats = pick.choice((3, 3, 4, 5))
            options = {"deal": "cyclic"}
            humans = pick.randint(1, seats)
            rows = [
                SeatRow(f"player{pick.randrange(10_000)}", False, "PLAYING")
                if i < humans
                else SeatRow(f"robot {i}", True, "PLAYING")
                for i in range(seats)
            ]
        game_seed = pick.getrandbits(63)
        game_id = new_id(IdSource(pick.getrandbits(64)))  # reproducible, like the rest
        rng, at = Random(game_seed), now
        state = rules.new_game(seats, options, rng)
        moves: list[MoveRow] = []
        while (outcome := rules.outcome(state)) is None:
            seat = rules.to_move(state)
            assert seat is not None
            legal = rules.legal_moves(state, seat)
            move = chooser.choose(state, seat, legal, pick)
            at += pick.uniform(0.2, 5.0)
            moves.append(MoveRow(game_id, len(moves), seat, MOVE, list(legal).index(move), at))
            state = rules.apply(state, move, rng)
        row = GameRow(
            id=game_id,
            protocol=protocol,
            game=protocol,
            name=f"{protocol} table {number}",
            state="COMPLETED",
            created=now - 5.0,
            last_active=at,
            seed=game_seed,
            moves=len(moves),
            started=now,
            finished=at,
            config={"options": encode_options(options)},
            seats=rows,
            result={"winners": list(outcome.winners), "reason": outcome.reason},
        )
        pool.append((row, moves))
    return pool


def clone(source: Game, at: float, rng: Random, short: bool) -> Game:
    """A finished game like ``source`` (same seed and moves, so it replays) under a new id,
    started at ``at``, its humans renamed; ``short``: cancelled or aborted half-way."""
    row, moves = source
    game_id, shift = new_id(IdSource(rng.getrandbits(64))), at - (row.started or row.created)
    if short and moves:
        moves = moves[: rng.randrange(len(moves))]
    copies = [MoveRow(game_id, m.seq, m.seat, m.kind, m.choice, m.at + shift) for m in moves]
    finished = (copies[-1].at if copies else at) + 1.0
    seats = [
        seat
        if seat.robot or row.protocol == "fish"
        else SeatRow(f"user{rng.randrange(2000)}", False, seat.state)
        for seat in row.seats
    ]
    config = dict(row.config)
    if row.protocol == "apologies":
        config["advertiser"] = seats[0].handle
    state, result = row.state, row.result
    if short:
        if row.protocol == "apologies":
            state, result = "CANCELLED", {"reason": "CANCELLED", "comment": f"Player {seats[0].handle} quit"}
        else:
            state, result = "ABORTED", {"reason": "ABORTED", "comment": "the server stopped during the game"}
    copy = msgspec.structs.replace(
        row,
        id=game_id,
        created=row.created + shift,
        started=at,
        last_active=finished,
        finished=finished,
        moves=len(copies),
        state=state,
        result=result,
        seats=seats,
        config=config,
    )
    return copy, copies


def finished_games(count: int, pool: int, seed: int, now: float) -> Iterator[list[Record]]:
    """The finished games' rows, one game at a time, spread over the last week."""
    pools = {
        "apologies": apologies_pool(pool, seed, now - 8 * DAY),
        "fish": table_pool("fish", pool, seed + 2, now - 8 * DAY),
        "tsuro": table_pool("tsuro", max(1, pool // 2), seed + 3, now - 8 * DAY),
    }
    rng = Random(seed + 4)
    kinds = [kind for kind, share in SHARES.items() for _ in range(round(count * share))][:count]
    kinds += ["apologies"] * (count - len(kinds))
    rng.shuffle(kinds)
    for index, kind in enumerate(kinds):
        at = now - 7 * DAY + index * (7 * DAY - 2 * HOUR) / count
        row, moves = clone(rng.choice(pools[kind]), at, rng, rng.random() < CUT_SHORT)
        yield [row, *moves]


def live_games(count: int, seed: int, now: float) -> Iterator[list[Record]]:
    """Apologies games in progress, each with its registered human to move."""
    lobby, pick = lobby_for(seed + 5), Random(seed + 6)
    for index in range(count):
        at = now - HOUR + index * (HOUR / 2) / count
        target = pick.randint(60, 180)  # about half of a game (about 130 to 400 moves)
        while True:
            records, playing = play_apologies(lobby, index + 1, f"player{index}", at, pick, target)
            if playing:
                yield records
                break
            # Over before it got there: drop the game (its player row stays) and play another.
            yield [r for r in records if not isinstance(r, GameRow | MoveRow)]


def build_store(path: Path, finished: int, playing: int, pool: int, seed: int) -> tuple[dict[str, Any], int]:
    """The store's check report once it is built, and how many moves its live games hold."""
    now = time.time()
    store = SQLiteStore(path)
    batch: list[Record] = []
    live_moves = 0

    def add(records: list[Record]) -> None:
        nonlocal batch
        batch.extend(records)
        if len(batch) >= BATCH_RECORDS:
            store.commit(batch)
            batch = []

    for records in finished_games(finished, pool, seed, now):
        add(records)
    for records in live_games(playing, seed, now):
        live_moves += sum(1 for r in records if isinstance(r, MoveRow))
        add(records)
    store.commit(batch)
    # The last run was alive a minute ago: restored idle clocks are shifted by the downtime.
    store.heartbeat(now - 60.0)
    report = store.check()
    store.close()
    if not report["ok"]:
        raise RuntimeError(f"the generated store fails its check: {report}")
    return report, live_moves


# ---------------------------------------------------------------------------------------------
# Restarting


def restore_in_process(path: Path) -> tuple[dict[str, float], int, int]:
    """Open, load_live and restore every service as parlour.app does; the phases' seconds and
    the Apologies players and games restored."""
    settings = Settings(store=str(path))
    # The services exist before the store is read, as in parlour.app: not part of the figure.
    ledger = Ledger(settings.max_in_progress_games)
    apologies = ApologiesService(settings, Random(), ledger)
    services: list[ApologiesService | FishService | TsuroService] = [
        apologies,
        FishService(settings, Random(), ledger=ledger),
        TsuroService(settings, Random(), ledger),
    ]
    started_at = time.perf_counter()
    store = SQLiteStore(path, settings.store_sync)
    opened = time.perf_counter()
    snapshot = store.load_live()
    loaded = time.perf_counter()
    now = time.time()
    for service in services:
        service.restore(snapshot, now)
    done = time.perf_counter()
    store.close()
    lobby = apologies.lobby
    # Every restored game stopped on its human's turn: no robot had to move at the restart.
    waiting = sum(1 for game in lobby.games.values() if game.pending_seat is not None)
    if waiting != len(lobby.games):
        raise RuntimeError(f"{len(lobby.games) - waiting} restored games have no pending turn")
    phases = {
        "open": opened - started_at,
        "load": loaded - opened,
        "restore": done - loaded,
        "total": done - started_at,
    }
    return phases, len(lobby.players), len(lobby.games)


def healthz(port: int, timeout: float) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/healthz")
        answer: dict[str, Any] = json.loads(connection.getresponse().read())
        return answer
    finally:
        connection.close()


def restart_end_to_end(path: Path, log: Path, players: int, games: int) -> tuple[float, float, float | None]:
    """Seconds from spawning ``parlour serve`` to /healthz answering with the restored counts,
    seconds to its first answer (whatever the counts), and the restore time the server logged.
    /healthz is polled until the counts are the stored ones: the server may answer before it
    has restored the store."""
    ports: list[int] = []
    while len(ports) < 3:
        port = free_port()
        if port not in ports:
            ports.append(port)
    command = [
        str(BIN / "parlour"),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(ports[0]),
        "--fish-port",
        str(ports[1]),
        "--tsuro-port",
        str(ports[2]),
        "--store",
        str(path),
        "--log-level",
        "INFO",
    ]
    first: float | None = None
    with log.open("wb") as output:
        begun = time.perf_counter()
        with started(command, output) as process:
            deadline = begun + 60
            while True:
                try:
                    stats = healthz(ports[0], timeout=30)
                    if first is None:
                        first = time.perf_counter() - begun
                    if (stats.get("players"), stats.get("games")) == (players, games):
                        break
                except (ConnectionError, http.client.HTTPException, OSError):
                    if process.poll() is not None:
                        raise RuntimeError(
                            f"the server exited with {process.returncode}: see {log}"
                        ) from None
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"no /healthz with {players} players and {games} games in 60 s")
                time.sleep(0.005)
            elapsed = time.perf_counter() - begun
    found = RESTORED.search(log.read_text(encoding="utf-8", errors="replace"))
    return elapsed, first, float(found.group(3)) if found else None


def repeated(times: int, run: Callable[[], Any]) -> list[Any]:
    return [run() for _ in range(times)]


def verdict(seconds: float) -> str:
    return "PASS" if seconds < TARGET_SECONDS else "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, default=10_000, help="finished games in the store")
    parser.add_argument("--playing", type=int, default=1_000, help="Apologies games in progress")
    parser.add_argument("--pool", type=int, default=200, help="distinct games played to clone from")
    parser.add_argument("--repeat", type=int, default=3, help="restarts timed per measure")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    compiled = not str(parlour.core.lobby.__file__).endswith(".py")
    print(f"compiled (mypyc) modules: {'yes' if compiled else 'no, plain Python'}")

    with tempfile.TemporaryDirectory(prefix="parlour-restart-") as tmp:
        full, empty = Path(tmp) / "full.db", Path(tmp) / "empty.db"
        began = time.perf_counter()
        report, live_moves = build_store(full, args.finished, args.playing, args.pool, args.seed)
        built = time.perf_counter() - began
        SQLiteStore(empty).close()
        counts, states = report["counts"], report["games_by_state"]
        size = sum(f.stat().st_size for f in Path(tmp).glob("full.db*")) / 1e6
        print(
            f"store: {counts['games']} games ({', '.join(f'{s} {n}' for s, n in states.items())}), "
            f"{counts['players']} players, {counts['moves']} moves, {size:.0f} MB; built and checked in {built:.1f} s"
        )
        if args.playing:
            print(
                f"games in progress: {live_moves / args.playing:.0f} moves played on average, to replay at a restart"
            )

        results: dict[str, dict[str, float]] = {}
        for name, path in (("full", full), ("empty", empty)):
            runs = repeated(args.repeat, partial(restore_in_process, path))
            players, games = runs[0][1], runs[0][2]
            # The run of median total time, with its own phases (so that they add up).
            phases = sorted((run[0] for run in runs), key=lambda phase: phase["total"])[len(runs) // 2]
            results[name] = phases
            print(
                f"in-process restart, {name} store ({players} players, {games} games restored), "
                f"median of {args.repeat}: {phases['total']:.3f} s "
                f"(open {phases['open']:.3f}, load_live {phases['load']:.3f}, restore {phases['restore']:.3f})"
            )
        full_t, empty_t = results["full"]["total"], results["empty"]["total"]
        print(
            f"in-process restart: {full_t:.3f} s, target < {TARGET_SECONDS:.0f} s: {verdict(full_t)}; "
            f"empty store {empty_t * 1000:.1f} ms, ratio full/empty {full_t / empty_t:.0f}x"
        )

        ends: dict[str, float] = {}
        for name, path, players, games in (
            ("full", full, args.playing, args.playing),
            ("empty", empty, 0, 0),
        ):
            log = Path(tmp) / f"serve-{name}.log"
            runs = repeated(args.repeat, partial(restart_end_to_end, path, log, players, games))
            ends[name] = statistics.median(run[0] for run in runs)
            early = statistics.median(run[1] for run in runs)
            logged = [run[2] for run in runs if run[2] is not None]
            said = f"; the server logs restored in {statistics.median(logged):.3f} s" if logged else ""
            print(
                f"end-to-end restart, {name} store (spawn to /healthz with {players} players, {games} games), "
                f"median of {args.repeat}: {ends[name]:.3f} s (first /healthz answer at {early:.3f} s{said})"
            )
        print(
            f"end-to-end restart: {ends['full']:.3f} s, target < {TARGET_SECONDS:.0f} s: {verdict(ends['full'])}; "
            f"empty store {ends['empty']:.3f} s, ratio full/empty {ends['full'] / ends['empty']:.2f}x, "
            f"restore cost {ends['full'] - ends['empty']:.3f} s"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
