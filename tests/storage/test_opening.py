"""Opening an SQLite store: what is refused (and left untouched), and migrations."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.storage import (
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    GameResultRow,
    GameRow,
    MoveRow,
    RatingRow,
    Record,
    SeatRow,
    StoreRefused,
    open_store,
)
from parlour.storage.migrations import APPLICATION, LATEST, MIGRATIONS
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.tables import MOVES
from tests.storage.rows import (
    chat_lines,
    finished_game,
    game_snapshot,
    populate,
    populate_async,
    populate_social,
)


def test_a_new_store_is_created_with_its_folders_at_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "var" / "deep" / "parlour.db"
    store = SQLiteStore(path)
    try:
        assert store.schema_version == LATEST
        assert store.location == str(path)
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        store.close()
    # Opening it again migrates nothing and keeps what it has.
    again = SQLiteStore(path)
    try:
        assert again.schema_version == LATEST
    finally:
        again.close()


def test_open_store_picks_sqlite_for_a_path_and_nothing_for_none(tmp_path: Path) -> None:
    assert open_store("none") is None
    store = open_store(str(tmp_path / "parlour.db"), "full")
    assert isinstance(store, SQLiteStore)
    try:
        assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()
    with pytest.raises(ValueError, match="store_sync"):
        SQLiteStore(tmp_path / "other.db", "sometimes")


# ---------------------------------------------------------------------------------------------
# Refusals: one line naming the file and the problem, and the file exactly as it was.


def _text_file(path: Path) -> None:
    path.write_text("players:\n  alice\n  bob\n")


def _foreign_database(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (number INTEGER PRIMARY KEY, total REAL)")
    db.executemany("INSERT INTO invoices VALUES (?, ?)", [(n, n * 1.5) for n in range(50)])
    db.commit()
    db.close()


def _foreign_meta(path: Path) -> None:
    """A table of the same name, kept by some other application."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE parlour_meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO parlour_meta VALUES ('application', 'teashop'), ('schema_version', '1')")
    db.commit()
    db.close()


def _big_store(path: Path) -> None:
    """A store of many pages (its layout is the same on every run: the rows are)."""
    store = SQLiteStore(path)
    store.commit(
        [
            finished_game(number, finished=float(number), name=f"{number:04} " + "x" * 200)
            for number in range(300)
        ]
    )
    store.close()  # the last connection folds the WAL into the file and removes it


def _corrupt_store(path: Path) -> None:
    _big_store(path)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    assert len(data) // page > 20, "the store should span many pages"
    middle = (len(data) // page // 2) * page
    data[middle : middle + page] = b"\xa5" * page  # no valid b-tree page starts with 0xA5
    path.write_bytes(bytes(data))


def _truncated_store(path: Path) -> None:
    _big_store(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _newer_store(path: Path) -> None:
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE parlour_meta SET value = ? WHERE key = 'schema_version'", (str(LATEST + 1),))
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (_text_file, "not a Parlour store (not an SQLite database)"),
        (_foreign_database, "not a Parlour store (an SQLite database of something else)"),
        (_foreign_meta, "not a Parlour store (no Parlour schema version)"),
        (_corrupt_store, "the file is corrupt"),
        (_truncated_store, "the file is corrupt"),
        (_newer_store, f"schema version {LATEST + 1}, newer than this build's {LATEST}"),
    ],
    ids=["text", "foreign-sqlite", "foreign-meta", "corrupt", "truncated", "newer"],
)
def test_a_file_that_is_not_a_usable_store_is_refused_and_left_untouched(
    tmp_path: Path, make: Callable[[Path], None], problem: str
) -> None:
    path = tmp_path / "parlour.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(StoreRefused) as refused:
        SQLiteStore(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ")
    assert problem in message
    assert "\n" not in message
    assert path.read_bytes() == before
    # Nothing left beside it either (the refused connection was closed, its WAL removed).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parlour.db"]


def test_the_writer_process_opens_without_scanning_the_file_again(tmp_path: Path) -> None:
    """The server checks the whole file when it opens it; the writer process it starts next
    does not read every page again (``check=False``): a page the scan would find damaged, away
    from the schema, is not read when the writer opens."""
    path = tmp_path / "parlour.db"
    _corrupt_store(path)
    SQLiteStore(path, autocheckpoint=False, check=False).close()
    with pytest.raises(StoreRefused):
        SQLiteStore(path)


def test_a_store_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "var"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(StoreRefused, match=r"var/parlour\.db: cannot read the store: "):
        SQLiteStore(blocker / "parlour.db")


# ---------------------------------------------------------------------------------------------
# Migrations


def _seats(human: str, robot: str = "Robbie") -> str:
    return json.dumps(
        [
            {"handle": human, "robot": False, "state": "FINISHED", "player_id": f"id-{human}"},
            {"handle": robot, "robot": True, "state": "FINISHED"},
        ]
    )


def _version_1_store(path: Path) -> None:
    """A store as a build that knew only the first migration left it."""
    db = sqlite3.connect(path)
    cur = db.cursor()
    version, _, migrate = MIGRATIONS[0]
    assert version == 1
    migrate(cur)
    cur.executemany(
        "INSERT INTO parlour_meta (key, value) VALUES (?, ?)",
        [("application", APPLICATION), ("schema_version", "1"), ("heartbeat", "4242.5")],
    )
    columns = (
        "id, protocol, game, name, state, created, last_active, started, finished, seed, moves, "
        "config, seats, result"
    )
    games = [
        ("done", "COMPLETED", 10.0, _seats("alice"), '{"winners": [0]}'),
        ("gave-up", "CANCELLED", 20.0, _seats("bob"), None),
        ("crashed", "ABORTED", 30.0, _seats("alice", robot="bob"), None),
        ("live", "PLAYING", None, _seats("alice"), None),
    ]
    for number, (gid, state, finished, seats, result) in enumerate(games):
        cur.execute(
            f"INSERT INTO games ({columns}) VALUES (?, 'apologies', 'apologies', ?, ?, 1.0, 2.0, 1.5, ?, ?, 3, "
            '\'{"mode": "ADULT"}\', ?, ?)',
            (gid, f"Game {gid}", state, finished, 2**40 + number, seats, result),
        )
        cur.executemany(
            "INSERT INTO moves (game_id, seq, seat, kind, choice, at) VALUES (?, ?, ?, 'move', ?, ?)",
            [(gid, seq, seq % 2, seq, 5.0 + seq) for seq in range(3)],
        )
    db.commit()
    db.close()


def test_a_version_1_store_is_upgraded_with_its_data_and_finished_games_indexed_by_player(
    tmp_path: Path,
) -> None:
    path = tmp_path / "parlour.db"
    _version_1_store(path)
    store = SQLiteStore(path)
    try:
        assert store.schema_version == LATEST
        loaded = store.load_game("done")
        assert loaded is not None
        row, moves = loaded
        assert row == GameRow(
            id="done",
            protocol="apologies",
            game="apologies",
            name="Game done",
            state="COMPLETED",
            created=1.0,
            last_active=2.0,
            seed=2**40,
            moves=3,
            started=1.5,
            finished=10.0,
            config={"mode": "ADULT"},
            seats=[
                SeatRow("alice", False, "FINISHED", player_id="id-alice"),
                SeatRow("Robbie", True, "FINISHED"),
            ],
            result={"winners": [0]},
        )
        assert moves == [MoveRow("done", seq, seq % 2, "move", seq, 5.0 + seq) for seq in range(3)]
        # Backfilled: the finished games' human seats, newest first; a robot's handle does not count.
        assert [game.id for game in store.list_games(player="alice")] == ["crashed", "done"]
        assert [game.id for game in store.list_games(player="bob")] == ["gave-up"]
        assert store.list_games(player="Robbie") == []
        snapshot = store.load_live()
        assert [game.id for game in snapshot.games] == ["live"]
        assert len(snapshot.moves["live"]) == 3
        assert snapshot.heartbeat == 4242.5
        report = store.check()
        assert report["ok"] is True
        # Two seats for each of the three finished games; the live game's are not indexed.
        assert report["counts"] == {
            "players": 0,
            "games": 4,
            "moves": 12,
            "move_runs": 0,
            "game_snapshots": 0,
            "game_seats": 6,
            "accounts": 0,
            "async_games": 0,
            "async_turns": 0,
            "ratings": 0,
            "chat": 0,
            "relations": 0,
            "reports": 0,
            "devices": 0,
            "notifications": 0,
            "audit": 0,
            "game_results": 0,
        }
    finally:
        store.close()


class _Before5:
    """A cursor as a build before schema version 5 wrote with: nothing about game snapshots (the
    store forgets an ended game's snapshot, in a table these versions do not have)."""

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self.cur = cur
        self.rowcount = 0

    def execute(self, sql: str, params: Any = ()) -> Any:
        if "game_snapshots" in sql:
            return self
        return self.cur.execute(sql, params)

    def executemany(self, sql: str, params: Any) -> Any:
        return self.cur.executemany(sql, params)


def _write_before_runs(cur: sqlite3.Cursor, records: list[Record]) -> None:
    """``records`` as a build before schema version 5 wrote them: moves one row each in
    ``moves`` (version 11 packs them into runs), nothing about game snapshots."""
    moves = [msgspec.structs.astuple(r) for r in records if isinstance(r, MoveRow)]
    SQLiteStore._write(_Before5(cur), [r for r in records if not isinstance(r, MoveRow)])
    cur.executemany(f"{MOVES.insert}(?, ?, ?, ?, ?, ?)", moves)


def _version_2_store(path: Path) -> list[Record]:
    """A store as a build that knew migrations 1 and 2 left it, with players, games and moves
    committed through that build's tables; the rows it holds."""
    db = sqlite3.connect(path)
    cur = db.cursor()
    for version, _, migrate in MIGRATIONS[:2]:
        assert version in (1, 2)
        migrate(cur)
    cur.executemany(
        "INSERT INTO parlour_meta (key, value) VALUES (?, ?)",
        [("application", APPLICATION), ("schema_version", "2"), ("heartbeat", "777.25")],
    )
    db.commit()
    db.close()
    records = populate(games=6, moves=3)
    # Version 2's tables are the same as today's for these rows: the v3 store's own write path
    # fills them, run over the v2 schema (as a v2 build would have).
    store = sqlite3.connect(path, isolation_level=None)
    try:
        cur = store.cursor()
        cur.execute("BEGIN")
        _write_before_runs(cur, records)
        cur.execute("COMMIT")
    finally:
        store.close()
    return records


def test_a_version_2_store_is_upgraded_to_the_async_tables_with_its_data_intact(tmp_path: Path) -> None:
    path = tmp_path / "parlour.db"
    records = _version_2_store(path)
    before = sqlite3.connect(path)
    try:
        assert before.execute("SELECT value FROM parlour_meta WHERE key = 'schema_version'").fetchone() == (
            "2",
        )
        assert "accounts" not in {row[0] for row in before.execute("SELECT name FROM sqlite_master")}
    finally:
        before.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version == LATEST
        games = [record for record in records if isinstance(record, GameRow)]
        for row in games:
            loaded = store.load_game(row.id)
            assert loaded is not None
            assert loaded == (row, [r for r in records if isinstance(r, MoveRow) and r.game_id == row.id])
        assert store.load_live().heartbeat == 777.25
        assert len(store.list_games()) == 3
        assert store.check()["ok"] is True
        # The new tables are there, empty, and take rows.
        assert (store.accounts(), store.load_async_games(), store.ratings()) == ([], [], [])
        store.commit(populate_async())
        assert store.account_by_name("PLAYER1") is not None
        assert len(store.load_async_games()) == 3
        assert store.check()["counts"]["async_turns"] == 9
    finally:
        store.close()
    # And a later opening finds it at the latest version, with nothing to migrate.
    again = SQLiteStore(path)
    try:
        assert again.schema_version == LATEST
        assert len(again.accounts()) == 3
    finally:
        again.close()


class RecordingCursor:
    """Not an SQLite cursor: what the migrations would send another backend (PostgreSQL)."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def execute(self, sql: str, params: object = ()) -> None:
        self.statements.append(sql)

    def executemany(self, sql: str, rows: object) -> None:
        self.statements.append(sql)

    def fetchall(self) -> list[object]:
        return []


def test_the_async_migration_is_portable_sql() -> None:
    cursor = RecordingCursor()
    version, _, migrate = MIGRATIONS[2]
    assert version == 3
    migrate(cursor)
    ddl = " ".join(cursor.statements)
    assert "BYTEA" in ddl and "BLOB" not in ddl  # PostgreSQL's name for bytes
    for sqlite_only in ("AUTOINCREMENT", "COLLATE NOCASE", "WITHOUT ROWID", "IF NOT EXISTS", "REAL"):
        assert sqlite_only not in ddl
    assert "CREATE UNIQUE INDEX accounts_by_name_key ON accounts (name_key)" in cursor.statements
    # On SQLite the same columns are BLOBs (BYTEA would get numeric affinity there).
    db = sqlite3.connect(":memory:")
    try:
        migrate(db.cursor())
        types = {row[1]: row[2] for row in db.execute("PRAGMA table_info(async_games)")}
        assert types["doc"] == "BLOB"
    finally:
        db.close()


def _version_3_store(path: Path) -> list[Record]:
    """A store as a build that knew migrations 1 to 3 left it, with rows of every v3 table
    written through that build's tables; the rows it holds."""
    db = sqlite3.connect(path)
    cur = db.cursor()
    for version, _, migrate in MIGRATIONS[:3]:
        assert version in (1, 2, 3)
        migrate(cur)
    cur.executemany(
        "INSERT INTO parlour_meta (key, value) VALUES (?, ?)",
        [("application", APPLICATION), ("schema_version", "3"), ("heartbeat", "888.5")],
    )
    db.commit()
    db.close()
    records = [
        *populate(games=4, moves=3),
        # Game results came with v7.
        *(r for r in populate_async(accounts=3, games=5, turns=2) if not isinstance(r, GameResultRow)),
    ]
    # The v4 store's write path over the v3 schema: these rows touch no v4 table; accounts
    # are written with the v3 columns (v5 added the role, revocation counter and ban).
    store = sqlite3.connect(path, isolation_level=None)
    try:
        cur = store.cursor()
        cur.execute("BEGIN")
        accounts = [r for r in records if isinstance(r, AccountRow)]
        cur.executemany(
            "INSERT INTO accounts (id, name, name_key, password_hash, created) VALUES (?, ?, ?, ?, ?)",
            [(a.id, a.name, a.name.casefold(), a.password_hash, a.created) for a in accounts],
        )
        _write_before_runs(cur, [r for r in records if not isinstance(r, AccountRow)])
        cur.execute("COMMIT")
    finally:
        store.close()
    return records


def test_a_version_3_store_is_upgraded_to_the_social_tables_with_its_data_intact(tmp_path: Path) -> None:
    path = tmp_path / "parlour.db"
    records = _version_3_store(path)
    before = sqlite3.connect(path)
    try:
        tables = {row[0] for row in before.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "accounts" in tables and "chat" not in tables and "notifications" not in tables
    finally:
        before.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version == LATEST == 11
        assert store.accounts() == [r for r in records if isinstance(r, AccountRow)]
        live = [r for r in records if isinstance(r, AsyncGameRow) and r.status not in ("OVER", "ABORTED")]
        assert store.load_async_games() == live
        assert store.async_turns(2) == [r for r in records if isinstance(r, AsyncTurnRow) and r.game_id == 2]
        assert len(store.ratings()) == len([r for r in records if isinstance(r, RatingRow)])
        assert store.meta("motd") == "Welcome to the parlour"
        assert store.load_live().heartbeat == 888.5
        for row in (r for r in records if isinstance(r, GameRow)):
            assert store.load_game(row.id) == (
                row,
                [r for r in records if isinstance(r, MoveRow) and r.game_id == row.id],
            )
        assert store.check()["ok"] is True
        # The new tables are there, empty, and take rows.
        assert (store.load_chat([0], 50), store.relations(), store.reports(10), store.devices()) == (
            {0: []},
            [],
            [],
            [],
        )
        assert store.pending_notifications(now=1e12, limit=10) == []
        store.commit(populate_social())
        assert store.load_chat([0], 2) == {0: chat_lines(0, 4)[-2:]}
        counts = store.check()["counts"]
        assert (counts["relations"], counts["reports"], counts["devices"], counts["notifications"]) == (
            3,
            2,
            2,
            3,
        )
    finally:
        store.close()
    again = SQLiteStore(path)
    try:
        assert again.schema_version == LATEST
        assert len(again.relations()) == 3
    finally:
        again.close()


def test_the_social_migration_is_portable_sql() -> None:
    cursor = RecordingCursor()
    version, _, migrate = MIGRATIONS[3]
    assert version == 4
    migrate(cursor)
    ddl = " ".join(cursor.statements)
    assert "BYTEA" in ddl and "BLOB" not in ddl
    for sqlite_only in ("AUTOINCREMENT", "COLLATE NOCASE", "WITHOUT ROWID", "IF NOT EXISTS", "REAL"):
        assert sqlite_only not in ddl
    db = sqlite3.connect(":memory:")
    try:
        for _, _, earlier in MIGRATIONS[:3]:
            earlier(db.cursor())
        migrate(db.cursor())
        types = {row[1]: row[2] for row in db.execute("PRAGMA table_info(notifications)")}
        assert types["payload"] == "BLOB"
    finally:
        db.close()


def test_a_version_4_store_is_upgraded_to_game_snapshots_and_its_live_games_replay_every_move(
    tmp_path: Path,
) -> None:
    path = tmp_path / "parlour.db"
    db = sqlite3.connect(path, isolation_level=None)
    cur = db.cursor()
    for version, _, migrate in MIGRATIONS[:4]:
        assert version in (1, 2, 3, 4)
        migrate(cur)
    cur.executemany(
        "INSERT INTO parlour_meta (key, value) VALUES (?, ?)",
        [("application", APPLICATION), ("schema_version", "4")],
    )
    records = populate(games=4, moves=3)
    cur.execute("BEGIN")
    _write_before_runs(cur, records)
    cur.execute("COMMIT")
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.schema_version == LATEST == 11
        live = store.load_live()
        # No snapshot yet: a live game comes back with every one of its moves.
        assert live.states == {}
        assert live.moves["game-0002"] == [
            r for r in records if isinstance(r, MoveRow) and r.game_id == "game-0002"
        ]
        store.commit([game_snapshot("game-0002", 2)])
        live = store.load_live()
        assert live.states == {"game-0002": game_snapshot("game-0002", 2)}
        assert [m.seq for m in live.moves["game-0002"]] == [2]
        assert store.check()["ok"] is True
    finally:
        store.close()


def test_the_snapshot_migration_is_portable_sql() -> None:
    cursor = RecordingCursor()
    version, _, migrate = MIGRATIONS[4]
    assert version == 5
    migrate(cursor)
    ddl = " ".join(cursor.statements)
    assert "BYTEA" in ddl and "BLOB" not in ddl
    db = sqlite3.connect(":memory:")
    try:
        for _, _, earlier in MIGRATIONS[:4]:
            earlier(db.cursor())
        migrate(db.cursor())
        types = {row[1]: row[2] for row in db.execute("PRAGMA table_info(game_snapshots)")}
        assert types["doc"] == "BLOB"
    finally:
        db.close()


def test_a_store_migrated_by_another_process_meanwhile_is_not_migrated_twice(tmp_path: Path) -> None:
    """Two processes open a new store at once: the second must find the first one's work when it
    gets the write lock, rather than run the migrations again (which failed half-way)."""
    path = tmp_path / "parlour.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA busy_timeout = 5000")
    other.execute("BEGIN IMMEDIATE")  # the other process is migrating: it holds the write lock
    waiting = threading.Event()

    class Announcing(SQLiteStore):
        """Says when it has read the version and asks for the write lock."""

        def _check_and_migrate(self) -> None:
            self.db.set_trace_callback(
                lambda sql: waiting.set() if sql.startswith("BEGIN IMMEDIATE") else None
            )
            super()._check_and_migrate()

    with ThreadPoolExecutor(1) as pool:
        opening = pool.submit(Announcing, path)
        assert waiting.wait(5)
        cur = other.cursor()
        for _, _, migrate in MIGRATIONS:
            migrate(cur)
        cur.executemany(
            "INSERT INTO parlour_meta (key, value) VALUES (?, ?)",
            [("application", APPLICATION), ("schema_version", str(LATEST))],
        )
        other.execute("COMMIT")
        other.close()
        store = opening.result(timeout=10)
    try:
        assert store.schema_version == LATEST
        assert store.check()["ok"] is True
    finally:
        store.close()
