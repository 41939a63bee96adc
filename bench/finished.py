"""A page of finished games (the admin's list, GET /api/games) as the store reads it, against
the statement it replaced, on one SQLite store with many finished games.

The baseline is the former statement, run in the same process on a second store with the same
rows and the indexes of schema version 8 (by state, by status): every state at once (``state
IN (...)``), which the planner answered by reading and sorting every finished game of the
table (for /async games, which had no such list before, the same statement over the index by
status). The store's own reads take a range of the index on (state, finished, id) (or (status,
updated, id) for /async games) per state, from its newest end (schema version 9).

    .venv/bin/python bench/finished.py [--games 200000] [--pages 20]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parlour.storage.migrations import FINISHED_STATES
from parlour.storage.records import ASYNC_FINISHED_STATUSES
from parlour.storage.sqlite import SQLiteStore

PAGE = 50


def fill(store: SQLiteStore, games: int, seed: int) -> None:
    """``games`` finished games of the other protocols and as many ended /async games, with a
    few live ones of each, in one transaction."""
    rng = random.Random(seed)
    cur = store.cursor()
    cur.execute("BEGIN")
    seats = '[{"handle": "ann", "robot": false, "state": "PLAYING"}]'
    cur.executemany(
        "INSERT INTO games (id, protocol, game, name, state, created, last_active, started, finished, "
        "seed, moves, config, seats, result) VALUES (?, ?, ?, 'g', ?, 0, 0, 0, ?, 1, 0, '{}', ?, NULL)",
        [
            (f"g{n:09}", protocol, protocol, rng.choice(FINISHED_STATES), float(n), seats)
            for n in range(games)
            for protocol in [rng.choice(("apologies", "fish", "tsuro"))]
        ],
    )
    cur.executemany(
        "INSERT INTO async_games (id, game_type, status, created, updated, doc) VALUES (?, 'fish', ?, 0, ?, ?)",
        [(n, rng.choice(ASYNC_FINISHED_STATUSES), float(n), bytes(300)) for n in range(1, games + 1)],
    )
    cur.execute("COMMIT")


def timed(call: Callable[[], Any], pages: int) -> float:
    """Seconds per call, after one call to warm the cache."""
    call()
    started = time.perf_counter()
    for _ in range(pages):
        call()
    return (time.perf_counter() - started) / pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000, help="finished games of each table")
    parser.add_argument("--pages", type=int, default=20, help="pages read per measurement")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "finished.db")
        former = SQLiteStore(Path(folder) / "former.db")
        try:
            fill(store, args.games, args.seed)
            fill(former, args.games, args.seed)
            for statement in (
                "DROP INDEX games_by_state_finished",
                "CREATE INDEX games_by_state ON games (state)",
                "DROP INDEX async_games_by_status_updated",
                "CREATE INDEX async_games_by_status ON async_games (status)",
            ):
                former.cursor().execute(statement)
            states = ", ".join("?" for _ in FINISHED_STATES)
            statuses = ", ".join("?" for _ in ASYNC_FINISHED_STATUSES)
            middle = (args.games / 2, "g")
            cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
                (
                    "games, first page",
                    lambda: former._read(
                        f"SELECT id FROM games WHERE state IN ({states}) ORDER BY finished DESC, id DESC LIMIT ?",
                        (*FINISHED_STATES, PAGE),
                    ),
                    lambda: store.list_games(limit=PAGE),
                ),
                (
                    "games, a page half-way",
                    lambda: former._read(
                        f"SELECT id FROM games WHERE state IN ({states}) AND (finished < ? OR "
                        "(finished = ? AND id < ?)) ORDER BY finished DESC, id DESC LIMIT ?",
                        (*FINISHED_STATES, middle[0], middle[0], middle[1], PAGE),
                    ),
                    lambda: store.list_games(limit=PAGE, before=middle),
                ),
                (
                    "/async games, first page",
                    lambda: former._read(
                        f"SELECT id FROM async_games WHERE status IN ({statuses}) "
                        "ORDER BY updated DESC, id DESC LIMIT ?",
                        (*ASYNC_FINISHED_STATUSES, PAGE),
                    ),
                    lambda: store.ended_async_games(PAGE),
                ),
            ]
            print(f"{args.games:,} finished games in each table, pages of {PAGE}")
            for label, before, now in cases:
                old, new = timed(before, args.pages), timed(now, args.pages)
                print(
                    f"{label:26} before {old * 1000:8.2f} ms  now {new * 1000:6.2f} ms  {old / new:7.1f}x faster"
                )
        finally:
            store.close()
            former.close()


if __name__ == "__main__":
    main()
