"""Every table the store writes, declared once, and which records write to it and how.

A ``Table`` names its table, its key and the record a row reads back as; its columns are that
record's fields (``msgspec.structs.fields``, in the struct's order) plus any derived from them
(``accounts.name_key``). A field that is not a plain value (a dict, a list) is stored as JSON
text. The statements that write and read whole rows, and the functions that turn a record into
its column values and a row back into a record, are built from the declaration once, at
import: the write path is hot.

``WRITES`` says, for each record type the store accepts, the table it goes to and whether it
is inserted (a row that is only ever added), upserted (saved again whenever it changes) or
deleted (a "Gone" record: the key of the row to delete), or packed (moves: a commit's moves of
one game go into one row of ``move_runs``, storage/runs.py). The columns of the migrated schema are
these columns; tests/storage/test_tables.py fails when a struct and its table part.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import msgspec

from parlour.storage.records import (
    STORE_META_KEYS,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
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
    RelationGone,
    RelationRow,
    ReportRow,
)

__all__ = [
    "ACCOUNTS",
    "ASYNC_GAMES",
    "ASYNC_TURNS",
    "AUDIT",
    "CHAT",
    "DECLARED",
    "DELETE",
    "DEVICES",
    "GAMES",
    "GAME_RESULTS",
    "GAME_SEATS",
    "INSERT",
    "META",
    "MOVES",
    "MOVE_RUNS",
    "NOTIFICATIONS",
    "PACK",
    "PLAYERS",
    "RATINGS",
    "RELATIONS",
    "REPORTS",
    "SNAPSHOTS",
    "TABLE_OF",
    "UPSERT",
    "WRITES",
    "Action",
    "GameSeat",
    "MoveRun",
    "Table",
    "Write",
]

R = TypeVar("R", bound=msgspec.Struct)

#: Field types stored as they are; anything else (dicts, lists, structs) is stored as JSON text.
#: Not bool: SQLite would read it back as an int (a seat's ``robot`` is an int column).
_PLAIN = (str, int, float, bytes, type(None))
_encode = msgspec.json.encode
_astuple = msgspec.structs.astuple


def _stored_as_json(annotation: Any) -> bool:
    members = (
        typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else (annotation,)
    )
    return any(member not in _PLAIN for member in members)


def _to_json(value: Any) -> str | None:
    # None stays NULL (a game's result before it ends), not the text "null".
    return None if value is None else _encode(value).decode()


class Table(Generic[R]):
    """One table: its rows are records of type ``record`` (see the module's text)."""

    __slots__ = (
        "columns",
        "delete",
        "fields",
        "insert",
        "kept",
        "kept_index",
        "key",
        "load",
        "name",
        "order",
        "record",
        "select",
        "upsert",
        "values",
    )

    def __init__(
        self,
        name: str,
        record: type[R],
        key: tuple[str, ...],
        order: str,
        kept: tuple[str, ...] = (),
        derived: tuple[tuple[str, Callable[[R], Any]], ...] = (),
    ) -> None:
        """``kept``: the columns an upsert leaves as they were first written (a player's
        registration, a relation's ``added``); ``derived``: columns that are no field of the
        record, each with what computes it; ``order``: how a full listing (an export) sorts."""
        self.name = name
        self.record = record
        self.key = key
        self.order = order
        self.kept = kept
        info = msgspec.structs.fields(record)
        self.fields = tuple(field.name for field in info)
        self.columns = self.fields + tuple(column for column, _ in derived)
        unknown = [column for column in (*key, *kept) if column not in self.columns]
        if unknown:
            raise ValueError(f"{name}: {', '.join(unknown)} are not columns of {record.__name__}")
        self.kept_index = tuple(self.columns.index(column) for column in kept)
        self.select = ", ".join(self.fields)
        self.insert = f"INSERT INTO {name} ({', '.join(self.columns)}) VALUES "
        updated = [column for column in self.columns if column not in key and column not in kept]
        self.upsert = f" ON CONFLICT ({', '.join(key)}) " + (
            "DO UPDATE SET " + ", ".join(f"{column} = excluded.{column}" for column in updated)
            if updated
            else "DO NOTHING"
        )
        self.delete = f"DELETE FROM {name} WHERE " + " AND ".join(f"{column} = ?" for column in key)
        as_json = tuple(index for index, field in enumerate(info) if _stored_as_json(field.type))
        self.values: Callable[[R], tuple[Any, ...]] = _values(as_json, derived)
        self.load: Callable[[Sequence[Any]], R] = _loader(
            record, tuple((index, msgspec.json.Decoder(info[index].type)) for index in as_json)
        )

    @property
    def keyed_by_prefix(self) -> bool:
        """Whether the key is the leading columns: a row's key is then ``values[:len(key)]``."""
        return self.columns[: len(self.key)] == self.key

    def prefixed(self, alias: str) -> str:
        """The record's columns of the table as ``alias`` (``g.id, g.protocol, ...``), for a join."""
        return ", ".join(f"{alias}.{field}" for field in self.fields)

    def __repr__(self) -> str:
        return f"Table({self.name})"


def _values(
    as_json: tuple[int, ...], derived: tuple[tuple[str, Callable[[R], Any]], ...]
) -> Callable[[R], tuple[Any, ...]]:
    """A record's column values, in the table's column order."""
    if not as_json and not derived:
        return _astuple
    derive = tuple(compute for _, compute in derived)

    def values(record: R) -> tuple[Any, ...]:
        row = list(_astuple(record))
        for index in as_json:
            row[index] = _to_json(row[index])
        for compute in derive:
            row.append(compute(record))
        return tuple(row)

    return values


def _loader(
    record: type[R], decoders: tuple[tuple[int, msgspec.json.Decoder[Any]], ...]
) -> Callable[[Sequence[Any]], R]:
    """The record of a row of the table's ``select`` columns."""
    if not decoders:
        return lambda row: record(*row)

    def load(row: Sequence[Any]) -> R:
        fields = list(row)
        for index, decoder in decoders:
            if fields[index] is not None:
                fields[index] = decoder.decode(fields[index])
        return record(*fields)

    return load


class GameSeat(msgspec.Struct, frozen=True):
    """Not a record the core commits: who sat at a finished game (``game_seats``, schema v2), for
    GET /api/games?player=. The store derives these rows from a finished game's GameRow."""

    game_id: str
    seat: int
    handle: str
    #: 1 for a robot, 0 for a human (an INTEGER column on both backends).
    robot: int


class MoveRun(msgspec.Struct, frozen=True):
    """Not a record the core commits: a run of moves (``move_runs``, schema v11), the moves of
    one game in one commit packed into ``doc`` (storage/runs.py), the first numbered ``seq``.
    The store packs a commit's MoveRows into these rows, and its reads unpack them."""

    game_id: str
    seq: int
    count: int
    doc: bytes


# The tables, parents first: rows are written in this order, so that a row is written after
# the rows it refers to (games before moves, accounts before ratings...).
PLAYERS = Table("players", PlayerRow, ("id",), "registered, id", kept=("registered",))
GAMES = Table("games", GameRow, ("id",), "created, id", kept=("protocol", "game", "created", "seed"))
#: The moves stored before schema version 11, one row each: read, never written any more.
MOVES = Table("moves", MoveRow, ("game_id", "seq"), "game_id, seq")
MOVE_RUNS = Table("move_runs", MoveRun, ("game_id", "seq"), "game_id, seq")
SNAPSHOTS = Table("game_snapshots", GameSnapshotRow, ("game_id",), "game_id")
GAME_SEATS = Table("game_seats", GameSeat, ("game_id", "seat"), "game_id, seat")
ACCOUNTS = Table(
    "accounts",
    AccountRow,
    ("id",),
    "id",
    # The role is changed only by Store.set_role (records.py, AccountRow.role).
    kept=("created", "role"),
    # Names are unique whatever their case (a unique index on the casefolded name).
    derived=(("name_key", lambda account: account.name.casefold()),),
)
ASYNC_GAMES = Table("async_games", AsyncGameRow, ("id",), "id", kept=("created",))
ASYNC_TURNS = Table("async_turns", AsyncTurnRow, ("game_id", "turn_index"), "game_id, turn_index")
RATINGS = Table("ratings", RatingRow, ("account_id", "game_type"), "account_id, game_type")
CHAT = Table("chat", ChatRow, ("scope", "seq"), "scope, seq")
RELATIONS = Table("relations", RelationRow, ("owner", "other", "kind"), "owner, other, kind", kept=("added",))
REPORTS = Table("reports", ReportRow, ("reporter", "at"), "at, reporter")
DEVICES = Table(
    "devices", DeviceRow, ("account_id", "device_type", "token"), "account_id, device_type, token"
)
NOTIFICATIONS = Table("notifications", NotificationRow, ("id",), "created, id", kept=("created",))
AUDIT = Table("audit", AuditRow, ("id",), "at, id")
GAME_RESULTS = Table("game_results", GameResultRow, ("game_id", "seat"), "game_id, seat")
META = Table("parlour_meta", MetaRow, ("key",), "key")

#: Every table, in the order rows are written.
DECLARED: tuple[Table[Any], ...] = (
    PLAYERS,
    GAMES,
    MOVES,
    MOVE_RUNS,
    SNAPSHOTS,
    GAME_SEATS,
    ACCOUNTS,
    ASYNC_GAMES,
    ASYNC_TURNS,
    RATINGS,
    CHAT,
    RELATIONS,
    REPORTS,
    DEVICES,
    NOTIFICATIONS,
    AUDIT,
    GAME_RESULTS,
    META,
)
#: The table whose rows read back as each record type.
TABLE_OF: Mapping[type[Any], Table[Any]] = types.MappingProxyType({table.record: table for table in DECLARED})

#: What a Write does with its record's row.
Action = Literal["insert", "upsert", "delete", "pack"]
INSERT: Action = "insert"
UPSERT: Action = "upsert"
DELETE: Action = "delete"
#: Inserted as runs: a commit's records of one game packed into a row (storage/runs.py).
PACK: Action = "pack"


class Write(NamedTuple):
    """What the store does with one type of record: ``action`` (INSERT, UPSERT, DELETE or PACK)
    the row ``values`` makes of it in ``table``. A DELETE's values are the key of the row; a
    PACK's values are the record's own, which a commit packs into rows of ``table``."""

    table: Table[Any]
    action: Action
    values: Callable[[Any], tuple[Any, ...]]


def _meta(row: MetaRow) -> tuple[Any, ...]:
    if row.key in STORE_META_KEYS:  # a row built without its checks (msgspec.structs.replace...)
        raise ValueError(f"parlour_meta key {row.key!r} belongs to the store")
    return (row.key, row.value)


def _heartbeat(beat: Heartbeat) -> tuple[Any, ...]:
    return ("heartbeat", repr(beat.at))


def _write(table: Table[Any], action: Action, record: type[Any] | None = None) -> Write:
    """A Write of ``record`` (default: the table's own), checked against the table at import."""
    if action != INSERT and not table.keyed_by_prefix:
        raise ValueError(f"{table.name}: an {action} needs the key as the leading columns")
    if action == DELETE:
        assert record is not None
        fields = tuple(field.name for field in msgspec.structs.fields(record))
        if fields != table.key:
            raise ValueError(f"{record.__name__} must hold exactly the key of {table.name}")
        return Write(table, action, _astuple)
    return Write(table, action, table.values)


#: Every record type the store writes (a Fence is a condition on a commit, not a row). A dict
#: (typed read-only): its lookup is on the hot path, once per record.
WRITES: Mapping[type[Any], Write] = {
    PlayerRow: _write(PLAYERS, UPSERT),
    PlayerGone: _write(PLAYERS, DELETE, PlayerGone),
    GameRow: _write(GAMES, UPSERT),
    # Packed into runs (a row a game and commit), read back with the rows of ``moves``.
    MoveRow: Write(MOVE_RUNS, PACK, _astuple),
    GameSnapshotRow: _write(SNAPSHOTS, UPSERT),
    AccountRow: _write(ACCOUNTS, UPSERT),
    AsyncGameRow: _write(ASYNC_GAMES, UPSERT),
    AsyncTurnRow: _write(ASYNC_TURNS, UPSERT),
    RatingRow: _write(RATINGS, UPSERT),
    MetaRow: Write(META, UPSERT, _meta),
    Heartbeat: Write(META, UPSERT, _heartbeat),
    ChatRow: _write(CHAT, INSERT),
    RelationRow: _write(RELATIONS, UPSERT),
    RelationGone: _write(RELATIONS, DELETE, RelationGone),
    ReportRow: _write(REPORTS, INSERT),
    DeviceRow: _write(DEVICES, UPSERT),
    DeviceGone: _write(DEVICES, DELETE, DeviceGone),
    NotificationRow: _write(NOTIFICATIONS, UPSERT),
    AuditRow: _write(AUDIT, INSERT),
    # A game that ends again (its first end stored though refused, or restored and ended by a
    # new owner) writes the same rows again: replaced, never a commit that fails for ever.
    GameResultRow: _write(GAME_RESULTS, UPSERT),
}
