"""What /async reads back from the store after a failed commit (the service's ``reload``).

A commit failed: what it held never happened, and the service returns to what the store holds
for everything it touched. This reads that, on the store's thread (the runtime runs it there and
hands the result to ``AsyncService.store_failed``): the games, the ratings, the buddy and ignore
lists, the devices and the chat histories of the records the commit held. The runtime knows
none of these records; only the service that made them does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from parlour.storage import (
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
    RatingRow,
    Record,
    RelationGone,
    RelationRow,
    Store,
    StoreFailure,
)

__all__ = ["CHAT_LINES", "AsyncReload", "read_back", "refusal_text"]

#: Chat lines read back per scope after a failed commit: more than the service keeps.
CHAT_LINES = 100


@dataclass(slots=True)
class AsyncReload:
    """The stored rows of what a failed commit touched (None where the store has nothing; a
    ``failure`` when even the read failed, and then only what was read before it)."""

    #: Games by id.
    async_games: dict[int, AsyncGameRow | None] = field(default_factory=dict)
    #: Ratings by (account, game type); relations by (owner, other, kind); devices by
    #: (account, device type, token); the last CHAT_LINES chat lines of each scope touched.
    ratings: dict[tuple[int, str], RatingRow | None] = field(default_factory=dict)
    relations: dict[tuple[int, int, str], RelationRow | None] = field(default_factory=dict)
    devices: dict[tuple[int, str, str], DeviceRow | None] = field(default_factory=dict)
    chat: dict[int, list[ChatRow]] = field(default_factory=dict)
    #: Accounts by id (None: never stored, a new account that goes).
    accounts: dict[int, AccountRow | None] = field(default_factory=dict)
    failure: StoreFailure | None = None


def read_back(records: Iterable[Record], store: Store) -> AsyncReload:
    """The stored rows of everything ``records`` touched (on the store's thread)."""
    reload = AsyncReload()
    try:
        for record in records:
            if isinstance(record, AsyncGameRow | AsyncTurnRow):
                number = record.id if isinstance(record, AsyncGameRow) else record.game_id
                if number not in reload.async_games:
                    reload.async_games[number] = store.load_async_game(number)
            elif isinstance(record, RatingRow):
                reload.ratings[record.account_id, record.game_type] = None
            elif isinstance(record, RelationRow | RelationGone):
                reload.relations[record.owner, record.other, record.kind] = None
            elif isinstance(record, DeviceRow | DeviceGone):
                reload.devices[record.account_id, record.device_type, record.token] = None
            elif isinstance(record, ChatRow):
                reload.chat[record.scope] = []
            elif isinstance(record, AccountRow) and record.id not in reload.accounts:
                reload.accounts[record.id] = store.account(record.id)
        _read_social(reload, store)
    except StoreFailure as failure:
        reload.failure = failure
    return reload


def _read_social(reload: AsyncReload, store: Store) -> None:
    """Fill in the ratings, relations, devices and chat a failed commit touched (rare: the
    whole tables are read and filtered, which keeps the store's interface small)."""
    if reload.ratings:
        for rating in store.ratings():
            if (rating.account_id, rating.game_type) in reload.ratings:
                reload.ratings[rating.account_id, rating.game_type] = rating
    if reload.relations:
        for relation in store.relations():
            if (relation.owner, relation.other, relation.kind) in reload.relations:
                reload.relations[relation.owner, relation.other, relation.kind] = relation
    if reload.devices:
        for device in store.devices():
            if (device.account_id, device.device_type, device.token) in reload.devices:
                reload.devices[device.account_id, device.device_type, device.token] = device
    if reload.chat:
        reload.chat.update(store.load_chat(list(reload.chat), CHAT_LINES))


def refusal_text(confirmed: bool) -> str:
    """What a request whose records were not stored is told: ``confirmed`` when the store said
    so (read back after the failed commit), else nobody could ask it."""
    if confirmed:
        return "the server could not save this; nothing changed"
    return "the server cannot reach its store: this may not have been saved; check before retrying"
