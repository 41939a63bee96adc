"""What is PostgreSQL's own in its store: opening (what is refused and left untouched, the
migrations of two openers at once), the URL's password kept out of messages, a lost connection,
the snapshot of an export, the backup into an SQLite file, and a commit mark read only once the
commit still under way ends. The behaviour both backends
share is tested in test_stores.py against each."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from parlour.storage import MetaRow, StoreFailure, StoreRefused, open_store
from parlour.storage.migrations import LATEST
from parlour.storage.postgres import PostgresStore, _QmarkCursor, redacted
from parlour.storage.sqlite import SQLiteStore
from tests.pg import PostgresServer
from tests.storage.rows import game, move_rows, populate, populate_async, populate_social


@pytest.fixture
def url(postgres_server: PostgresServer) -> str:
    """A new, empty schema: a store that does not exist yet."""
    return postgres_server.database()


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(url)
    yield opened
    opened.close()


def _sql(url: str, *statements: str) -> list[Any]:
    """Runs statements on a connection of its own; the last one's rows."""
    rows: list[Any] = []
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            cur = conn.execute(statement)
            rows = cur.fetchall() if cur.description else []
    return rows


def test_open_store_picks_postgresql_for_its_urls_and_the_sync_setting_is_per_connection(url: str) -> None:
    for spec, sync, setting in (
        (url, "normal", "local"),
        (url.replace("postgresql://", "postgres://"), "full", "on"),
    ):
        store = open_store(spec, sync)
        assert isinstance(store, PostgresStore)
        try:
            assert store.schema_version == LATEST
            assert store.location == spec  # no password to hide
            assert _one(store, "SHOW synchronous_commit") == setting
        finally:
            store.close()
    with pytest.raises(ValueError, match="store_sync"):
        PostgresStore(url, "sometimes")


def _one(store: PostgresStore, sql: str) -> Any:
    return store.cursor().execute(sql).fetchone()[0]


def test_the_password_of_the_url_never_shows() -> None:
    assert redacted("postgresql://ann:s3cret@db.example:5433/parlour?sslmode=require") == (
        "postgresql://ann:***@db.example:5433/parlour?sslmode=require"
    )
    assert redacted("postgresql://ann@db/parlour") == "postgresql://ann@db/parlour"
    # An unreachable server: refused on one line, without the password.
    with pytest.raises(StoreRefused) as refused:
        PostgresStore("postgresql://ann:s3cret@127.0.0.1:1/parlour?connect_timeout=2")
    message = str(refused.value)
    assert message.startswith("postgresql://ann:***@127.0.0.1:1/parlour")
    assert "cannot open the store" in message
    assert "s3cret" not in message and "\n" not in message


def test_a_database_of_something_else_is_refused_and_left_untouched(url: str) -> None:
    _sql(url, "CREATE TABLE invoices (id INTEGER PRIMARY KEY)", "INSERT INTO invoices VALUES (7)")
    with pytest.raises(
        StoreRefused, match="not a Parlour store \\(a PostgreSQL database of something else\\)"
    ):
        PostgresStore(url)
    tables = _sql(
        url, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    )
    assert tables == [("invoices",)]


def test_a_store_of_a_newer_schema_is_refused_and_left_untouched(store: PostgresStore, url: str) -> None:
    store.commit(populate(games=2, moves=2))
    before = store.check()["counts"]
    store.close()
    _sql(url, f"UPDATE parlour_meta SET value = '{LATEST + 1}' WHERE key = 'schema_version'")
    with pytest.raises(StoreRefused, match=f"schema version {LATEST + 1}, newer than this build's {LATEST}"):
        PostgresStore(url)
    counts = (_sql(url, "SELECT COUNT(*) FROM games"), _sql(url, "SELECT SUM(count) FROM move_runs"))
    assert counts == ([(before["games"],)], [(before["moves"],)])
    assert before["moves"] > 0


def test_openers_of_a_new_store_at_once_migrate_it_once(url: str) -> None:
    """Servers (or a server and its writer process) starting on an empty database together:
    the advisory lock lets one migrate, the others then find the latest version."""
    start = threading.Barrier(4)

    def open_it(_: int) -> int:
        start.wait()
        store = PostgresStore(url)
        try:
            return store.schema_version
        finally:
            store.close()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(open_it, range(4))) == [LATEST] * 4
    assert _sql(url, "SELECT value FROM parlour_meta WHERE key = 'schema_version'") == [(str(LATEST),)]


def test_a_lost_connection_fails_one_call_and_the_store_connects_again(
    store: PostgresStore, url: str
) -> None:
    store.commit(populate(games=1, moves=1))
    assert store.db is not None
    pid = store.db.info.backend_pid
    _sql(url, f"SELECT pg_terminate_backend({pid})")
    with pytest.raises(StoreFailure) as failed:
        store.commit(populate_async(accounts=1, games=1, turns=1))
    assert str(failed.value).startswith(store.location + ": ")
    # The next call connects again: the store works again without a restart.
    store.commit(populate_async(accounts=1, games=1, turns=1))
    assert [row.id for row in store.accounts()] == [1]
    assert store.check()["ok"] is True


def test_an_export_is_one_snapshot_while_another_connection_commits(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.commit([game(1, moves=2), *move_rows("game-0001", 2)])
    server = PostgresStore(url)
    committed = False
    execute = _QmarkCursor.execute

    def commit_before_the_moves_are_read(self: _QmarkCursor, sql: str, params: Any = ()) -> _QmarkCursor:
        # A server commits more moves and a new game just after the export has read the games.
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
        return execute(self, sql, params)

    monkeypatch.setattr(_QmarkCursor, "execute", commit_before_the_moves_are_read)
    exported = list(store.export())
    monkeypatch.undo()
    server.close()
    assert committed
    assert [(kind, fields["id"] if kind == "game" else fields["seq"]) for kind, fields in exported] == [
        ("game", "game-0001"),
        ("move", 0),
        ("move", 1),
    ]


def test_a_backup_is_an_sqlite_store_with_the_same_rows(store: PostgresStore, tmp_path: Path) -> None:
    store.commit(
        [*populate(games=4, moves=3), *populate_async(accounts=3, games=2, turns=2), *populate_social()]
    )
    store.heartbeat(1234.5)
    secret = store.ensure_secret("session_secret")
    target = tmp_path / "copy.db"
    store.backup(str(target))
    copy = SQLiteStore(target)
    try:
        assert list(copy.export()) == list(store.export())
        assert copy.check()["counts"] == store.check()["counts"]
        assert copy.ensure_secret("session_secret") == secret
        assert copy.load_live().heartbeat == 1234.5
    finally:
        copy.close()


def test_a_commit_mark_is_read_once_the_commit_still_under_way_ends(store: PostgresStore, url: str) -> None:
    """A commit whose client connection was lost may still be finishing in its backend: the
    mark it writes is read after it ends (the value it commits), never before (the old one,
    which would refuse as "nothing changed" what is in fact stored)."""
    store.commit([MetaRow("commit_mark_x", "1")])
    with psycopg.connect(url, autocommit=True) as late:
        late.execute("BEGIN")
        late.execute("UPDATE parlour_meta SET value = '2' WHERE key = 'commit_mark_x'")
        timer = threading.Timer(0.5, lambda: late.execute("COMMIT"))
        timer.start()
        started = time.monotonic()
        try:
            assert store.settled_meta("commit_mark_x") == "2"
            assert time.monotonic() - started >= 0.4
        finally:
            timer.join()
    # A backend that keeps its transaction open longer than the wait: the read fails (and the
    # runtime asks again), it never answers with the old value.
    with psycopg.connect(url, autocommit=True) as stuck:
        stuck.execute("BEGIN")
        stuck.execute("UPDATE parlour_meta SET value = '3' WHERE key = 'commit_mark_x'")
        with pytest.raises(StoreFailure):
            store.settled_meta("commit_mark_x")
        stuck.execute("ROLLBACK")
    assert store.settled_meta("commit_mark_x") == "2"
