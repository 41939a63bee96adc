"""Where durable state lives, behind one interface (no SQL outside this package).

``open_store`` picks the backend from the ``store`` setting: ``none`` keeps everything in
memory (nothing survives a restart), anything else is the path of an SQLite file.
"""

from __future__ import annotations

from parlour.storage.base import Store, StoreError, StoreFailure, StoreRefused
from parlour.storage.records import (
    ASYNC_FINISHED_STATUSES,
    EXPORT_KINDS,
    LIVE_STATES,
    MOVE,
    RELATION_KINDS,
    REMOVE_SEAT,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
    GameRow,
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
    Snapshot,
)

__all__ = [
    "ASYNC_FINISHED_STATUSES",
    "EXPORT_KINDS",
    "LIVE_STATES",
    "MOVE",
    "RELATION_KINDS",
    "REMOVE_SEAT",
    "AccountRow",
    "AsyncGameRow",
    "AsyncTurnRow",
    "ChatRow",
    "DeviceGone",
    "DeviceRow",
    "GameRow",
    "MetaRow",
    "MoveRow",
    "NotificationRow",
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
    "open_store",
]

#: The ``store`` setting that turns durability off.
NO_STORE = "none"


def open_store(spec: str, sync: str = "normal") -> Store | None:
    """The store named by ``spec`` (None for ``none``); StoreRefused says why it cannot open."""
    if spec == NO_STORE:
        return None
    from parlour.storage.sqlite import SQLiteStore

    return SQLiteStore(spec, sync)
