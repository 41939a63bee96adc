"""Restart benchmark: how long Parlour takes to come back with a full store.

Builds SQLite stores for the run (in a temporary directory, removed at the end), one per size of
--playing (default 1,000 and 10,000 games in progress), each holding:

- finished games (default 10,000): 60% Apologies, 20% Fish, 20% Tsuro, about 5% of each cut short
  (Apologies CANCELLED, tables ABORTED). They are clones of a pool of games really played with the
  rules plugins and robots: each clone keeps its original's seed and moves under a new id, times and
  human handle, so every stored game still replays;
- Apologies games in progress, one registered human each (seat 0) against three greedy robots,
  played through the lobby itself (its own records: player, game, moves, and a snapshot of the
  game's state every 32 moves) with random human moves to about half of a game, and stopped on
  the human's turn (a pending turn with its move ids).

Rows are written through SQLiteStore.commit in batches. Each store is also copied without its
snapshots: the store as it was before snapshots, whose games replay every move (the baseline of
the same run). Then the restart is timed two ways, on every store and on an empty one:

a. in-process: open the store, load_live, and restore every service (Apologies, Fish, Tsuro) the
   way parlour.app._restore does (the garbage collector tuned as ``parlour serve`` tunes it); median of --repeat runs, split into open (the store's integrity
   check and migrations) / read rows (load_live) / rebuild games (the services' restore);
b. end to end: ``parlour serve --store FILE`` as a subprocess on free loopback ports, from spawn
   until ``GET /healthz`` answers with the restored players and games; median of --repeat runs,
   with the restore time the server logs itself.

Targets, with 10,000 finished games and 1,000 games in progress: < 1 s in-process, < 1.5 s from
spawn to /healthz. The restore's cost of a game must not grow with its moves: the larger size
shows how the whole grows with the number of games.

    python bench/restart.py [--finished 10000] [--playing 1000 10000] [--pool 200] [--repeat 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import re
import shutil
import sqlite3
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
from parlour.cli import GC_THRESHOLDS
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
from parlour.storage import MOVE, GameRow, GameSnapshotRow, MoveRow, Record, SeatRow
from parlour.storage.runs import pack
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.tables import MOVE_RUNS
from parlour.storage.writes import write_records

#: Targets at the first size of --playing (1,000 games in progress by default).
TARGET_IN_PROCESS, TARGET_END_TO_END = 1.0, 1.5
#: Limits high enough for the largest store (the defaults allow 10,000 players, 5,000 games in
#: progress): the benchmark measures restoring, not refusing.
LIMITS: dict[str, Any] = {"max_players": 100_000, "max_games": 200_000, "max_in_progress_games": 100_000}
HOUR, DAY = 3600.0, 86400.0
#: Rows per SQLiteStore.commit while building the store.
BATCH_RECORDS = 50_000
#: Moves a run in the stores built (a client move and its three robot moves).
RUN_MOVES = 4
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
        Settings(robot="greedy", **LIMITS),
        Random(seed),
        Quiet(),
        "apologies",
        ROBOT_HANDLES,
        ids=IdSource(seed),
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
            yield [r for r in records if not isinstance(r, GameRow | MoveRow | GameSnapshotRow)]


class Batches:
    """Records committed to a store in batches of BATCH_RECORDS."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.batch: list[Record] = []

    def add(self, records: list[Record]) -> None:
        self.batch.extend(records)
        if len(self.batch) >= BATCH_RECORDS:
            self.flush()

    def flush(self) -> None:
        # The runs of moves a server leaves (schema version 11) are a run a client move (its
        # four moves, at 20 clients), not one of a game's whole history in a batch like this:
        # the moves go in runs of RUN_MOVES, the other records as the store writes them.
        moves = [msgspec.structs.astuple(r) for r in self.batch if type(r) is MoveRow]
        others = [r for r in self.batch if type(r) is not MoveRow]
        runs = [
            run for start in range(0, len(moves), RUN_MOVES) for run in pack(moves[start : start + RUN_MOVES])
        ]

        def work(cur: Any) -> None:
            write_records(cur, others)
            cur.executemany(f"{MOVE_RUNS.insert}(?, ?, ?, ?)", runs)

        self.store._transaction(work)
        self.batch = []


def build_finished(path: Path, finished: int, pool: int, seed: int, now: float) -> None:
    """A store of finished games only: what every size starts from."""
    store = SQLiteStore(path)
    batches = Batches(store)
    for records in finished_games(finished, pool, seed, now):
        batches.add(records)
    batches.flush()
    store.close()


def build_store(path: Path, base: Path, playing: int, seed: int, now: float) -> tuple[dict[str, Any], int]:
    """A copy of ``base`` with ``playing`` games in progress: its check report once built, and how
    many moves its live games hold."""
    shutil.copyfile(base, path)
    store = SQLiteStore(path)
    batches = Batches(store)
    live_moves = 0
    for records in live_games(playing, seed, now):
        live_moves += sum(1 for r in records if isinstance(r, MoveRow))
        batches.add(records)
    batches.flush()
    # The last run was alive a minute ago: restored idle clocks are shifted by the downtime.
    store.heartbeat(now - 60.0)
    report = store.check()
    store.close()
    if not report["ok"]:
        raise RuntimeError(f"the generated store fails its check: {report}")
    return report, live_moves


def without_snapshots(path: Path, copy: Path) -> None:
    """A copy of the store as it would be without snapshots: every live game replays every move."""
    shutil.copyfile(path, copy)
    db = sqlite3.connect(copy)
    try:
        db.execute("DELETE FROM game_snapshots")
        db.commit()
    finally:
        db.close()


# ---------------------------------------------------------------------------------------------
# Restarting


def restore_in_process(path: Path) -> tuple[dict[str, float], int, int]:
    """Open, load_live and restore every service as parlour.app does; the phases' seconds (and
    the snapshots and moves read, under "snapshots" and "moves") and the Apologies players and
    games restored."""
    settings = Settings(store=str(path), **LIMITS)
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
    # As parlour.app restores: with the cyclic garbage collector paused.
    gc.disable()
    try:
        snapshot = store.load_live()
        loaded = time.perf_counter()
        now = time.time()
        for service in services:
            service.restore(snapshot, now)
        done = time.perf_counter()
    finally:
        gc.enable()
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
        "snapshots": float(len(snapshot.states)),
        "moves": float(sum(len(moves) for moves in snapshot.moves.values())),
        # The most moves replayed for one game, and the most moves one game had played.
        "most_replayed": float(max((len(moves) for moves in snapshot.moves.values()), default=0)),
        "longest": float(max((len(game.times) - 1 for game in lobby.games.values()), default=0)),
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
        *(f"--{name.replace('_', '-')}={value}" for name, value in LIMITS.items()),
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


def verdict(seconds: float, target: float) -> str:
    return "PASS" if seconds < target else "FAIL"


def in_process(name: str, path: Path, repeat: int) -> dict[str, float]:
    runs = repeated(repeat, partial(restore_in_process, path))
    players, games = runs[0][1], runs[0][2]
    # The run of median total time, with its own phases (so that they add up).
    phases: dict[str, float] = sorted((run[0] for run in runs), key=lambda phase: phase["total"])[
        len(runs) // 2
    ]
    per_game = (
        f", {phases['restore'] / games * 1e6:.0f} us a game (at most {phases['most_replayed']:.0f} moves "
        f"replayed for one, of games of up to {phases['longest']:.0f} moves)"
        if games
        else ""
    )
    print(
        f"  in-process, {name} ({players} players, {games} games; read {phases['snapshots']:.0f} snapshots "
        f"and {phases['moves']:.0f} moves), median of {repeat}: {phases['total']:.3f} s = open "
        f"{phases['open']:.3f} + read rows {phases['load']:.3f} + rebuild games {phases['restore']:.3f}{per_game}"
    )
    return phases


def end_to_end(name: str, path: Path, log: Path, games: int, repeat: int) -> float:
    runs = repeated(repeat, partial(restart_end_to_end, path, log, games, games))
    elapsed: float = statistics.median(run[0] for run in runs)
    early = statistics.median(run[1] for run in runs)
    logged = [run[2] for run in runs if run[2] is not None]
    said = f"; the server logs restored in {statistics.median(logged):.3f} s" if logged else ""
    print(
        f"  end to end, {name} (spawn to /healthz with {games} players and games), median of {repeat}: "
        f"{elapsed:.3f} s (first /healthz answer at {early:.3f} s{said})"
    )
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, default=10_000, help="finished games in the store")
    parser.add_argument(
        "--playing",
        type=int,
        nargs="+",
        default=[1_000, 10_000],
        help="Apologies games in progress, per size",
    )
    parser.add_argument("--pool", type=int, default=200, help="distinct games played to clone from")
    parser.add_argument("--repeat", type=int, default=3, help="restarts timed per measure")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    compiled = not str(parlour.core.lobby.__file__).endswith(".py")
    print(f"compiled (mypyc) modules: {'yes' if compiled else 'no, plain Python'}")
    # The collector as `parlour serve` tunes it, so that the in-process restore is the server's.
    gc.set_threshold(*GC_THRESHOLDS)

    with tempfile.TemporaryDirectory(prefix="parlour-restart-") as tmp:
        folder = Path(tmp)
        now = time.time()
        began = time.perf_counter()
        base, empty = folder / "finished.db", folder / "empty.db"
        build_finished(base, args.finished, args.pool, args.seed, now)
        SQLiteStore(empty).close()
        print(f"{args.finished} finished games built in {time.perf_counter() - began:.1f} s")
        print("empty store:")
        empty_in = in_process("empty store", empty, args.repeat)
        empty_end = end_to_end("empty store", empty, folder / "serve-empty.log", 0, args.repeat)
        verdicts = []
        for number, playing in enumerate(args.playing):
            path, plain = folder / f"playing-{playing}.db", folder / f"playing-{playing}-plain.db"
            began = time.perf_counter()
            report, live_moves = build_store(path, base, playing, args.seed, now)
            without_snapshots(path, plain)
            counts, states = report["counts"], report["games_by_state"]
            size = path.stat().st_size / 1e6
            print(
                f"{playing} games in progress, {live_moves / max(1, playing):.0f} moves each on average: "
                f"{counts['games']} games ({', '.join(f'{s} {n}' for s, n in states.items())}), "
                f"{counts['players']} players, {counts['moves']} moves, {counts['game_snapshots']} snapshots, "
                f"{size:.0f} MB; built and checked in {time.perf_counter() - began:.1f} s"
            )
            # The baseline of a larger size is slow (tens of seconds a restart): timed once.
            plain_repeat = args.repeat if number == 0 else 1
            fast = in_process("with snapshots", path, args.repeat)
            slow = in_process("every move replayed (no snapshots)", plain, plain_repeat)
            print(
                f"  in-process: {fast['total']:.3f} s with snapshots against {slow['total']:.3f} s without "
                f"({slow['total'] / fast['total']:.2f}x); rebuilding games {fast['restore']:.3f} s against "
                f"{slow['restore']:.3f} s ({slow['restore'] / fast['restore']:.1f}x)"
            )
            fast_end = end_to_end(
                "with snapshots", path, folder / f"serve-{playing}.log", playing, args.repeat
            )
            slow_end = end_to_end(
                "every move replayed (no snapshots)",
                plain,
                folder / f"serve-{playing}-plain.log",
                playing,
                plain_repeat,
            )
            print(
                f"  end to end: {fast_end:.3f} s with snapshots against {slow_end:.3f} s without "
                f"({slow_end / fast_end:.2f}x); restore cost over an empty store {fast_end - empty_end:.3f} s "
                f"against {slow_end - empty_end:.3f} s"
            )
            if number == 0:
                verdicts = [
                    f"in-process {fast['total']:.3f} s, target < {TARGET_IN_PROCESS} s: "
                    f"{verdict(fast['total'], TARGET_IN_PROCESS)}",
                    f"end to end {fast_end:.3f} s, target < {TARGET_END_TO_END} s: "
                    f"{verdict(fast_end, TARGET_END_TO_END)}",
                ]
            for name in (path, plain):
                name.unlink()
        print(f"empty store: in-process {empty_in['total'] * 1000:.1f} ms, end to end {empty_end:.3f} s")
        if verdicts:
            print(f"targets at {args.playing[0]} games in progress: " + "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
