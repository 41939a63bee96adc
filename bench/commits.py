"""What one commit of the writer process costs SQLite, in-process: CPU time per stored move and
WAL pages per commit, with rows grouped into multi-row statements (the server's own connection)
against one row a statement (the writer process), the build's own write path in both.

The commits are shaped like those of ``bench/server.py``: ``--games`` Apologies games in
progress, each commit four moves (a client's and its three robots') of ``--touched`` of them, a
snapshot of a game every 32 of its moves, and a game that reaches 280 moves finished and
replaced. At 100 clients the server commits about 150 moves of 37 games at a time; at 20, about
36 moves of 9. Then the WAL pages of the one-row commits by b-tree (``dbstat``).

Three other layouts of moves, measured to choose the next step (none is a store the server
reads; each is written one row a statement):

- a ``moves`` table without the index of its key: the bound of what that index costs;
- moves logged in commit order, unindexed, and copied into the indexed table in bulk every
  ``--flush-every`` commits (each game's range once a flush, not once a commit);
- a row per game and commit: that commit's moves of the game packed into one value, keyed by its
  first move's number (four times fewer rows and index entries).

    .venv/bin/python bench/commits.py [--games 100] [--touched 37] [--commits 300] [--rounds 3]
                                      [--flush-every 100]
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parlour.storage import GameRow, MoveRow, Record, SeatRow
from parlour.storage.records import GameSnapshotRow
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.writes import write_records

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


#: The ``moves`` table of the bounds: without the index of its key.
UNINDEXED = (
    "CREATE TABLE moves (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
    "seq INTEGER NOT NULL, seat INTEGER NOT NULL, kind VARCHAR(16) NOT NULL, "
    "choice INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL)"
)


def open_store(folder: Path, name: str, grouped: bool, layout: str = "") -> SQLiteStore:
    """``layout``: "" (the store's), "unindexed" (moves without their key's index) or "logged"
    (the store's moves table kept as ``moves_indexed``; moves are committed to an unindexed
    ``moves`` and copied into it in bulk by ``flush``)."""
    # The writer process's settings (storage/pipe.py): no checkpoints in its commits.
    store = SQLiteStore(folder / f"{name}.db", autocheckpoint=False, check=False, group_rows=grouped)
    if layout == "unindexed":
        store.db.executescript(f"PRAGMA foreign_keys = OFF; BEGIN; DROP TABLE moves; {UNINDEXED}; COMMIT")
    elif layout == "runs":
        store.db.executescript(
            "PRAGMA foreign_keys = OFF; BEGIN; DROP TABLE moves; CREATE TABLE moves (game_id VARCHAR(64) "
            "NOT NULL REFERENCES games (id) ON DELETE CASCADE, seq INTEGER NOT NULL, moves BLOB NOT NULL, "
            "PRIMARY KEY (game_id, seq)); COMMIT"
        )
    elif layout == "logged":
        store.db.executescript(
            f"PRAGMA foreign_keys = OFF; BEGIN; ALTER TABLE moves RENAME TO moves_indexed; {UNINDEXED}; COMMIT"
        )
    store.db.execute("PRAGMA foreign_keys = ON")
    return store


def flush(store: SQLiteStore) -> None:
    """The logged layout's moves into their index, in its order: each game's range once."""
    store.db.executescript(
        "BEGIN IMMEDIATE; INSERT INTO moves_indexed SELECT * FROM moves ORDER BY game_id, seq; "
        "DELETE FROM moves; COMMIT"
    )


def wal_pages(store: SQLiteStore) -> list[int]:
    """The page number of every frame in the store's WAL."""
    data = Path(f"{store.path}-wal").read_bytes()
    size = int(store.db.execute("PRAGMA page_size").fetchone()[0]) + FRAME_HEADER
    return [
        struct.unpack_from(">I", data, start)[0] for start in range(WAL_HEADER, len(data) - size + 1, size)
    ]


_RUN = struct.Struct("<bbhd")


def commit_runs(store: SQLiteStore, records: list[Record]) -> None:
    """The runs layout: the moves of each game in a commit as one row (its first move's number and
    the moves packed), the other rows as the store writes them, in one transaction."""
    runs: dict[str, list[MoveRow]] = {}
    others: list[Record] = []
    for record in records:
        if type(record) is MoveRow:
            runs.setdefault(record.game_id, []).append(record)
        else:
            others.append(record)
    rows = [
        (game_id, moves[0].seq, b"".join(_RUN.pack(m.seat, m.kind == "move", m.choice, m.at) for m in moves))
        for game_id, moves in runs.items()
    ]

    def work(cur: Any) -> None:
        write_records(cur, others, grouped=False)
        cur.executemany("INSERT INTO moves (game_id, seq, moves) VALUES (?, ?, ?)", rows)

    store._transaction(work)


def measure(store: SQLiteStore, commits: list[list[Record]], flush_every: int = 0) -> tuple[float, float]:
    """CPU time per stored move (us) and WAL pages per commit (with ``flush_every``, the logged
    layout's moves copied into their index after every that many commits)."""
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    moves = sum(1 for batch in commits for record in batch if type(record) is MoveRow)
    started = time.process_time()
    runs = store.db.execute("SELECT 1 FROM pragma_table_info('moves') WHERE name = 'moves'").fetchall()
    for number, batch in enumerate(commits, 1):
        if runs:
            commit_runs(store, batch)
        else:
            store.commit(batch)
        if flush_every and number % flush_every == 0:
            flush(store)
    cpu = time.process_time() - started
    return cpu / moves * 1e6, len(wal_pages(store)) / len(commits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--touched", type=int, default=37, help="games with moves in each commit")
    parser.add_argument("--commits", type=int, default=300, help="measured commits a round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--flush-every", type=int, default=100, help="commits between the logged layout's flushes"
    )
    args = parser.parse_args()
    variants = {
        "grouped": (True, ""),
        "one row": (False, ""),
        "bound: no key index": (False, "unindexed"),
        f"logged, indexed every {args.flush_every}": (False, "logged"),
        "a row per game and commit": (False, "runs"),
    }
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
                flags = variants[name]
                store.commit(first)
                for batch in warm:  # a history of finished games under the games in progress
                    if flags[1] == "runs":
                        commit_runs(store, batch)
                    else:
                        store.commit(batch)
                every = args.flush_every if name.startswith("logged") else 0
                if every:
                    flush(store)
                results[name].append(measure(store, measured, every))
            if round_ == args.rounds - 1:
                store = stores["one row"]
                owner = dict(store.db.execute("SELECT pageno, name FROM dbstat").fetchall())
                counted = collections.Counter(owner.get(page, "?") for page in wal_pages(store))
                shown = ", ".join(
                    f"{name} {count / args.commits:.1f}" for name, count in counted.most_common(6)
                )
                print(f"WAL pages per commit by b-tree, one row a statement: {shown}")
            for store in stores.values():
                store.close()
    moves = sum(1 for batch in measured for record in batch if type(record) is MoveRow) / args.commits
    print(
        f"{args.games} games in progress, {moves:.0f} moves of {args.touched} games a commit, {args.rounds} rounds:"
    )
    base = statistics.median(cpu for cpu, _ in results["grouped"])
    for name, values in results.items():
        cpus = sorted(cpu for cpu, _ in values)
        pages = statistics.median(page for _, page in values)
        print(
            f"{name:20s} CPU per move {cpus[0]:.2f}-{cpus[-1]:.2f} us (median {statistics.median(cpus):.2f}, "
            f"{statistics.median(cpus) / base:.2f}x grouped), WAL pages per commit {pages:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
