"""Both stores (SQLite files, PostgreSQL databases) through the one interface: commits and
loads, listing, operations, and failures. The tests of one backend's own behaviour (SQLite's
locks, WAL and disk) take ``sqlite_store``."""

from __future__ import annotations

import base64
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.storage import (
    ADMIN_ROLE,
    EXPORT_KINDS,
    LIVE_STATES,
    AccountErased,
    AccountRow,
    AccountSeen,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
    GameResultRow,
    GameRow,
    MetaRow,
    MoveRow,
    Opponent,
    PlayerGone,
    PlayerRow,
    RelationGone,
    RelationRow,
    SeatRow,
    StoreFailure,
)
from parlour.storage.migrations import LATEST
from parlour.storage.postgres import PostgresStore
from parlour.storage.sql import SQLStore
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.tables import MOVES
from tests.storage.conftest import open_at
from tests.storage.rows import (
    ASYNC_STATUSES,
    account,
    async_game,
    async_turns,
    chat_lines,
    device,
    finished_game,
    game,
    game_snapshot,
    move_rows,
    notification,
    player,
    populate,
    populate_async,
    populate_social,
    rating,
    relation,
    report,
)

#: The counts of ``check`` of a store without schema v4's rows.
NO_SOCIAL = {
    "chat": 0,
    "relations": 0,
    "reports": 0,
    "devices": 0,
    "notifications": 0,
    "audit": 0,
    "game_results": 0,
}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "parlour.db"


@pytest.fixture
def sqlite_store(path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(path)
    yield opened
    opened.close()


def _reopened(store: SQLStore) -> SQLStore:
    """The same store through a new connection: what a restarted server would see."""
    store.close()
    return open_at(store.url if isinstance(store, PostgresStore) else store.location)


# ---------------------------------------------------------------------------------------------
# Commit and load


def test_players_are_upserted_and_deleted_in_the_order_of_the_batch(store: SQLStore) -> None:
    alice, bob, carol = player(1, "alice"), player(2, "bob"), player(3, "carol")
    renamed = PlayerRow(bob.id, "robert", registered=9999.0, last_active=3000.0)
    store.commit([alice, bob, PlayerGone(alice.id), PlayerGone(carol.id), carol, renamed])
    # alice registered then went; carol went (a no-op) then registered; bob's row was updated,
    # but a player's registration time is its first.
    assert sorted(store.load_live().players, key=lambda p: p.id) == [
        PlayerRow(bob.id, "robert", registered=bob.registered, last_active=3000.0),
        carol,
    ]
    store.commit([PlayerGone(carol.id), carol])
    assert store.load_player(carol.id) == carol
    store.commit([carol, PlayerGone(carol.id)])
    assert store.load_player(carol.id) is None
    assert store.load_player("nobody") is None


def test_a_game_saved_several_times_in_one_batch_is_stored_as_it_was_last(store: SQLStore) -> None:
    advertised = game(1, state="ADVERTISED")
    playing = game(1, state="PLAYING", started=150.0, moves=2)
    done = finished_game(1, finished=300.0, moves=3, name="renamed")
    moves = move_rows(advertised.id, 3)
    # Moves may come before the game that owns them in a batch: games are written first.
    store.commit([moves[0], advertised, playing, moves[1], done, moves[2]])
    assert store.load_game(advertised.id) == (done, moves)
    assert store.load_live().games == []
    assert [row.id for row in store.list_games(player="handle1")] == [done.id]


def test_a_game_round_trips_every_field(store: SQLStore) -> None:
    row = GameRow(
        id="g",
        protocol="fish",
        game="fish",
        name="Fishy ünicode ♠",
        state="PLAYING",
        created=1.25,
        last_active=2.5,
        seed=2**62,
        moves=1,
        started=1.75,
        config={"players": 3, "board": [[1, 2], [3, 0]], "nested": {"a": None, "b": True}},
        seats=[
            SeatRow("x", False, "PLAYING", player_id=None, extra={"age": 12, "colour": "red"}),
            SeatRow("y", True, "QUIT"),
        ],
    )
    store.commit([row, MoveRow("g", 0, 1, "remove", 0, 1.5)])
    store = _reopened(store)
    try:
        assert store.load_game("g") == (row, [MoveRow("g", 0, 1, "remove", 0, 1.5)])
        assert store.load_game("missing") is None
    finally:
        store.close()


def test_load_live_returns_the_live_games_only_with_their_moves_in_order(store: SQLStore) -> None:
    store.commit(populate(games=8, moves=6))
    # Moves arrive over several batches, the later ones first within each.
    later = move_rows("game-0002", 9, start=6)
    store.commit([game(2, moves=9), *reversed(later)])
    snapshot = store.load_live()
    assert [g.id for g in snapshot.games] == ["game-0000", "game-0002", "game-0004", "game-0006"]
    assert {g.state for g in snapshot.games} <= set(LIVE_STATES)
    assert set(snapshot.moves) == {g.id for g in snapshot.games}
    assert snapshot.moves["game-0000"] == []  # advertised
    assert snapshot.moves["game-0002"] == move_rows("game-0002", 9)
    assert snapshot.moves["game-0006"] == move_rows("game-0006", 6)
    assert sorted(p.handle for p in snapshot.players) == ["handle1", "handle2"]


def test_the_heartbeat_is_the_last_one_and_outlives_the_connection(store: SQLStore) -> None:
    assert store.load_live().heartbeat is None
    store.heartbeat(1_723_456_789.123456)
    assert store.load_live().heartbeat == 1_723_456_789.123456
    store.heartbeat(1_723_456_800.5)
    store = _reopened(store)
    try:
        assert store.load_live().heartbeat == 1_723_456_800.5
    finally:
        store.close()


def test_an_empty_batch_writes_nothing(store: SQLStore) -> None:
    store.commit([])
    assert store.check()["counts"] == dict.fromkeys(
        (
            "players",
            "games",
            "moves",
            "move_runs",
            "game_snapshots",
            "game_seats",
            "accounts",
            "async_games",
            "async_turns",
            "ratings",
            *NO_SOCIAL,
        ),
        0,
    )


# ---------------------------------------------------------------------------------------------
# Listing finished games


def test_finished_games_are_listed_newest_first_and_paged_through_ties(store: SQLStore) -> None:
    # Eleven finished games, several finishing at the same instant, and live ones never listed.
    finishes = [50.0, 70.0, 70.0, 70.0, 60.0, 90.0, 70.0, 60.0, 80.0, 80.0, 55.0]
    rows = [finished_game(n, finished=f, moves=0) for n, f in enumerate(finishes)]
    store.commit([*reversed(rows), game(20), game(21, state="ADVERTISED")])
    newest_first = sorted(rows, key=lambda r: (r.finished, r.id), reverse=True)
    assert store.list_games() == newest_first
    assert store.list_games(limit=4) == newest_first[:4]
    pages: list[list[GameRow]] = []
    before: tuple[float, str] | None = None
    while page := store.list_games(limit=3, before=before):
        pages.append(page)
        last = page[-1]
        assert last.finished is not None
        before = (last.finished, last.id)
    assert [len(page) for page in pages] == [3, 3, 3, 2]
    assert [row for page in pages for row in page] == newest_first


def test_every_finished_state_is_listed_and_no_live_one(store: SQLStore) -> None:
    store.commit(
        [
            finished_game(1, finished=10.0, state="COMPLETED"),
            finished_game(2, finished=20.0, state="CANCELLED"),
            finished_game(3, finished=30.0, state="ABORTED"),
            game(4, state="PLAYING"),
            game(5, state="ADVERTISED"),
        ]
    )
    assert [row.state for row in store.list_games()] == ["ABORTED", "CANCELLED", "COMPLETED"]


def test_games_are_filtered_by_type_and_by_human_player(store: SQLStore) -> None:
    def seats(*people: tuple[str, bool]) -> list[SeatRow]:
        return [SeatRow(handle, robot, "FINISHED") for handle, robot in people]

    store.commit(
        [
            finished_game(1, finished=10.0, seats=seats(("alice", False), ("bob", False))),
            finished_game(2, finished=20.0, game="fish", protocol="fish", seats=seats(("alice", False))),
            # alice left this one and a robot took her seat under her handle: not her game.
            finished_game(3, finished=30.0, seats=seats(("alice", True), ("bob", False))),
            finished_game(4, finished=40.0, game="tsuro", protocol="tsuro", seats=seats(("Robbie", True))),
            # Still being played: listed once finished, not before.
            game(5, seats=seats(("alice", False))),
        ]
    )

    def ids(**filters: str) -> list[str]:
        return [row.id for row in store.list_games(**filters)]

    assert ids(game_type="apologies") == ["game-0003", "game-0001"]
    assert ids(game_type="fish") == ["game-0002"]
    assert ids(game_type="chess") == []
    assert ids(player="alice") == ["game-0002", "game-0001"]
    assert ids(player="bob") == ["game-0003", "game-0001"]
    assert ids(player="alice", game_type="apologies") == ["game-0001"]
    assert ids(player="Robbie") == []
    assert ids(player="nobody") == []


def test_games_of_every_state_are_paged_through_ties_and_filtered_by_protocol(store: SQLStore) -> None:
    # Each state's games are read apart (a range of the index each) and merged: ties between
    # states must neither repeat nor lose a game from one page to the next.
    finishes = [40.0, 40.0, 40.0, 30.0, 30.0, 50.0, 20.0, 40.0, 30.0]
    rows = [
        finished_game(
            n,
            finished=f,
            state=("COMPLETED", "CANCELLED", "ABORTED")[n % 3],
            protocol=("apologies", "fish")[n % 2],
        )
        for n, f in enumerate(finishes)
    ]
    store.commit([*rows, game(20)])
    newest_first = sorted(rows, key=lambda r: (r.finished, r.id), reverse=True)
    for size in (1, 2, 4):
        shown: list[GameRow] = []
        before: tuple[float, str] | None = None
        while page := store.list_games(limit=size, before=before):
            assert len(page) <= size
            shown += page
            last = page[-1]
            assert last.finished is not None
            before = (last.finished, last.id)
        assert shown == newest_first
    fish = store.list_games(protocol="fish")
    assert fish == [row for row in newest_first if row.protocol == "fish"] and fish
    assert store.list_games(protocol="fish", state="ABORTED") == [
        row for row in fish if row.state == "ABORTED"
    ]
    assert store.list_games(limit=0) == []


def test_finished_games_are_read_by_the_index_of_each_state(sqlite_store: SQLiteStore) -> None:
    """SQLite's plan of each list: a range of (state, finished, id) or (status, updated, id)
    per state, in its order (no sort of every finished game)."""
    asked: list[tuple[str, Any]] = []
    read = sqlite_store._read

    def recorded(sql: str, params: Any = ()) -> list[Any]:
        asked.append((sql, params))
        return read(sql, params)

    sqlite_store._read = recorded  # type: ignore[method-assign]
    sqlite_store.list_games(limit=5, before=(10.0, "x"), protocol="fish")
    sqlite_store.ended_async_games(5, (10.0, 3))
    for sql, params in asked:
        plan = " | ".join(row[3] for row in read(f"EXPLAIN QUERY PLAN {sql}", params))
        assert plan.count("INDEX games_by_state_finished (state=? AND finished<?)") == 3 or (
            plan.count("INDEX async_games_by_status_updated (status=? AND updated<?)") == 2
        ), plan


def test_a_migrated_store_keeps_no_index_of_games_by_finished_alone(sqlite_store: SQLiteStore) -> None:
    """Version 10 dropped version 1's (finished, id): no read of games uses it, and every
    commit that starts or ends a game had a page of it to write."""
    indexes = {row[0] for row in sqlite_store._read("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "games_by_finished" not in indexes
    assert {"games_by_state_finished", "game_seats_by_handle"} <= indexes


def test_ended_async_games_are_listed_newest_first_and_paged_through_ties(store: SQLStore) -> None:
    # Both ended statuses, several ending at the same instant; live games (updated later than
    # every ended one) are never listed.
    ended = [
        async_game(n, status="OVER" if n % 3 else "ABORTED", updated=u)
        for n, u in enumerate([50.0, 70.0, 70.0, 70.0, 60.0, 90.0, 70.0, 60.0, 80.0, 80.0, 55.0], 1)
    ]
    live = [async_game(20 + n, status=status, updated=999.0) for n, status in enumerate(ASYNC_STATUSES)]
    store.commit([*reversed(ended), *(row for row in live if row.status not in ("OVER", "ABORTED"))])
    newest_first = sorted(ended, key=lambda r: (r.updated, r.id), reverse=True)
    assert store.ended_async_games(50) == newest_first
    assert store.ended_async_games(4) == newest_first[:4]
    assert store.ended_async_games(0) == []
    pages: list[list[AsyncGameRow]] = []
    before: tuple[float, int] | None = None
    while page := store.ended_async_games(3, before):
        pages.append(page)
        before = (page[-1].updated, page[-1].id)
    assert [len(page) for page in pages] == [3, 3, 3, 2]
    assert [row for page in pages for row in page] == newest_first
    with pytest.raises(ValueError, match="negative"):
        store.ended_async_games(-1)


# ---------------------------------------------------------------------------------------------
# Purge, check, export and import, backup


def test_purge_forgets_old_finished_games_with_their_moves_and_seats(store: SQLStore) -> None:
    old = [finished_game(n, finished=100.0 + n, moves=2) for n in range(3)]
    new = finished_game(3, finished=500.0, moves=2)
    live = game(4, moves=2, created=1.0)  # older than all of them, but still being played
    moves = [m for row in (*old, new, live) for m in move_rows(row.id, 2)]
    store.commit([*old, new, live, *moves, game_snapshot(live.id, 1)])
    assert store.purge(finished_before=500.0) == 3
    assert store.list_games() == [new]
    assert store.list_games(player="handle0") == []
    assert store.load_game("game-0000") is None
    assert [g.id for g in store.load_live().games] == [live.id]
    report = store.check()
    assert report["ok"] is True
    assert report["counts"] == {
        "players": 0,
        "games": 2,
        "moves": 4,
        "move_runs": 2,
        "game_snapshots": 1,
        "game_seats": 2,
        "accounts": 0,
        "async_games": 0,
        "async_turns": 0,
        "ratings": 0,
        **NO_SOCIAL,
    }
    assert store.purge(finished_before=500.0) == 0


def test_check_counts_every_kind_of_row(store: SQLStore) -> None:
    store.commit(
        [
            *populate(games=6, moves=4),
            game_snapshot("game-0002", 2),
            *populate_social(),
            *populate_async(accounts=3, games=4, turns=3),
        ]
    )
    assert store.check() == {
        "ok": True,
        "schema_version": LATEST,
        "integrity": ["ok"],
        "foreign_key_problems": 0,
        "games_with_missing_moves": 0,
        "snapshots_ahead_of_moves": 0,
        "counts": {
            "players": 2,
            "games": 6,
            "moves": 16,
            "move_runs": 4,
            "game_snapshots": 1,
            "game_seats": 6,
            "accounts": 3,
            "async_games": 4,
            "async_turns": 9,
            "ratings": 4,
            "chat": 9,
            "relations": 3,
            "reports": 2,
            "devices": 2,
            "notifications": 3,
            "audit": 1,
            "game_results": 4,
        },
        "games_by_state": {"ADVERTISED": 2, "COMPLETED": 3, "PLAYING": 1},
        "async_games_by_status": {"NOT_STARTED": 1, "OUTCOME": 1, "OVER": 1, "RUNNING": 1},
    }


def test_check_finds_games_whose_count_of_moves_disagrees_with_their_move_rows(store: SQLStore) -> None:
    store.commit(
        [
            game(1, moves=5),  # claims five moves, has four
            *move_rows("game-0001", 4),
            game(2, moves=3),  # three rows, but one is missing and one too far (below)
            game(3, moves=2),  # as it should be
            *move_rows("game-0003", 2),
        ]
    )
    # Rows of before schema version 11, one a move (the store writes runs, which refuse a gap).
    old = [msgspec.structs.astuple(m) for m in move_rows("game-0002", 4) if m.seq != 1]
    store._transaction(lambda cur: cur.executemany(f"{MOVES.insert}(?, ?, ?, ?, ?, ?)", old))
    report = store.check()
    assert report["ok"] is False
    assert report["games_with_missing_moves"] == 2
    assert report["integrity"] == ["ok"]


def test_an_export_imported_into_a_new_store_exports_the_same(store: SQLStore, tmp_path: Path) -> None:
    store.commit(
        [
            *populate(games=7, moves=5),
            game_snapshot("game-0002", 3),
            *populate_async(accounts=3, games=5, turns=2),
            *populate_social(),
        ]
    )
    store.heartbeat(77.0)
    secret = store.ensure_secret("session_secret")
    exported = list(store.export())
    assert [kind for kind, _ in exported] == sorted(
        (kind for kind, _ in exported), key=list(EXPORT_KINDS).index
    )
    assert {kind for kind, _ in exported} == set(EXPORT_KINDS)
    # The store's own metadata stays behind; the secret goes along (tokens stay valid).
    assert [fields for kind, fields in exported if kind == "meta"] == [
        {"key": "motd", "value": "Welcome to the parlour"},
        {"key": "session_secret", "value": secret.hex()},
    ]
    # Bytes are base64 text, so the rows are JSON as they are.
    first = next(fields for kind, fields in exported if kind == "async_game")
    assert base64.b64decode(first["doc"]) == async_game(1).doc
    first = next(fields for kind, fields in exported if kind == "notification")
    assert base64.b64decode(first["payload"]) == notification(1).payload
    assert msgspec.json.decode(msgspec.json.encode(exported)) == [list(row) for row in exported]
    copy = SQLiteStore(tmp_path / "copy.db")
    try:
        # Whatever the order of the rows: moves may come before their games, turns before theirs.
        assert copy.import_rows(reversed(exported)) == {
            "player": 2,
            "game": 7,
            "move": 25,
            "game_snapshot": 1,
            "account": 3,
            "async_game": 5,
            "async_turn": 8,
            "rating": 4,
            "chat": 9,
            "relation": 3,
            "report": 2,
            "device": 2,
            "notification": 3,
            "audit": 1,
            "game_result": 6,
            "meta": 2,
        }
        assert copy.ensure_secret("session_secret") == secret
        assert copy.load_live().heartbeat is None
        assert list(copy.export()) == exported
        assert copy.check() == store.check()
        # The finished games' seats were indexed as they were written.
        assert copy.list_games(player="handle1") == store.list_games(player="handle1") != []
    finally:
        copy.close()


def test_an_import_into_a_store_that_has_rows_is_refused_and_changes_nothing(store: SQLStore) -> None:
    store.commit(populate(games=2, moves=1))
    exported = list(store.export())
    before = store.check()
    with pytest.raises(ValueError, match="not empty"):
        store.import_rows([("player", {"id": "p9", "handle": "new", "registered": 1.0, "last_active": 1.0})])
    with pytest.raises(ValueError, match="not empty"):
        store.import_rows(exported)
    assert store.check() == before


def test_an_import_of_an_unknown_kind_of_row_is_refused(store: SQLStore) -> None:
    with pytest.raises(ValueError, match="unknown kind of row 'table'"):
        store.import_rows([("table", {"id": "t"})])
    assert store.check()["counts"]["games"] == 0


def test_an_export_is_one_snapshot_while_another_connection_commits(
    sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    store = sqlite_store
    store.commit([game(1, moves=2), *move_rows("game-0001", 2)])
    server = SQLiteStore(store.path)
    committed = False

    def commit_before_the_moves_are_read(sql: str) -> None:
        # A server commits a new game and its moves just after the export has read the games.
        nonlocal committed
        if sql.startswith("SELECT game_id, seq") and not committed:
            committed = True
            server.commit(
                [
                    game(1, moves=3),
                    *move_rows("game-0001", 3, start=2),
                    game(2, moves=1),
                    *move_rows("game-0002", 1),
                ]
            )

    store.db.set_trace_callback(commit_before_the_moves_are_read)
    exported = list(store.export())
    store.db.set_trace_callback(None)
    server.close()
    assert committed
    assert [(kind, fields["id"] if kind == "game" else fields["seq"]) for kind, fields in exported] == [
        ("game", "game-0001"),
        ("move", 0),
        ("move", 1),
    ]
    copy = SQLiteStore(tmp_path / "copy.db")
    try:
        copy.import_rows(exported)
        assert copy.check()["ok"] is True
    finally:
        copy.close()


def test_a_backup_taken_while_another_connection_holds_the_store_opens_with_the_same_rows(
    sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    store = sqlite_store
    store.commit(populate(games=6, moves=3))  # in the WAL, not yet in the main file
    writer = sqlite3.connect(store.path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("INSERT INTO players VALUES ('p-uncommitted', 'ghost', 1.0, 1.0)")
    target = tmp_path / "backups" / "copy.db"
    target.parent.mkdir()
    try:
        store.backup(str(target))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    copy = SQLiteStore(target)
    try:
        assert copy.check() == store.check()
        assert list(copy.export()) == list(store.export())
    finally:
        copy.close()


def test_a_backup_never_overwrites_a_file_nor_leaves_a_partial_one(store: SQLStore, tmp_path: Path) -> None:
    store.commit(populate(games=1, moves=0))
    existing = tmp_path / "precious.db"
    existing.write_bytes(b"do not touch")
    with pytest.raises(ValueError, match="exists"):
        store.backup(str(existing))
    assert existing.read_bytes() == b"do not touch"
    nowhere = tmp_path / "missing-folder" / "copy.db"
    with pytest.raises(StoreFailure, match=r"the backup to .*copy\.db failed"):
        store.backup(str(nowhere))
    assert not nowhere.exists()


# ---------------------------------------------------------------------------------------------
# Failures


def test_a_commit_that_cannot_get_the_write_lock_fails_and_writes_nothing(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    store.commit([player(1)])
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    store.db.execute("PRAGMA busy_timeout = 0")  # fail at once rather than wait five seconds
    try:
        with pytest.raises(StoreFailure) as failed:
            store.commit([player(2), game(1)])
        assert str(failed.value) == f"{store.path}: database is locked"
        with pytest.raises(StoreFailure, match="locked"):
            store.heartbeat(5.0)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.load_player(player(2).id) is None
    assert store.load_game("game-0001") is None
    # The store works again once the lock is gone.
    store.commit([player(2)])
    assert store.load_player(player(2).id) == player(2)


def test_a_commit_on_a_full_disk_fails_and_writes_none_of_its_rows(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    store.commit([player(1)])
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
    big = [game(n, name="x" * 2000, moves=1) for n in range(20)]
    with pytest.raises(StoreFailure, match="full"):
        store.commit([player(2), *big, *(move_rows(row.id, 1)[0] for row in big)])
    assert store.load_player(player(2).id) is None
    assert store.load_live().games == []
    store.db.execute(f"PRAGMA max_page_count = {pages * 100}")  # space again
    store.commit([player(2), *big])
    assert len(store.load_live().games) == 20


# ---------------------------------------------------------------------------------------------
# The /async protocol (schema v3): accounts, games and turns, ratings, metadata


def test_accounts_are_upserted_keep_their_creation_time_and_are_found_whatever_the_case(
    store: SQLStore,
) -> None:
    ann, bob = account(1, "Ann"), account(2, "Straße", password_hash="")  # "" : an OAuth2 account
    store.commit([ann, bob])
    assert store.accounts() == [ann, bob]
    for spelling in ("ann", "ANN", "aNn"):
        assert store.account_by_name(spelling) == ann
    assert store.account_by_name("STRASSE") == bob  # casefold, not lower: ß is ss
    assert store.account_by_name("nobody") is None
    renamed = AccountRow(1, "Annie", "$argon2id$new", created=9999.0)
    store.commit([renamed])
    assert store.account_by_name("ann") is None
    assert store.account_by_name("ANNIE") == AccountRow(1, "Annie", "$argon2id$new", created=ann.created)
    store = _reopened(store)
    try:
        assert [row.name for row in store.accounts()] == ["Annie", "Straße"]
    finally:
        store.close()


def test_a_name_taken_in_another_case_fails_the_whole_commit(store: SQLStore) -> None:
    store.commit([account(1, "Ann")])
    with pytest.raises(StoreFailure, match=r"(?i)unique"):
        store.commit([account(2, "Bob"), account(3, "ANN")])
    assert [row.name for row in store.accounts()] == ["Ann"]


def test_an_account_saved_several_times_in_one_batch_is_stored_as_it_was_last(store: SQLStore) -> None:
    # One multi-row upsert may not touch a row twice (PostgreSQL refuses): the store keeps the last.
    store.commit([account(1, "first"), account(2), account(1, "second"), account(1, "third")])
    assert [row.name for row in store.accounts()] == ["third", "Player2"]


def test_async_games_and_turns_round_trip_and_only_live_games_are_loaded(store: SQLStore) -> None:
    big = async_game(7, doc=bytes(range(256)) * 1200)  # a state of 300 KiB
    rows = [async_game(n, status) for n, status in enumerate(ASYNC_STATUSES, 1)]
    # Turns come before their game in the batch, and in no order: a commit writes games first.
    turns = async_turns(2, 5)
    store.commit([*reversed(turns), *rows, big, *async_turns(7, 1)])
    store = _reopened(store)
    try:
        assert [row.status for row in store.load_async_games()] == [
            "NOT_STARTED",
            "RUNNING",
            "OUTCOME",
            "RUNNING",
        ]
        assert store.load_async_games() == [*rows[:3], big]
        # A cluster's shard: the started live games whose id is the shard modulo the count.
        assert store.load_async_shard(0, 1) == [rows[1], rows[2], big]
        assert store.load_async_shard(2, 5) == [rows[1], big]
        assert store.load_async_shard(3, 5) == [rows[2]] and store.load_async_shard(1, 5) == []
        assert store.load_async_game(4) == rows[3]  # OVER: not live, still there
        assert store.load_async_game(7) == big
        assert store.load_async_game(99) is None
        assert store.async_turns(2) == turns
        assert store.async_turns(1) == []
        assert store.async_turns(99) == []
    finally:
        store.close()


def test_an_async_game_is_updated_whole_and_a_turn_written_again_is_replaced(store: SQLStore) -> None:
    store.commit([async_game(1, "NOT_STARTED"), *async_turns(1, 2)])
    later = async_game(1, "OUTCOME", created=1.0, updated=9000.0, doc=b"new", game_type="go")
    again = AsyncTurnRow(1, 1, 8000.0, b"rewritten")
    store.commit([async_game(1, "RUNNING"), again, later])
    assert store.load_async_game(1) == async_game(
        1, "OUTCOME", updated=9000.0, doc=b"new", game_type="go"
    )  # created is the first one
    assert store.async_turns(1) == [async_turns(1, 1)[0], again]


def test_many_turns_in_one_batch_are_written(store: SQLStore) -> None:
    # More bound values than one statement takes: the rows are split over several statements.
    turns = async_turns(1, 600)
    store.commit([async_game(1), *turns])
    assert store.async_turns(1) == turns


def test_a_turn_of_an_unknown_game_fails_the_commit(store: SQLStore) -> None:
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([account(1), *async_turns(5, 1)])
    assert store.accounts() == []


def test_the_leaderboard_is_best_ordinal_first_with_names(store: SQLStore) -> None:
    accounts = [account(n, name) for n, name in enumerate(["ann", "bob", "cat", "dan"], 1)]
    ratings = [
        rating(1, mu=30.0, sigma=5.0),  # ordinal 15
        rating(2, mu=40.0, sigma=9.0),  # ordinal 13
        rating(3, mu=27.0, sigma=4.0),  # ordinal 15: a tie, the lower account id first
        rating(4, mu=50.0, sigma=1.0, game_type="go"),
    ]
    store.commit([*ratings, *accounts])
    assert store.leaderboard("chess", 10) == [(ratings[0], "ann"), (ratings[2], "cat"), (ratings[1], "bob")]
    assert store.leaderboard("chess", 2) == [(ratings[0], "ann"), (ratings[2], "cat")]
    assert store.leaderboard("go", 10) == [(ratings[3], "dan")]
    assert store.leaderboard("checkers", 10) == []
    assert store.leaderboard("chess", 0) == []
    with pytest.raises(ValueError, match="negative"):
        store.leaderboard("chess", -1)
    # A rating is upserted on (account, game type).
    better = rating(2, mu=60.0, sigma=2.0)
    store.commit([better])
    assert store.leaderboard("chess", 1) == [(better, "bob")]
    assert store.ratings() == [ratings[0], better, ratings[2], ratings[3]]


def test_a_rating_of_an_unknown_account_fails_the_commit(store: SQLStore) -> None:
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([rating(42)])
    assert store.ratings() == []


@pytest.mark.parametrize("key", ["application", "version", "schema_version", "heartbeat", "", "k" * 65])
def test_the_stores_own_metadata_is_refused(store: SQLStore, key: str) -> None:
    with pytest.raises(ValueError, match=r"belongs to the store|1 to 64 characters"):
        MetaRow(key, "mine")
    # Nor can one be decoded (from the writer process's frames, or an export).
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"key": key, "value": "mine"}, MetaRow)
    with pytest.raises(ValueError):
        store.ensure_secret(key)
    assert store.schema_version == LATEST
    assert store.meta("application") == "parlour"


def test_metadata_values_are_upserted(store: SQLStore) -> None:
    assert store.meta("motd") is None
    store.commit([MetaRow("motd", "hello"), MetaRow("motd", "hello again"), MetaRow("other", "")])
    assert (store.meta("motd"), store.meta("other")) == ("hello again", "")
    store.commit([MetaRow("motd", "bye")])
    assert store.meta("motd") == "bye"


def test_a_secret_is_made_once_and_kept_across_restarts(store: SQLStore) -> None:
    secret = store.ensure_secret("session_secret")
    assert len(secret) == 32
    assert store.ensure_secret("session_secret") == secret
    assert store.meta("session_secret") == secret.hex()
    other = store.ensure_secret("other_secret")
    assert other != secret
    store = _reopened(store)
    try:
        assert store.ensure_secret("session_secret") == secret
    finally:
        store.close()


def test_connections_making_a_secret_at_once_all_get_the_same(store_location: str) -> None:
    """Servers (or a server and its writer process) opening a new store at once: the first
    insert wins and the others read it back."""
    stores = [open_at(store_location) for _ in range(4)]
    start = threading.Barrier(len(stores))

    def make(store: SQLStore) -> bytes:
        start.wait()
        return store.ensure_secret("session_secret")

    try:
        with ThreadPoolExecutor(len(stores)) as pool:
            made = list(pool.map(make, stores))
        assert len(set(made)) == 1
    finally:
        for store in stores:
            store.close()


@pytest.mark.parametrize("value", ["not hex", "abcd"])
def test_a_secret_that_is_not_one_is_a_failure_that_does_not_show_it(store: SQLStore, value: str) -> None:
    store.commit([MetaRow("session_secret", value)])
    with pytest.raises(StoreFailure, match="not a secret of 32 hex bytes") as failed:
        store.ensure_secret("session_secret")
    assert value not in str(failed.value)


def test_purge_forgets_old_async_games_that_are_over_with_their_turns(store: SQLStore) -> None:
    old = [async_game(n, status, updated=100.0) for n, status in enumerate(ASYNC_STATUSES, 1)]
    new_over = async_game(6, "OVER", updated=900.0)
    store.commit([*old, new_over, *(t for n in range(1, 7) for t in async_turns(n, 2))])
    store.commit([finished_game(1, finished=100.0)])
    # The finished Apologies game, and the OVER and ABORTED /async games, updated before 500.
    assert store.purge(finished_before=500.0) == 3
    assert store.load_async_game(4) is None and store.load_async_game(5) is None
    assert store.async_turns(4) == []
    assert [row.id for row in store.load_async_games()] == [1, 2, 3]
    assert store.load_async_game(6) == new_over
    assert store.check()["counts"]["async_turns"] == 8
    assert store.check()["ok"] is True
    assert store.purge(finished_before=500.0) == 0


def test_an_import_into_a_store_with_accounts_is_refused(store: SQLStore) -> None:
    store.commit([account(1)])
    with pytest.raises(ValueError, match="not empty"):
        store.import_rows([("async_game", msgspec.to_builtins(async_game(1)))])
    assert store.load_async_game(1) is None


def test_the_async_rows_of_a_failed_commit_are_not_written(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    store.commit([account(1)])
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    store.db.execute("PRAGMA busy_timeout = 0")
    try:
        with pytest.raises(StoreFailure, match="locked"):
            store.commit(populate_async())
        with pytest.raises(StoreFailure, match="locked"):
            store.ensure_secret("session_secret")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.accounts() == [account(1)]
    assert store.load_async_games() == []
    assert store.meta("session_secret") is None


# ---------------------------------------------------------------------------------------------
# The social side of /async and the push outbox (schema v4)


def test_chat_history_is_the_last_lines_of_each_scope_oldest_first(store: SQLStore) -> None:
    lobby, game_1, game_2 = chat_lines(0, 7), chat_lines(1, 2, sender=2), chat_lines(2, 5, sender=3)
    # Scopes interleaved and in no order in the batch: the store orders by sequence number.
    store.commit([*reversed(lobby), *game_2, *game_1])
    store = _reopened(store)
    try:
        assert store.load_chat([0, 1, 2], 3) == {0: lobby[-3:], 1: game_1, 2: game_2[-3:]}
        assert store.load_chat([2], 50) == {2: game_2}
        # Every scope asked for is there, once, lines or not.
        assert store.load_chat([5, 0, 5], 1) == {5: [], 0: lobby[-1:]}
        assert store.load_chat([0, 1], 0) == {0: [], 1: []}
        assert store.load_chat([], 10) == {}
        with pytest.raises(ValueError, match="negative"):
            store.load_chat([0], -1)
    finally:
        store.close()


def test_the_chat_of_many_scopes_is_loaded_in_groups(store: SQLStore) -> None:
    # More scopes than one statement binds.
    lines = [line for scope in range(1, 1201) for line in chat_lines(scope, 2, sender=scope % 3 + 1)]
    store.commit(lines)
    loaded = store.load_chat(range(1, 1202), 1)
    assert len(loaded) == 1201 and loaded[1201] == []
    assert loaded[700] == [lines[2 * 699 + 1]]


def test_a_chat_line_written_twice_fails_the_whole_commit(store: SQLStore) -> None:
    store.commit(chat_lines(0, 2))
    with pytest.raises(StoreFailure, match=r"(?i)unique"):
        store.commit([*chat_lines(1, 1), chat_lines(0, 1, start=2)[0]])
    assert store.load_chat([0, 1], 10) == {0: chat_lines(0, 2), 1: []}


def test_relations_keep_their_first_addition_and_follow_the_order_of_the_batch(store: SQLStore) -> None:
    store.commit([account(n) for n in range(1, 5)])
    buddy = relation(1, 2)
    store.commit([buddy, relation(1, 2, "ignore"), relation(3, 1)])
    # Added again (later, or twice in one batch): the first addition is kept.
    store.commit([RelationRow(1, 2, "buddy", 99999.0), relation(4, 1), RelationRow(4, 1, "buddy", 99999.0)])
    assert store.relations() == [buddy, relation(1, 2, "ignore"), relation(3, 1), relation(4, 1)]
    # Removed then added in one batch: added anew; added then removed: gone; removing what is
    # not there is nothing.
    store.commit(
        [
            RelationGone(1, 2, "buddy"),
            RelationRow(1, 2, "buddy", 12345.0),
            relation(2, 4),
            RelationGone(2, 4, "buddy"),
            RelationGone(3, 1, "ignore"),
            RelationGone(4, 1, "buddy"),
        ]
    )
    store = _reopened(store)
    try:
        assert store.relations() == [
            RelationRow(1, 2, "buddy", 12345.0),
            relation(1, 2, "ignore"),
            relation(3, 1),
        ]
    finally:
        store.close()


def test_a_relation_of_an_unknown_account_or_kind_is_refused(store: SQLStore) -> None:
    store.commit([account(1)])
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([relation(1, 42)])
    with pytest.raises(ValueError, match="buddy, ignore"):
        RelationRow(1, 1, "friend", 1.0)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"owner": 1, "other": 1, "kind": "friend", "added": 1.0}, RelationRow)
    assert store.relations() == []


def test_reports_are_listed_newest_first(store: SQLStore) -> None:
    store.commit([account(1), account(2)])
    reports = [report(1, at=10.0), report(2, at=30.0, reported="Ünknown name", scope=7), report(1, at=20.0)]
    store.commit(reports)
    assert store.reports(10) == [reports[1], reports[2], reports[0]]
    assert store.reports(1) == [reports[1]]
    assert store.reports(0) == []
    with pytest.raises(ValueError, match="negative"):
        store.reports(-1)
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([report(42, at=1.0)])
    with pytest.raises(StoreFailure, match=r"(?i)unique"):  # reports are only ever inserted
        store.commit([report(1, at=10.0, reported="again")])
    assert len(store.reports(10)) == 3


def test_devices_are_linked_again_and_unlinked(store: SQLStore) -> None:
    store.commit([account(1), account(2)])
    phone, tablet = device(1), device(1, "IOS", "apple")
    store.commit([phone, tablet, device(2)])
    later = DeviceRow(1, "FCM", phone.token, linked=99999.0)
    store.commit([later, DeviceGone(2, "FCM", "token-2"), DeviceGone(2, "FCM", "never-linked")])
    assert store.devices() == [later, tablet]
    # Unlinked then linked in one batch: linked; linked then unlinked: not.
    store.commit([DeviceGone(1, "IOS", "apple"), tablet, device(2), DeviceGone(2, "FCM", "token-2")])
    assert store.devices() == [later, tablet]
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([device(42)])


def test_the_notification_outbox(store: SQLStore) -> None:
    store.commit([account(1), account(2)])
    first, second, third = notification(1), notification(2, account_id=2), notification(3)
    store.commit([third, first, second])
    # Due by now, undelivered, oldest first; at most ``limit``.
    assert store.pending_notifications(now=9502.0, limit=10) == [first, second]
    assert store.pending_notifications(now=9502.0, limit=1) == [first]
    assert store.pending_notifications(now=9500.0, limit=10) == []
    # An attempt failed (tried again later), another succeeded; upserted by id, the first
    # ``created`` kept.
    retried = notification(1, attempts=1, next_attempt=9700.0, created=1.0)
    sent = notification(2, account_id=2, attempts=1, delivered=9600.0)
    store.commit([retried, sent])
    assert store.pending_notifications(now=9650.0, limit=10) == [third]
    assert store.pending_notifications(now=9700.0, limit=10) == [
        notification(1, attempts=1, next_attempt=9700.0),
        third,
    ]
    with pytest.raises(ValueError, match="negative"):
        store.pending_notifications(now=0.0, limit=-1)
    with pytest.raises(StoreFailure, match=r"(?i)foreign key"):
        store.commit([notification(9, account_id=42)])
    # A purge drops what was delivered before its time, never what waits.
    assert store.purge(finished_before=9600.0) == 0
    assert store.check()["counts"]["notifications"] == 3
    assert store.purge(finished_before=9601.0) == 0
    assert store.check()["counts"]["notifications"] == 2
    assert len(store.pending_notifications(now=10_000.0, limit=10)) == 2


def test_purge_forgets_the_chat_of_the_games_it_forgets(store: SQLStore) -> None:
    store.commit(
        [
            async_game(1, "OVER", updated=100.0),
            async_game(2, "RUNNING", updated=100.0),
            async_game(3, "ABORTED", updated=900.0),
            *chat_lines(0, 3),
            *chat_lines(1, 3),
            *chat_lines(2, 2),
            *chat_lines(3, 1),
        ]
    )
    assert store.purge(finished_before=500.0) == 1
    assert store.load_chat([0, 1, 2, 3], 10) == {
        0: chat_lines(0, 3),
        1: [],
        2: chat_lines(2, 2),
        3: chat_lines(3, 1),
    }


def test_an_import_into_a_store_with_only_social_rows_is_refused(store: SQLStore) -> None:
    store.commit(chat_lines(0, 1))
    with pytest.raises(ValueError, match="not empty"):
        store.import_rows([("chat", msgspec.to_builtins(ChatRow(1, 1, 1, "a", "b", 0, 1.0)))])
    assert store.load_chat([1], 10) == {1: []}


def test_without_autocheckpoint_commits_leave_the_wal_to_a_checkpoint_elsewhere(tmp_path: Path) -> None:
    writer = SQLiteStore(tmp_path / "p.db", autocheckpoint=False)
    reader = SQLiteStore(tmp_path / "p.db")
    for number in range(1500):
        writer.commit(populate(games=4, moves=2) if number == 0 else [player(number)])
    wal = tmp_path / "p.db-wal"
    grown = wal.stat().st_size
    assert grown > 1000 * 4096  # past SQLite's automatic checkpoint size: none happened
    reader.checkpoint()  # from another connection, as the server's store thread does
    busy, logged, copied = reader.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and logged == copied
    writer.commit([player(5000)])  # a writer after a complete checkpoint starts the WAL over
    assert reader.load_player(player(5000).id) is not None
    writer.close()
    reader.close()


def test_a_wal_past_its_limit_is_emptied_by_a_checkpoint_that_waits_for_the_writer(tmp_path: Path) -> None:
    """A passive checkpoint leaves the WAL file as large as it grew (under a load with no
    pause it never starts over: it grows without end); past ``wal_limit`` the checkpoint also
    waits for the writer and empties it."""
    writer = SQLiteStore(tmp_path / "p.db", autocheckpoint=False)
    under = SQLiteStore(tmp_path / "p.db")  # the default limit, 64 MiB: far above this WAL
    past = SQLiteStore(tmp_path / "p.db", wal_limit=1024 * 1024)
    wal = tmp_path / "p.db-wal"
    writer.commit(populate(games=4, moves=2))
    for checkpoint in (under, past):
        for number in range(1, 1500):
            writer.commit([player(number)])
        grown = wal.stat().st_size
        assert grown > 4 * 1024 * 1024
        checkpoint.checkpoint()
        # Copied, and left as large as it grew; or emptied.
        assert wal.stat().st_size == (grown if checkpoint is under else 0)
    writer.commit([player(5000)])  # the writer goes on, from the WAL's beginning
    assert wal.stat().st_size < 64 * 1024
    assert past.load_player(player(5000).id) is not None and under.load_player(player(1499).id) is not None
    for store in (writer, under, past):
        store.close()


def test_purge_forgets_lobby_chat_older_than_the_cutoff(store: SQLStore) -> None:
    lines = chat_lines(0, 4)  # sent at 6001..6004
    store.commit(lines)
    store.purge(finished_before=6002.5)
    assert store.load_chat([0], 10) == {0: lines[2:]}


def test_a_role_is_set_with_its_audit_record_and_kept_by_the_servers_upserts(store: SQLStore) -> None:
    store.commit(populate_async(accounts=2, games=0, turns=0))
    granted = AuditRow("a1", 10.0, "cli", "grant", "player1", "", "{}")
    found = store.set_role("player1", ADMIN_ROLE, granted)  # names compare whatever their case
    assert found is not None and found.role == ADMIN_ROLE and found.name == "Player1"
    assert (
        store.set_role("nobody", ADMIN_ROLE, AuditRow("a2", 11.0, "cli", "grant", "nobody", "", "{}")) is None
    )
    # Nothing of the refused one; the target as the account spells its name.
    assert [(row.id, row.target) for row in store.audit_log(10)] == [("a1", "Player1")]
    # The server upserts the account whole (a ban, say): the role stays as granted.
    store.commit([msgspec.structs.replace(found, role="", revision=3, ban_reason="spam", ban_until=None)])
    again = store.account(found.id)
    assert again is not None and (again.role, again.revision, again.ban_reason) == (ADMIN_ROLE, 3, "spam")
    assert store.account(99) is None


def test_the_audit_log_filters_by_actor_action_target_and_time(store: SQLStore) -> None:
    rows = [
        AuditRow(f"a{n}", float(n), actor, action, target, "", "{}")
        for n, (actor, action, target) in enumerate(
            [("ann", "ban", "bob"), ("ann", "mute", "bob"), ("cid", "ban", "dan"), ("ann", "ban", "dan")]
        )
    ]
    store.commit(rows)
    assert [row.id for row in store.audit_log(10)] == ["a3", "a2", "a1", "a0"]
    assert [row.id for row in store.audit_log(2)] == ["a3", "a2"]
    assert [row.id for row in store.audit_log(10, actor="ann", action="ban")] == ["a3", "a0"]
    assert [row.id for row in store.audit_log(10, target="dan")] == ["a3", "a2"]
    assert [row.id for row in store.audit_log(10, since=1.0, before=3.0)] == ["a2", "a1"]


def test_an_account_seen_updates_its_last_seen_alone(store: SQLStore) -> None:
    store.commit(populate_async(accounts=2, games=0, turns=0))
    before = store.account(1)
    assert before is not None and before.last_seen is None
    store.commit([AccountSeen(1, 42.5), AccountSeen(99, 1.0)])  # 99 is no account: nothing written
    assert store.account(1) == msgspec.structs.replace(before, last_seen=42.5)
    assert store.account(99) is None and [a.id for a in store.accounts()] == [1, 2]


def test_an_erased_account_renames_chat_drops_notifications_and_rewrites_finished_games(
    store: SQLStore,
) -> None:
    store.commit([*populate_async(accounts=3, games=4, turns=0), *populate_social()])
    live = store.load_async_games()
    over = store.finished_async_games()
    assert [row.status for row in over] == ["OVER"] and live
    # One commit: the erasure and another record; a live game named in it is not rewritten,
    # nor is a game no longer stored brought back.
    games = [(over[0].id, b"rewritten"), (live[0].id, b"rewritten"), (99, b"rewritten")]
    store.commit([ChatRow(1, 50, 2, "bob", "late line", 0, 9.0), AccountErased(2, "deleted-2", games)])
    assert [row.doc for row in store.finished_async_games()] == [b"rewritten"]
    assert store.load_async_games() == live and store.load_async_game(99) is None
    assert {row.sender_name for row in store.load_chat([1], 100)[1] if row.sender == 2} == {"deleted-2"}
    assert [row.account_id for row in store.pending_notifications(now=1e12, limit=10)] == [1]


# ---------------------------------------------------------------------------------------------
# Game results (schema v7): players' profiles


def seat(
    game_id: int, number: int, account_id: int | None, rank: int | None, **rating: float
) -> GameResultRow:
    """Seat ``number`` of game ``game_id`` (ended at 9000 + the game's id), with ``rank``; its
    rating after the game when ``mu`` is given."""
    return GameResultRow(
        game_id=game_id,
        seat=number,
        game_type="tsuro" if game_id > 100 else "fish",
        at=9000.0 + game_id,
        account_id=account_id,
        name=f"Player{account_id}" if account_id else f"Robot {number}",
        rank=rank,
        score=None if rank is None else 10.0 - rank,
        mu=rating.get("mu"),
        sigma=None if "mu" not in rating else 8.0,
        games=None if "mu" not in rating else int(rating.get("games", 1)),
        change=None if "mu" not in rating else 0.5,
    )


def profile_games() -> list[GameResultRow]:
    """Account 1's games: it beats 2 (ranked), loses to 2 and beats a robot (unranked), draws
    with 3 and beats 2 in a three-seat Tsuro game (ranked), then an aborted Tsuro game against 2."""
    return [
        seat(1, 1, 1, 1, mu=27.0, games=1),
        seat(1, 2, 2, 2, mu=23.0, games=1),
        seat(2, 1, 1, 2),
        seat(2, 2, 2, 1),
        seat(2, 3, None, 3),
        seat(101, 1, 3, 1, mu=26.0, games=1),
        seat(101, 2, 1, 1, mu=26.5, games=1),
        seat(101, 3, 2, 3, mu=22.0, games=1),
        seat(102, 1, 1, None, mu=25.5, games=2),
        seat(102, 2, 2, None),
    ]


def test_an_accounts_recent_games_are_every_seat_newest_first(store: SQLStore) -> None:
    results = profile_games()
    store.commit([*(account(n) for n in (1, 2, 3)), *results])
    recent = store.recent_results(1, 2)
    assert recent == [row for row in results if row.game_id == 102] + [
        row for row in results if row.game_id == 101
    ]
    assert [row.game_id for row in store.recent_results(1, 10)] == [102, 102, 101, 101, 101, 2, 2, 2, 1, 1]
    assert store.recent_results(3, 10) == [row for row in results if row.game_id == 101]
    assert store.recent_results(4, 10) == [] and store.recent_results(1, 0) == []


def test_an_accounts_rating_history_is_its_rated_games_oldest_first(store: SQLStore) -> None:
    results = profile_games()
    store.commit([*(account(n) for n in (1, 2, 3)), *results])
    # The unranked game 2 did not rate anyone; the abort's penalty did.
    assert [(row.game_id, row.game_type, row.mu) for row in store.rating_history(1, 10)] == [
        (1, "fish", 27.0),
        (101, "tsuro", 26.5),
        (102, "tsuro", 25.5),
    ]
    assert [row.game_id for row in store.rating_history(1, 2)] == [101, 102]  # the last ones
    assert store.rating_history(3, 10) == [results[5]]


def test_an_accounts_record_against_each_opponent_counts_ranked_seats_only(store: SQLStore) -> None:
    store.commit([*(account(n) for n in (1, 2, 3)), *profile_games()])
    # Against 2: won game 1, lost game 2, won the Tsuro game; the aborted game has no ranks.
    assert store.opponents(1, 10) == [
        Opponent(account_id=2, name="Player2", wins=2, losses=1, draws=0),
        Opponent(account_id=3, name="Player3", wins=0, losses=0, draws=1),
        Opponent(account_id=None, name="Robot 3", wins=1, losses=0, draws=0),
    ]
    assert store.opponents(1, 1) == [Opponent(account_id=2, name="Player2", wins=2, losses=1, draws=0)]
    assert store.opponents(2, 10)[0] == Opponent(account_id=1, name="Player1", wins=1, losses=2, draws=0)
    # An anonymised account is named by its alias, in the results as in its account row.
    store.commit([msgspec.structs.replace(account(2), name="deleted-2"), AccountErased(2, "deleted-2")])
    assert store.opponents(1, 10)[0].name == "deleted-2"
    assert {row.name for row in store.recent_results(1, 10) if row.account_id == 2} == {"deleted-2"}


def test_a_game_that_ends_again_replaces_its_results(store: SQLStore) -> None:
    """A game whose end was stored though its commit was refused, restored and ended again (by
    a new owner, say), writes its seats' results again: they replace the first, and the commit
    never fails for ever on them."""
    store.commit([seat(1, 1, 1, 2), seat(1, 2, 2, 1)])
    store.commit([seat(1, 1, 1, 1, mu=27.0), seat(1, 2, 2, 2, mu=23.0)])
    # Every seat of the account's games, as written the second time.
    second = [(1, 1, 27.0), (2, 2, 23.0)]
    assert [(row.seat, row.rank, row.mu) for row in store.recent_results(1, 10)] == second
    assert [(row.seat, row.rank, row.mu) for row in store.recent_results(2, 10)] == second
