"""The tables' declarations (storage/tables.py): one per record type, the same columns as the
records' fields and the migrated schema on both backends, and every record type written and read
back through them."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from parlour.storage import (
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
    Fence,
    GameResultRow,
    GameRow,
    GameSnapshotRow,
    Heartbeat,
    MetaRow,
    MoveRow,
    NotificationRow,
    PlayerGone,
    PlayerRow,
    RatingRow,
    Record,
    RelationGone,
    RelationRow,
    ReportRow,
    SeatRow,
)
from parlour.storage.postgres import PostgresStore
from parlour.storage.sql import TABLES, SQLStore
from parlour.storage.tables import (
    DECLARED,
    DELETE,
    INSERT,
    META,
    MOVE_RUNS,
    MOVES,
    PACK,
    TABLE_OF,
    UPSERT,
    WRITES,
    Table,
)
from parlour.storage.writes import STATEMENTS
from tests.storage.conftest import open_at
from tests.storage.rows import (
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
    rating,
    relation,
    report,
)

#: One record of each type that is a row, with the rows it refers to before it.
PARENTS: list[Record] = [account(1), account(2), async_game(1), game(9)]
SAMPLES: dict[type[Any], Any] = {
    PlayerRow: player(1),
    # Every field set: the JSON columns, and None where a column may be NULL.
    GameRow: finished_game(1, finished=300.0, moves=1),
    MoveRow: move_rows("game-0009", 1)[0],
    GameSnapshotRow: game_snapshot("game-0009", 1),
    AccountRow: msgspec.structs.replace(
        account(3, password_hash=""), role="admin", revision=2, ban_reason="spam", ban_until=5000.0
    ),
    AsyncGameRow: async_game(2, "OVER"),
    AsyncTurnRow: async_turns(1, 1)[0],
    RatingRow: rating(1),
    MetaRow: MetaRow("motd", "hello"),
    Heartbeat: Heartbeat(1234.5),
    ChatRow: chat_lines(0, 1)[0],
    RelationRow: relation(1, 2, "ignore"),
    ReportRow: report(1, at=8001.0),
    DeviceRow: device(1),
    NotificationRow: notification(1, delivered=None),
    AuditRow: AuditRow("0001", 8000.5, "Player1", "ban", "Player2", "spam", '{"until": null}'),
    GameResultRow: GameResultRow(4, 1, "fish", 8002.0, 1, "Player1", 1, 12.0, 27.5, 7.9, 1, 1.2),
}


def _one(rows: list[Any], **key: Any) -> Any:
    """The row of ``rows`` with those key values, or None."""
    found = [row for row in rows if all(getattr(row, name) == value for name, value in key.items())]
    assert len(found) <= 1
    return found[0] if found else None


def _first_move(store: SQLStore, game_id: str) -> MoveRow | None:
    loaded = store.load_game(game_id)
    return loaded[1][0] if loaded and loaded[1] else None


def _meta(store: SQLStore, key: str) -> MetaRow | None:
    value = store.meta(key)
    return None if value is None else MetaRow(key, value)


def _heartbeat(store: SQLStore) -> Heartbeat | None:
    at = store.load_live().heartbeat
    return None if at is None else Heartbeat(at)


#: How the store's own reads find the row of each record type again (None: it is not there).
READS: dict[type[Any], Callable[[SQLStore, Any], Any]] = {
    PlayerRow: lambda store, row: store.load_player(row.id),
    GameRow: lambda store, row: (store.load_game(row.id) or (None,))[0],
    MoveRow: lambda store, row: _first_move(store, row.game_id),
    GameSnapshotRow: lambda store, row: store.load_live().states.get(row.game_id),
    AccountRow: lambda store, row: store.account_by_name(row.name),
    AsyncGameRow: lambda store, row: store.load_async_game(row.id),
    AsyncTurnRow: lambda store, row: _one(store.async_turns(row.game_id), turn_index=row.turn_index),
    RatingRow: lambda store, row: _one(store.ratings(), account_id=row.account_id, game_type=row.game_type),
    MetaRow: lambda store, row: _meta(store, row.key),
    Heartbeat: lambda store, row: _heartbeat(store),
    ChatRow: lambda store, row: _one(store.load_chat([row.scope], 10)[row.scope], seq=row.seq),
    RelationRow: lambda store, row: _one(store.relations(), owner=row.owner, other=row.other, kind=row.kind),
    ReportRow: lambda store, row: _one(store.reports(10), reporter=row.reporter, at=row.at),
    DeviceRow: lambda store, row: _one(store.devices(), account_id=row.account_id, token=row.token),
    NotificationRow: lambda store, row: _one(store.pending_notifications(row.next_attempt, 10), id=row.id),
    AuditRow: lambda store, row: _one(store.audit_log(10), id=row.id),
    GameResultRow: lambda store, row: _one(store.recent_results(row.account_id, 10), seat=row.seat),
}


def _fields(record: type[Any]) -> tuple[str, ...]:
    return tuple(field.name for field in msgspec.structs.fields(record))


def test_every_record_the_store_takes_has_exactly_one_declaration() -> None:
    records = set(typing.get_args(Record))
    # A Fence is a condition on a commit, not a row; every other record is written one way: as
    # a table's row, or by statements of its own (an account's traces, its last_seen).
    assert set(WRITES) == records - {Fence, *STATEMENTS} and not set(WRITES) & set(STATEMENTS)
    assert {write.action for write in WRITES.values()} == {INSERT, UPSERT, DELETE, PACK}
    # Each table is declared once, holds its own kind of record, and is the table of that record;
    # but moves are packed into runs (schema v11), and read from ``moves`` (their rows of before)
    # and from ``move_runs``.
    assert len({table.name for table in DECLARED}) == len(DECLARED) == len(TABLE_OF)
    assert [record for record, write in WRITES.items() if write.action == PACK] == [MoveRow]
    assert WRITES[MoveRow].table is MOVE_RUNS and TABLE_OF[MoveRow] is MOVES
    for record, write in WRITES.items():
        assert write.table in DECLARED
        if record in TABLE_OF and write.action != PACK:
            assert write.table is TABLE_OF[record]
    assert WRITES[Heartbeat].table is META
    # What ``check`` counts and an import wants empty: every table of rows, parents first (the
    # order rows are written in, and tests/pg.py deletes in reverse).
    assert TABLES == (
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
        "chat",
        "relations",
        "reports",
        "devices",
        "notifications",
        "audit",
        "game_results",
    )
    # Every record type has a round trip below.
    assert set(SAMPLES) | {record for record, write in WRITES.items() if write.action == DELETE} == set(
        WRITES
    )
    assert set(READS) == set(SAMPLES)


def test_a_table_holds_its_records_fields_and_a_gone_record_its_key() -> None:
    for table in DECLARED:
        assert table.fields == _fields(table.record)
        assert table.columns[: len(table.fields)] == table.fields
        assert set(table.key) <= set(table.columns)
    assert TABLE_OF[AccountRow].columns == (*_fields(AccountRow), "name_key")
    for record, write in WRITES.items():
        if write.action == DELETE:
            assert _fields(record) == write.table.key
        elif write.action == UPSERT:
            # A row's key is its leading values: what one commit's upserts are merged by.
            assert write.table.columns[: len(write.table.key)] == write.table.key


def _schema(store: SQLStore) -> dict[str, tuple[set[str], tuple[str, ...]]]:
    """Every table of the store's migrated schema: its columns and its primary key in order."""
    found: dict[str, tuple[set[str], tuple[str, ...]]] = {}
    if isinstance(store, PostgresStore):
        rows = store._read(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        )
        keys = store._read(
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c "
            "JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name "
            "AND k.table_schema = c.table_schema AND k.table_name = c.table_name "
            "WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema() "
            "ORDER BY k.table_name, k.ordinal_position"
        )
        for name, column in rows:
            found.setdefault(name, (set(), ()))[0].add(column)
        for name, column in keys:
            columns, key = found[name]
            found[name] = columns, (*key, column)
        return found
    for (name,) in store._read("SELECT name FROM sqlite_master WHERE type = 'table'"):
        info = store._read(f"PRAGMA table_info({name})")
        # Each column's position in the primary key, from 1 (0: not in it).
        key = tuple(row[1] for row in sorted(info, key=lambda row: row[5]) if row[5])
        found[name] = {row[1] for row in info}, key
    return found


def _disagreements(
    tables: tuple[Table[Any], ...], schema: dict[str, tuple[set[str], tuple[str, ...]]]
) -> list[str]:
    """How the declarations and the schema differ (nothing: they agree)."""
    problems = [f"{name}: in the schema, not declared" for name in schema.keys() - {t.name for t in tables}]
    for table in tables:
        if table.name not in schema:
            problems.append(f"{table.name}: declared, not in the schema")
            continue
        columns, key = schema[table.name]
        problems.extend(
            f"{table.name}.{column}: declared, not in the schema" for column in set(table.columns) - columns
        )
        problems.extend(
            f"{table.name}.{column}: in the schema, not declared" for column in columns - set(table.columns)
        )
        if key != table.key:
            problems.append(f"{table.name}: key {table.key}, the schema's {key}")
    return problems


def test_the_declared_tables_are_the_migrated_schema(store: SQLStore) -> None:
    assert _disagreements(DECLARED, _schema(store)) == []


def test_a_field_added_to_a_record_but_not_to_the_schema_is_found(store: SQLStore) -> None:
    class Grown(msgspec.Struct, frozen=True):
        id: str
        handle: str
        registered: float
        last_active: float
        nickname: str

    grown = Table("players", Grown, ("id",), "id")
    others = tuple(table for table in DECLARED if table.name != "players")
    assert _disagreements((*others, grown), _schema(store)) == [
        "players.nickname: declared, not in the schema"
    ]
    rekeyed = Table("players", PlayerRow, ("handle",), "id")
    assert _disagreements((*others, rekeyed), _schema(store)) == [
        "players: key ('handle',), the schema's ('id',)"
    ]


def test_a_row_made_of_a_record_reads_back_as_that_record() -> None:
    for record, sample in SAMPLES.items():
        write = WRITES[record]
        if write.table.record is not record:
            continue  # a Heartbeat is a meta value
        values = write.values(sample)
        assert len(values) == len(write.table.columns)
        assert write.table.load(values[: len(write.table.fields)]) == sample
    # JSON columns are text, and a missing result stays NULL rather than the text "null".
    games = TABLE_OF[GameRow]
    values = dict(zip(games.columns, games.values(game(1)), strict=True))
    assert values["result"] is None
    assert msgspec.json.decode(values["seats"], type=list[SeatRow]) == game(1).seats


def test_each_record_type_round_trips_through_a_commit_and_the_stores_reads(store: SQLStore) -> None:
    store.commit([*PARENTS, *SAMPLES.values()])
    for record, sample in SAMPLES.items():
        assert READS[record](store, sample) == sample, record.__name__


def test_each_gone_record_deletes_its_row(store: SQLStore) -> None:
    store.commit([*PARENTS, *SAMPLES.values()])
    gone = {record: write for record, write in WRITES.items() if write.action == DELETE}
    assert set(gone) == {PlayerGone, RelationGone, DeviceGone}
    for record, write in gone.items():
        row = SAMPLES[write.table.record]
        store.commit([record(*(getattr(row, column) for column in write.table.key))])
        assert READS[write.table.record](store, row) is None, record.__name__
    # The rows of other keys are still there.
    assert READS[AccountRow](store, SAMPLES[AccountRow]) == SAMPLES[AccountRow]


#: Pairs of versions of one row (the second changes every column but the key): saved in one
#: commit, or in two, they end the same (an upsert keeps its ``kept`` columns as first written).
VERSIONS: list[tuple[Record, Record]] = [
    (player(1), PlayerRow("player-0001", "renamed", registered=5.0, last_active=9.0)),
    (
        game(1),
        finished_game(1, 900.0, protocol="fish", game="fish", created=1.0, seed=5, moves=0, name="Other"),
    ),
    (account(3), AccountRow(3, "Renamed", "", created=1.0)),
    (async_game(1), async_game(1, "OVER", game_type="go", created=1.0, updated=2.0, doc=b"x")),
    (async_turns(1, 1)[0], AsyncTurnRow(1, 0, 1.0, b"y")),
    (rating(1), rating(1, mu=30.0, sigma=2.0)),
    (MetaRow("motd", "one"), MetaRow("motd", "two")),
    (relation(1, 2), RelationRow(1, 2, "buddy", added=1.0)),
    (device(1), DeviceRow(1, "FCM", "token-1", linked=1.0)),
    (notification(1), notification(1, account_id=2, created=1.0, attempts=3, delivered=5.0)),
]


def test_rows_of_one_key_in_one_commit_end_as_in_commits_one_by_one(
    store: SQLStore, new_location: Callable[[], str]
) -> None:
    parents: list[Record] = [account(1), account(2)]
    store.commit(parents)
    store.commit([row for pair in VERSIONS for row in pair])
    apart = open_at(new_location())
    try:
        apart.commit(parents)
        apart.commit([first for first, _ in VERSIONS])
        apart.commit([second for _, second in VERSIONS])
        assert list(store.export()) == list(apart.export())
        assert store.check() == apart.check()
    finally:
        apart.close()
    # Kept as first written: a player's registration, a game's protocol, type, creation and
    # seed, an account's and an async game's and a notification's creation, a relation's addition.
    assert store.load_player("player-0001") == PlayerRow("player-0001", "renamed", 1001.0, 9.0)
    loaded = store.load_game("game-0001")
    assert loaded is not None
    assert (loaded[0].protocol, loaded[0].created, loaded[0].seed, loaded[0].name) == (
        "apologies",
        101.0,
        7_000_000_001,
        "Other",
    )
    assert store.relations() == [relation(1, 2)]
    # The finished game's seats were written from its last version.
    assert [row.id for row in store.list_games(player="handle1")] == ["game-0001"]


def test_a_record_the_store_does_not_write_fails_the_commit_and_writes_nothing(store: SQLStore) -> None:
    with pytest.raises(TypeError, match="writes no SeatRow"):
        store.commit([player(1), SeatRow("alice", False, "PLAYING")])
    assert store.load_player(player(1).id) is None
