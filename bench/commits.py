"""What one commit of the writer process costs SQLite, in-process: CPU time per stored move and
WAL pages per commit, moves in runs (a row a game and commit, schema version 11: the store's
layout) against a row a move (the layout before it), the build's own write path otherwise.

The commits are shaped like those of ``bench/server.py``: ``--games`` Apologies games in
progress, each commit four moves (a client's and its three robots') of ``--touched`` of them, a
snapshot of a game every 32 of its moves, and a game that reaches 280 moves finished and
replaced. At 100 clients the server commits about 150 moves of 37 games at a time; at 20, about
36 moves of 9. Then the WAL pages of the runs' commits and of the rows' by b-tree (``dbstat``).

Variants, each written one row a statement (the writer process) unless said:

- runs, rows grouped into multi-row statements (the server's own connection);
- runs (the writer process);
- runs without the trigger that refuses a move stored twice (what that check costs);
- runs in a ``WITHOUT ROWID`` table (the rows in the key's b-tree: no table b-tree beside it);
- a row a move (the layout before version 11: its moves written to ``moves``);
- the bound: a row a move in a ``moves`` table without the index of its key.

    .venv/bin/python bench/commits.py [--games 100] [--touched 37] [--commits 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import struct
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, cast

from msgspec.structs import astuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parlour.storage import GameRow, MoveRow, Record, SeatRow
from parlour.storage.records import GameSnapshotRow
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.tables import INSERT, MOVES, WRITES, Write

MOVES_PER_GAME = 280
WAL_HEADER, FRAME_HEADER = 32, 24


class Load:
    """Commits of moves of the games in progress, the same for every store of a round."""

    def __init__(self, games: int, touched: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.touched = touched
        self.made = 0
        self.games = [self.new_game() for _ in range(games)]
        self.moves = dict.fromkeys((game.id for game in self.games), 0)

    def new_game(self) -> GameRow:
        self.made += 1
        return GameRow(
            id=str(uuid.UUID(int=self.rng.getrandbits(128))),
            protocol="apologies",
            game="apologies",
            name=f"game {self.made}",
            state="PLAYING",
            created=1.0,
            last_active=1.0,
            seed=self.made,
            started=1.0,
            config={"options": {"mode": "STANDARD"}, "players": 4, "turn_secret": "ab" * 16},
            seats=[SeatRow(f"player{seat}", seat > 0, "PLAYING") for seat in range(4)],
        )

    def commit(self) -> list[Record]:
        records: list[Record] = []
        for index in self.rng.sample(range(len(self.games)), self.touched):
            game = self.games[index]
            for _ in range(4):
                seq = self.moves[game.id]
                self.moves[game.id] = seq + 1
                records.append(MoveRow(game.id, seq, seq % 4, "move", self.rng.randrange(6), 1000.0 + seq))
                if (seq + 1) % 32 == 0:
                    # As big as an Apologies snapshot: the random source's 2.5 KB, the state, the times.
                    records.append(GameSnapshotRow(game.id, seq + 1, 1, self.rng.randbytes(3000 + 9 * seq)))
            if self.moves[game.id] >= MOVES_PER_GAME:
                records.append(_finished(game))
                self.games[index] = fresh = self.new_game()
                self.moves[fresh.id] = 0
                records.insert(0, fresh)
        return records


def _finished(game: GameRow) -> GameRow:
    fields = {name: getattr(game, name) for name in game.__struct_fields__}
    return GameRow(**{**fields, "state": "COMPLETED", "finished": 2.0, "moves": MOVES_PER_GAME})


#: The ``moves`` table of the bound: without the index of its key.
UNINDEXED = (
    "CREATE TABLE moves (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
    "seq INTEGER NOT NULL, seat INTEGER NOT NULL, kind VARCHAR(16) NOT NULL, "
    "choice INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL)"
)
#: ``move_runs`` as version 11 makes it (its trigger apart), the rows in the key's b-tree.
WITHOUT_ROWID = (
    "CREATE TABLE move_runs (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
    "seq INTEGER NOT NULL, count INTEGER NOT NULL CHECK (count BETWEEN 1 AND 64), doc BLOB NOT NULL, "
    "PRIMARY KEY (game_id, seq)) WITHOUT ROWID"
)
#: Layouts of moves whose commits write each move as a row of ``moves``.
ROWS = ("rows", "unindexed")


def open_store(folder: Path, name: str, grouped: bool, layout: str = "") -> SQLiteStore:
    """``layout``: "" (the store's: runs), "untriggered" (runs, without the trigger that keeps a
    game's runs in order), "without rowid" (runs in a WITHOUT ROWID table), "rows" (a row a move
    in ``moves``, the layout before version 11) or "unindexed" (the same without the key's
    index)."""
    # The writer process's settings (storage/pipe.py): no checkpoints in its commits.
    store = SQLiteStore(folder / f"{name}.db", autocheckpoint=False, check=False, group_rows=grouped)
    if layout == "unindexed":
        store.db.executescript(f"PRAGMA foreign_keys = OFF; BEGIN; DROP TABLE moves; {UNINDEXED}; COMMIT")
    elif layout == "untriggered":
        store.db.execute("DROP TRIGGER move_runs_follow")
    elif layout == "without rowid":
        trigger = store.db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'move_runs_follow'"
        ).fetchone()[0]
        store.db.executescript(
            f"PRAGMA foreign_keys = OFF; BEGIN; DROP TABLE move_runs; {WITHOUT_ROWID}; {trigger}; COMMIT"
        )
    store.db.execute("PRAGMA foreign_keys = ON")
    return store


def wal_pages(store: SQLiteStore) -> list[int]:
    """The page number of every frame in the store's WAL."""
    data = Path(f"{store.path}-wal").read_bytes()
    size = int(store.db.execute("PRAGMA page_size").fetchone()[0]) + FRAME_HEADER
    return [
        struct.unpack_from(">I", data, start)[0] for start in range(WAL_HEADER, len(data) - size + 1, size)
    ]


#: How the build before version 11 wrote a move: a row of ``moves``, inserted.
_ROW_A_MOVE = Write(MOVES, INSERT, astuple)


def commit_rows(store: SQLiteStore, records: list[Record]) -> None:
    """The layout before version 11: each move a row of ``moves``, through the same write path
    (storage/writes.py) with that version's declaration of moves put back for the commit."""
    writes = cast(dict[type[Any], Write], WRITES)
    runs = writes[MoveRow]
    writes[MoveRow] = _ROW_A_MOVE
    try:
        store.commit(records)
    finally:
        writes[MoveRow] = runs


def commit(store: SQLiteStore, layout: str, records: list[Record]) -> None:
    if layout in ROWS:
        commit_rows(store, records)
    else:
        store.commit(records)


def measure(store: SQLiteStore, layout: str, commits: list[list[Record]]) -> tuple[float, float]:
    """CPU time per stored move (us) and WAL pages per commit."""
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    moves = sum(1 for batch in commits for record in batch if type(record) is MoveRow)
    started = time.process_time()
    for batch in commits:
        commit(store, layout, batch)
    cpu = time.process_time() - started
    return cpu / moves * 1e6, len(wal_pages(store)) / len(commits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--touched", type=int, default=37, help="games with moves in each commit")
    parser.add_argument("--commits", type=int, default=300, help="measured commits a round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    variants = {
        "runs, grouped": (True, ""),
        "runs": (False, ""),
        "runs, no trigger": (False, "untriggered"),
        "runs, without rowid": (False, "without rowid"),
        "a row a move": (False, "rows"),
        "bound: no key index": (False, "unindexed"),
    }
    base_name = "a row a move"
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="parlour-commits-") as tmp:
        for round_ in range(args.rounds):
            folder = Path(tmp) / str(round_)
            folder.mkdir()
            stores = {
                name: open_store(folder, str(i), *flags) for i, (name, flags) in enumerate(variants.items())
            }
            load = Load(args.games, args.touched, args.seed + round_)
            first = load.games[:]
            warm = [load.commit() for _ in range(args.commits)]
            measured = [load.commit() for _ in range(args.commits)]
            for name, store in stores.items():
                layout = variants[name][1]
                store.commit(first)
                for batch in warm:  # a history of finished games under the games in progress
                    commit(store, layout, batch)
                results[name].append(measure(store, layout, measured))
            if round_ == args.rounds - 1:
                for name in ("runs", base_name):
                    store = stores[name]
                    owner = dict(store.db.execute("SELECT pageno, name FROM dbstat").fetchall())
                    counted = collections.Counter(owner.get(page, "?") for page in wal_pages(store))
                    shown = ", ".join(
                        f"{table} {count / args.commits:.1f}" for table, count in counted.most_common(6)
                    )
                    print(f"WAL pages per commit by b-tree, {name}: {shown}")
            for store in stores.values():
                store.close()
    moves = sum(1 for batch in measured for record in batch if type(record) is MoveRow) / args.commits
    print(
        f"{args.games} games in progress, {moves:.0f} moves of {args.touched} games a commit, {args.rounds} rounds:"
    )
    base = statistics.median(cpu for cpu, _ in results[base_name])
    for name, values in results.items():
        cpus = sorted(cpu for cpu, _ in values)
        pages = statistics.median(page for _, page in values)
        print(
            f"{name:20s} CPU per move {cpus[0]:.2f}-{cpus[-1]:.2f} us (median {statistics.median(cpus):.2f}, "
            f"{statistics.median(cpus) / base:.2f}x a row a move), WAL pages per commit {pages:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
