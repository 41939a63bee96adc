"""Where durable state lives, behind one interface (no SQL outside this package).

``open_store`` picks the backend from the ``store`` setting: ``none`` keeps everything in
memory (nothing survives a restart), a ``postgresql://`` (or ``postgres://``) URL names a
PostgreSQL database, anything else is the path of an SQLite file.
"""

from __future__ import annotations

from parlour.storage.base import Fenced, Store, StoreError, StoreFailure, StoreRefused
from parlour.storage.records import (
    ADMIN_ROLE,
    ASYNC_FINISHED_STATUSES,
    EXPORT_KINDS,
    LIVE_STATES,
    MOVE,
    RELATION_KINDS,
    REMOVE_SEAT,
    SNAPSHOT_VERSION,
    AccountErased,
    AccountRow,
    AccountSeen,
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
    Opponent,
    PlayerGone,
    PlayerRow,
    RatingRow,
    Record,
    RelationGone,
    RelationRow,
    ReportRow,
    SeatRow,
    Snapshot,
)

__all__ = [
    "ADMIN_ROLE",
    "ASYNC_FINISHED_STATUSES",
    "EXPORT_KINDS",
    "LIVE_STATES",
    "MOVE",
    "RELATION_KINDS",
    "REMOVE_SEAT",
    "SNAPSHOT_VERSION",
    "AccountErased",
    "AccountRow",
    "AccountSeen",
    "AsyncGameRow",
    "AsyncTurnRow",
    "AuditRow",
    "ChatRow",
    "DeviceGone",
    "DeviceRow",
    "Fence",
    "Fenced",
    "GameResultRow",
    "GameRow",
    "GameSnapshotRow",
    "Heartbeat",
    "MetaRow",
    "MoveRow",
    "NotificationRow",
    "Opponent",
    "PlayerGone",
    "PlayerRow",
    "RatingRow",
    "Record",
    "RelationGone",
    "RelationRow",
    "ReportRow",
    "SeatRow",
    "Snapshot",
    "Store",
    "StoreError",
    "StoreFailure",
    "StoreRefused",
    "is_url",
    "open_store",
]

#: The ``store`` setting that turns durability off.
NO_STORE = "none"
#: The URL schemes of a PostgreSQL store (libpq's two spellings).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_url(spec: str) -> bool:
    """Whether the ``store`` setting names a database server rather than a file."""
    return spec.startswith(POSTGRES_SCHEMES)


def open_store(spec: str, sync: str = "normal", redo: str = "apply") -> Store | None:
    """The store named by ``spec`` (None for ``none``); StoreRefused says why it cannot open.
    ``redo``: what an SQLite file's redo log asks of the opener (storage.sqlite)."""
    if spec == NO_STORE:
        return None
    if is_url(spec):
        # Imported only when used: a server on SQLite needs no PostgreSQL driver.
        from parlour.storage.postgres import PostgresStore

        return PostgresStore(spec, sync)
    from parlour.storage.sqlite import SQLiteStore

    return SQLiteStore(spec, sync, redo=redo)
