"""The one store interface every backend implements, and its errors.

Backends are synchronous: the transport calls them on its writer thread, so the event loop
never waits for a disk. Every method is one transaction. The SQL behind them stays portable
(no SQLite-only tricks) so that a PostgreSQL backend can implement the same interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from parlour.storage.records import (
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceRow,
    GameResultRow,
    GameRow,
    MoveRow,
    NotificationRow,
    Opponent,
    PlayerRow,
    RatingRow,
    Record,
    RelationRow,
    ReportRow,
    Snapshot,
)

__all__ = ["Store", "StoreError", "StoreFailure", "StoreRefused"]


class StoreError(Exception):
    """Base of the store's errors."""


class StoreRefused(StoreError):
    """The store cannot be opened: not a Parlour store, corrupt, or from a newer build.

    The message is one line naming the file and the problem; the file is left untouched.
    """


class StoreFailure(StoreError):
    """A read or a commit failed (disk full, file removed, locked, read-only...)."""


class Fenced(StoreFailure):
    """A commit was refused whole: a Fence in it no longer holds (another cluster node has
    claimed a service this one thought it owned)."""


class Store(Protocol):
    #: Where the store is, as the operator wrote it (for logs and messages).
    location: str

    def commit(self, records: Sequence[Record]) -> None:
        """Write every record in one transaction, or none of them (StoreFailure)."""
        ...

    def heartbeat(self, now: float) -> None:
        """Remember that the server was alive at ``now`` (downtime is measured from it)."""
        ...

    def checkpoint(self) -> None:
        """Fold committed changes into the main file without blocking writers (a no-op for a
        backend that needs none). Run off the commit path when commits leave it out."""
        ...

    def load_live(self) -> Snapshot:
        """Registered players and every advertised or running game, with its moves."""
        ...

    def load_player(self, player_id: str) -> PlayerRow | None: ...

    def load_game(self, game_id: str) -> tuple[GameRow, list[MoveRow]] | None: ...

    def list_games(
        self,
        game_type: str | None = None,
        player: str | None = None,
        limit: int = 50,
        before: tuple[float, str] | None = None,
        state: str | None = None,
        protocol: str | None = None,
    ) -> list[GameRow]:
        """Finished games (of one ``state`` and played over one ``protocol`` if given), newest
        first; ``before`` is the (finished, id) of the last game of the previous page."""
        ...

    def purge(self, finished_before: float) -> int:
        """Forget game records finished before this time, and /async games OVER or ABORTED
        last updated before it, with their turns and chat, and push notifications delivered
        before it; how many games went."""
        ...

    # The /async protocol (docs/async-decisions.md S4, S10, S11) ------------------------------

    def accounts(self) -> list[AccountRow]:
        """Every account, by id."""
        ...

    def account_by_name(self, name: str) -> AccountRow | None:
        """The account of that name, whatever its case."""
        ...

    def account(self, account_id: int) -> AccountRow | None:
        """The account of that id, as stored (its role included)."""
        ...

    def set_role(self, name: str, role: str, audit: AuditRow) -> AccountRow | None:
        """Give the account of that name (whatever its case) ``role`` ("" for none) and write
        ``audit`` (its target: the account's name as spelled) in the same transaction; the account as it now is, or None (nothing written)
        when nobody has that name."""
        ...

    def finished_async_games(self) -> list[AsyncGameRow]:
        """Every /async game that is over, as stored (a deleted account's seats are renamed in
        them: records.AccountErased)."""
        ...

    def ended_async_games(self, limit: int, before: tuple[float, int] | None = None) -> list[AsyncGameRow]:
        """At most ``limit`` /async games that are over (OVER or ABORTED), the last to end first
        (by ``updated``, then id, both descending: an ended game's row is not changed again);
        ``before`` is the (updated, id) of the last game of the previous page."""
        ...

    def audit_log(
        self,
        limit: int,
        actor: str | None = None,
        action: str | None = None,
        target: str | None = None,
        since: float | None = None,
        before: float | None = None,
    ) -> list[AuditRow]:
        """The latest ``limit`` audit records, newest first, of that actor, action and target
        (each compared exactly, when given), at or after ``since`` and before ``before``."""
        ...

    def ensure_secret(self, key: str) -> bytes:
        """The 32 random bytes kept under ``key`` in the store's metadata, made on first use
        (e.g. the key that signs session tokens, so they outlive a restart)."""
        ...

    def meta(self, key: str) -> str | None:
        """A value of the store's metadata (written by MetaRow records), or None."""
        ...

    def settled_meta(self, key: str) -> str | None:
        """``meta``, read once no commit that writes ``key`` is still under way on the store's
        side (a commit mark, read after its commit's answer was lost)."""
        ...

    def load_async_games(self) -> list[AsyncGameRow]:
        """Every live /async game (not OVER nor ABORTED), by id."""
        ...

    def load_async_shard(self, shard: int, shards: int) -> list[AsyncGameRow]:
        """The started live /async games of one shard of a cluster (``id % shards == shard``),
        by id: what the shard's new owner restores, without reading the others'."""
        ...

    def load_async_game(self, game_id: int) -> AsyncGameRow | None: ...

    def async_turns(self, game_id: int) -> list[AsyncTurnRow]:
        """A game's committed turns, by turn index."""
        ...

    def ratings(self) -> list[RatingRow]:
        """Every rating, by account and game type."""
        ...

    def leaderboard(self, game_type: str, limit: int) -> list[tuple[RatingRow, str]]:
        """The best ``limit`` ratings at ``game_type`` (highest ordinal first), with the name
        of each rating's account."""
        ...

    def recent_results(self, account_id: int, games: int) -> list[GameResultRow]:
        """Every seat of the account's last ``games`` ended /async games, newest game first
        (then by seat)."""
        ...

    def rating_history(self, account_id: int, limit: int) -> list[GameResultRow]:
        """The account's last ``limit`` results that changed its rating, oldest first."""
        ...

    def opponents(self, account_id: int, limit: int) -> list[Opponent]:
        """The account's wins, losses and draws against each opponent it finished a game with
        (by rank: a lower rank wins), most games first, at most ``limit`` opponents."""
        ...

    # The social side of /async and the push outbox (S14, S15, S16) ---------------------------

    def load_chat(self, scopes: Sequence[int], limit: int) -> dict[int, list[ChatRow]]:
        """The last ``limit`` public chat lines of each scope (0: the lobby, else a game id),
        oldest first; every scope asked for is a key, with no lines if it has none."""
        ...

    def relations(self) -> list[RelationRow]:
        """Every buddy and ignore-list entry, by owner, other and kind."""
        ...

    def reports(self, limit: int) -> list[ReportRow]:
        """The last ``limit`` reports (``/report NAME``), newest first."""
        ...

    def devices(self) -> list[DeviceRow]:
        """Every device linked to an account, by account, device type and token."""
        ...

    def pending_notifications(self, now: float, limit: int) -> list[NotificationRow]:
        """At most ``limit`` undelivered push notifications due by ``now`` (next attempt at or
        before it), oldest first."""
        ...

    def check(self) -> dict[str, Any]:
        """The backend's integrity check and counts of every kind of row."""
        ...

    def export(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row as (kind, fields): players, games, moves, accounts, async games and
        turns, ratings, chat lines, relations, reports, devices, push notifications and metadata
        (the store's own keys excepted), in the order of EXPORT_KINDS. Bytes are base64 text."""
        ...

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Rows from ``export`` into this store, which must be empty."""
        ...

    def backup(self, target: str) -> None:
        """A consistent copy of the whole store at ``target``, taken while it is in use."""
        ...

    def process_writer(self) -> tuple[str, str] | None:
        """What a writer process (``python -m parlour.storage.pipe``) opens to commit for this
        store: what to connect to (a file's path, or the full URL) and the sync level; None
        when the store commits only where it was opened (the runtime then commits on its
        store thread)."""
        ...

    def redo_log(self) -> tuple[str, str, Path] | None:
        """What a store with a redo log (``parlour.storage.redo``) gives its writer process
        (``parlour.storage.applier``): the file, the sync level and the log's directory; None
        for a store without one."""
        ...

    def close(self) -> None: ...
