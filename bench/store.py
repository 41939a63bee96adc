"""Commits per second of the two stores, in the same run: SQLite (a file) and PostgreSQL (a
throwaway server from Debian's binaries, tests/pg.py, with fsync on as in production).

Each commit is what a busy server's writer commits per event-loop iteration: a few moves of a
running game and the game's row (``--batch`` records), one transaction. Measured for both
``store_sync`` settings: ``normal`` (SQLite's synchronous=NORMAL in WAL mode; PostgreSQL's
synchronous_commit=local, its log flushed at each commit) and ``full`` (an fsync per commit on
SQLite; synchronous_commit=on on PostgreSQL, the same as local without replicas). One
connection, one commit after the other: what one server's writer process does.

    .venv/bin/python bench/store.py [--commits 2000] [--batch 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pg import PostgresServer, missing_reason

from parlour.storage import GameRow, MoveRow, Record, SeatRow, open_store
from parlour.storage.sql import SQLStore


def batches(commits: int, batch: int) -> list[list[Record]]:
    """``commits`` batches of ``batch - 1`` moves and their game's row, over 50 games."""
    out: list[list[Record]] = []
    seq: dict[str, int] = {}
    for n in range(commits):
        game_id = f"game-{n % 50:04d}"
        start = seq.get(game_id, 0)
        seq[game_id] = start + batch - 1
        moves: list[Record] = [
            MoveRow(game_id, start + i, (start + i) % 4, "move", i, 1000.0 + n) for i in range(batch - 1)
        ]
        row = GameRow(
            id=game_id,
            protocol="apologies_ws",
            game="apologies",
            name=f"Game {n % 50}",
            state="PLAYING",
            created=1.0,
            last_active=1000.0 + n,
            started=2.0,
            finished=None,
            seed=12345,
            moves=start + batch - 1,
            config={"mode": "STANDARD"},
            seats=[SeatRow(handle=f"p{i}", robot=False, state="PLAYING") for i in range(4)],
        )
        # The game's row first (moves refer to it), as the runtime's batches have it.
        out.append([row, *moves])
    return out


def measure(store: SQLStore, work: list[list[Record]]) -> float:
    """Commits per second."""
    store.commit(work[0])  # connection warm, tables cached
    started = time.perf_counter()
    for records in work[1:]:
        store.commit(records)
    return (len(work) - 1) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    work = batches(args.commits, args.batch)
    reason = missing_reason()
    server = PostgresServer(fsync=True) if reason is None else None
    results: dict[tuple[str, str], float] = {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            for sync in ("normal", "full"):
                locations = {"sqlite": str(Path(folder) / f"bench-{sync}.db")}
                if server is not None:
                    locations["postgresql"] = server.database()
                for backend, location in locations.items():
                    store = open_store(location, sync)
                    assert isinstance(store, SQLStore)
                    try:
                        results[backend, sync] = rate = measure(store, work)
                    finally:
                        store.close()
                    print(f"{backend:10} sync={sync:6} {rate:8.0f} commits/s ({args.batch} records each)")
    finally:
        if server is not None:
            server.stop()
    if server is None:
        print(f"postgresql: not measured: {reason}")
        return 0
    for sync in ("normal", "full"):
        ratio = results["postgresql", sync] / results["sqlite", sync]
        print(f"sync={sync}: postgresql/sqlite = {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
