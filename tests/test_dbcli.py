"""``parlour db check|export|import|backup``, run in-process through the command line's main."""

from __future__ import annotations

import base64
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.settings import Settings
from parlour.storage.migrations import LATEST
from parlour.storage.sqlite import SQLiteStore
from tests.pg import PostgresServer
from tests.storage.rows import (
    async_game,
    game,
    game_snapshot,
    move_rows,
    notification,
    populate,
    populate_async,
    populate_social,
)

#: What the export and import of the ``store_path`` fixture say they moved.
SUMMARY = (
    "2 players, 6 games, 16 moves, 1 game snapshot, 3 accounts, 4 async games, 9 async turns, 4 ratings, "
    "9 chat lines, 3 relations, 2 reports, 2 devices, 3 notifications, 1 audit record, 4 game results, 2 metadata values"
)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A store with two players and six games (three finished), and /async rows: three accounts,
    four games (one OVER) with nine turns, four ratings, a metadata value and the token secret;
    and the social rows of ``populate_social`` (chat, relations, reports, devices, notifications)."""
    path = tmp_path / "parlour.db"
    store = SQLiteStore(path)
    store.commit(
        [
            *populate(games=6, moves=4),
            game_snapshot("game-0002", 2),
            *populate_async(accounts=3, games=4, turns=3),
            *populate_social(),
        ]
    )
    store.ensure_secret("session_secret")
    store.close()
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _export(store: Path) -> list[tuple[str, dict[str, object]]]:
    opened = SQLiteStore(store)
    try:
        return list(opened.export())
    finally:
        opened.close()


# ---------------------------------------------------------------------------------------------
# check


def test_check_prints_the_report_and_succeeds_on_a_sound_store(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(capsys, "db", "check", "--store", str(store_path))
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"store: {store_path} (schema version {LATEST})",
        "integrity: ok",
        "foreign key problems: 0",
        "games with missing moves: 0",
        "snapshots ahead of their moves: 0",
        "players: 2",
        "games: 6 (ADVERTISED 2, COMPLETED 3, PLAYING 1)",
        "moves: 16 (4 runs)",
        "game snapshots: 1",
        "game seats: 6",
        "accounts: 3",
        "async games: 4 (NOT_STARTED 1, OUTCOME 1, OVER 1, RUNNING 1)",
        "async turns: 9",
        "ratings: 4",
        "chat lines: 9",
        "relations: 3",
        "reports: 2",
        "devices: 2",
        "notifications: 3",
        "audit records: 1",
        "game results: 4",
        "ok",
    ]
    status, out, _ = _run(capsys, "db", "check", "--store", str(store_path), "--json")
    assert status == 0
    report = json.loads(out)
    assert report["ok"] is True
    assert report["counts"] == {
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
    }


def test_check_fails_on_a_game_missing_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "parlour.db"
    store = SQLiteStore(path)
    store.commit([game(1, moves=3), *move_rows("game-0001", 2)])
    store.close()
    status, out, _ = _run(capsys, "db", "check", "--store", str(path))
    assert status == 1
    assert "games with missing moves: 1" in out.splitlines()
    assert out.splitlines()[-1].startswith("NOT OK")
    status, out, _ = _run(capsys, "db", "check", "--json", "--store", str(path))
    assert status == 1
    assert json.loads(out)["games_with_missing_moves"] == 1


def test_the_default_store_is_the_servers_and_a_missing_store_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for command in (["check"], ["export", "out.jsonl"], ["backup", "copy.db"]):
        status, out, err = _run(capsys, "db", *command)
        assert (status, out) == (1, "")
        assert err == f"parlour: {Settings().store}: no such store\n"
    assert list(tmp_path.iterdir()) == []


def test_no_store_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "db", "check", "--store", "none")
    assert status == 2
    assert err == "parlour: --store none keeps nothing on disk: name a store file\n"


@pytest.mark.parametrize(
    "command", [["check"], ["export", "-"], ["import", "-"], ["backup", "copy.db"]], ids=lambda c: c[0]
)
def test_every_command_refuses_a_file_that_is_not_a_store_and_leaves_it_alone(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n")
    status, out, err = _run(capsys, "db", *command, "--store", str(notes))
    assert (status, out) == (1, "")
    assert err == f"parlour: {notes}: not a Parlour store (not an SQLite database)\n"
    assert notes.read_text() == "not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


# ---------------------------------------------------------------------------------------------
# export and import


def test_an_export_imported_into_a_new_store_exports_the_same_file(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "dump.jsonl"
    status, out, err = _run(capsys, "db", "export", str(dump), "--store", str(store_path))
    assert (status, err) == (0, "")
    assert out == f"exported {SUMMARY} to {dump}\n"
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [line["kind"] for line in lines] == (
        ["player"] * 2
        + ["game"] * 6
        + ["move"] * 16
        + ["game_snapshot"]
        + ["account"] * 3
        + ["async_game"] * 4
        + ["async_turn"] * 9
        + ["rating"] * 4
        + ["chat"] * 9
        + ["relation"] * 3
        + ["report"] * 2
        + ["device"] * 2
        + ["notification"] * 3
        + ["audit"]
        + ["game_result"] * 4
        + ["meta"] * 2
    )
    # Bytes as base64 text; the store's own metadata (version, heartbeat) is not exported.
    first_game = next(line["fields"] for line in lines if line["kind"] == "async_game")
    assert base64.b64decode(first_game["doc"]) == async_game(1, "NOT_STARTED").doc
    first_notification = next(line["fields"] for line in lines if line["kind"] == "notification")
    assert base64.b64decode(first_notification["payload"]) == notification(1).payload
    assert [line["fields"]["key"] for line in lines if line["kind"] == "meta"] == ["motd", "session_secret"]
    assert [[line["kind"], line["fields"]] for line in lines] == [
        [kind, fields] for kind, fields in json.loads(json.dumps(_export(store_path)))
    ]

    copy = tmp_path / "new" / "copy.db"
    status, out, err = _run(capsys, "db", "import", str(dump), "--store", str(copy))
    assert (status, err) == (0, "")
    assert out == f"imported {SUMMARY} into {copy}\n"
    again = tmp_path / "again.jsonl"
    assert _run(capsys, "db", "export", str(again), "--store", str(copy))[0] == 0
    assert again.read_bytes() == dump.read_bytes()


def test_export_and_import_through_stdout_and_stdin(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, err = _run(capsys, "db", "export", "-", "--store", str(store_path))
    assert status == 0
    assert len(out.splitlines()) == 24 + 1 + 3 + 4 + 9 + 4 + 20 + 4 + 2
    assert err == f"exported {SUMMARY}\n"  # the summary keeps off stdout
    monkeypatch.setattr("sys.stdin", io.StringIO(out))
    copy = tmp_path / "copy.db"
    status, printed, _ = _run(capsys, "db", "import", "-", "--store", str(copy))
    assert status == 0
    assert printed == f"imported {SUMMARY} into {copy}\n"
    assert _export(copy) == _export(store_path)


def test_an_export_never_overwrites_a_file(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not even the store itself, named by mistake.
    before = store_path.read_bytes()
    status, out, err = _run(capsys, "db", "export", str(store_path), "--store", str(store_path))
    assert (status, out) == (1, "")
    assert err == f"parlour: {store_path} exists: an export never overwrites a file\n"
    assert store_path.read_bytes() == before


def test_an_import_into_a_store_with_rows_is_refused_and_changes_nothing(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "dump.jsonl"
    assert _run(capsys, "db", "export", str(dump), "--store", str(store_path))[0] == 0
    before = _export(store_path)
    status, out, err = _run(capsys, "db", "import", str(dump), "--store", str(store_path))
    assert (status, out) == (1, "")
    assert err == f"parlour: {store_path}: the store is not empty: import only into a new store\n"
    assert _export(store_path) == before


PLAYER = '{"kind": "player", "fields": {"id": "p", "handle": "h", "registered": 1.0, "last_active": 2.0}}\n'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (PLAYER + "not json\n", "dump.jsonl line 2: not a row of an export"),
        ('{"kind": "table", "fields": {"id": "t"}}\n', "dump.jsonl line 1: unknown kind of row 'table'"),
        (
            PLAYER + '{"kind": "player", "fields": {"id": "p"}}\n',
            "dump.jsonl line 2: the player does not fit: Object missing required field `handle`",
        ),
        (
            '{"kind": "move", "fields": {"game_id": "nowhere", "seq": 0, "seat": 0, "kind": "move", '
            '"choice": 0, "at": 1.0}}\n',
            "FOREIGN KEY constraint failed",
        ),
        (
            '{"kind": "meta", "fields": {"key": "schema_version", "value": "99"}}\n',
            "dump.jsonl line 1: the meta does not fit: parlour_meta key 'schema_version' belongs to the store",
        ),
        (
            '{"kind": "async_game", "fields": {"id": 1, "game_type": "chess", "status": "RUNNING", '
            '"created": 1.0, "updated": 1.0, "doc": "not base64!"}}\n',
            "dump.jsonl line 1: the async_game does not fit: Invalid base64 encoded string",
        ),
        (
            '{"kind": "async_turn", "fields": {"game_id": 5, "turn_index": 0, "at": 1.0, "doc": ""}}\n',
            "FOREIGN KEY constraint failed",
        ),
        (
            '{"kind": "relation", "fields": {"owner": 1, "other": 2, "kind": "friend", "added": 1.0}}\n',
            "dump.jsonl line 1: the relation does not fit: a relation is one of buddy, ignore, not 'friend'",
        ),
        (
            '{"kind": "relation", "fields": {"owner": 1, "other": 2, "kind": "ignore", "added": 1.0}}\n',
            "FOREIGN KEY constraint failed",
        ),
    ],
    ids=[
        "not-json",
        "unknown-kind",
        "missing-fields",
        "move-of-no-game",
        "store-meta",
        "not-base64",
        "turn-of-no-game",
        "relation-of-no-kind",
        "relation-of-no-account",
    ],
)
def test_a_bad_export_is_refused_with_where_and_leaves_no_store_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text(text)
    copy = tmp_path / "copy.db"
    status, out, err = _run(capsys, "db", "import", str(dump), "--store", str(copy))
    assert (status, out) == (1, "")
    assert err.startswith("parlour: ")
    assert problem in err
    assert err.count("\n") == 1
    assert not copy.exists()


def test_an_import_of_a_missing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(
        capsys, "db", "import", str(tmp_path / "nope.jsonl"), "--store", str(tmp_path / "s.db")
    )
    assert status == 1
    assert err == f"parlour: {tmp_path / 'nope.jsonl'}: No such file or directory\n"
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# backup


def test_a_backup_opens_as_the_same_store_and_never_overwrites_a_file(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.db"
    status, out, err = _run(capsys, "db", "backup", str(copy), "--store", str(store_path))
    assert (status, err) == (0, "")
    assert out == f"backed up {store_path} to {copy}\n"
    assert _export(copy) == _export(store_path)
    before = copy.read_bytes()
    status, out, err = _run(capsys, "db", "backup", str(copy), "--store", str(store_path))
    assert (status, out) == (1, "")
    assert err == f"parlour: {copy} exists: a backup never overwrites a file\n"
    assert copy.read_bytes() == before


def test_a_backup_in_another_process_while_a_connection_is_writing_copies_what_was_committed(
    store_path: Path, tmp_path: Path
) -> None:
    """What an operator does beside a running server: the writer keeps its write lock
    throughout, and the backup neither waits for it nor copies its uncommitted rows."""
    committed = _export(store_path)
    writer = sqlite3.connect(store_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO players VALUES ('p-new', 'newcomer', 1.0, 1.0)")
    copy = tmp_path / "copy.db"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARLOUR_")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "parlour", "db", "backup", str(copy), "--store", str(store_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        )
        writer.execute("INSERT INTO players VALUES ('p-newer', 'latecomer', 2.0, 2.0)")
        writer.execute("COMMIT")
    finally:
        writer.close()
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"backed up {store_path} to {copy}\n"
    assert _export(copy) == committed
    assert len(_export(store_path)) == len(committed) + 2


# ---------------------------------------------------------------------------------------------
# A PostgreSQL store (--store postgresql://...)


def test_every_command_works_on_a_postgresql_store(
    store_path: Path, tmp_path: Path, postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SQLite store's export imported into PostgreSQL, checked, exported the same, and backed
    up into an SQLite file that exports the same again."""
    exported = tmp_path / "export.jsonl"
    assert _run(capsys, "db", "export", "--store", str(store_path), str(exported))[0] == 0
    url = postgres_server.database()
    status, out, _ = _run(capsys, "db", "import", "--store", url, str(exported))
    assert status == 0 and out == f"imported {SUMMARY} into {url}\n"
    status, out, _ = _run(capsys, "db", "check", "--store", url)
    assert status == 0, out
    assert out.splitlines()[0] == f"store: {url} (schema version {LATEST})"
    assert out.splitlines()[-1] == "ok"
    again = tmp_path / "again.jsonl"
    assert _run(capsys, "db", "export", "--store", url, str(again))[0] == 0
    assert again.read_text() == exported.read_text()
    # A second import into it is refused: the store has rows.
    status, _, err = _run(capsys, "db", "import", "--store", url, str(exported))
    assert status == 1 and "not empty" in err
    copy = tmp_path / "copy.db"
    assert _run(capsys, "db", "backup", "--store", url, str(copy))[0] == 0
    assert _export(copy) == _export(store_path)


def test_a_postgresql_store_that_cannot_be_reached_is_one_line_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(
        capsys, "db", "check", "--store", "postgresql://ann:s3cret@127.0.0.1:1/none?connect_timeout=2"
    )
    assert status == 1 and out == ""
    assert err.startswith("parlour: postgresql://ann:***@127.0.0.1:1/none") and err.count("\n") == 1
    assert "s3cret" not in err


def test_admin_grant_and_revoke_set_the_role_and_audit_it(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    status, out, _ = _run(
        capsys, "admin", "grant", "player2", "--store", str(store_path), "--reason", "on call"
    )
    assert (status, out) == (0, "Player2 is now an admin\n")
    status, out, err = _run(capsys, "admin", "grant", "nobody", "--store", str(store_path))
    assert status == 1 and "no account is named 'nobody'" in err
    store = SQLiteStore(store_path)
    try:
        found = store.account_by_name("Player2")
        assert found is not None and found.role == "admin"
        (granted,) = store.audit_log(10, action="grant")
        assert (granted.actor, granted.target, granted.reason) == ("cli", "Player2", "on call")
    finally:
        store.close()
    status, out, _ = _run(capsys, "admin", "revoke", "Player2", "--store", str(store_path))
    assert (status, out) == (0, "Player2 is no longer an admin\n")
    store = SQLiteStore(store_path)
    try:
        found = store.account_by_name("Player2")
        assert found is not None and found.role == ""
        assert [row.action for row in store.audit_log(10, actor="cli")] == ["revoke", "grant"]
    finally:
        store.close()
    status, _, err = _run(capsys, "admin", "grant", "ann", "--store", str(store_path.with_name("none.db")))
    assert status == 1 and "no such store" in err
