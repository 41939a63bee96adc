"""The one store interface every backend implements, and its errors.

Backends are synchronous: the transport calls them on its writer thread, so the event loop
never waits for a disk. Every method is one transaction. The SQL behind them stays portable
(no SQLite-only tricks) so that a PostgreSQL backend can implement the same interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from parlour.storage.records import GameRow, MoveRow, PlayerRow, Record, Snapshot

__all__ = ["Store", "StoreError", "StoreFailure", "StoreRefused"]


class StoreError(Exception):
    """Base of the store's errors."""


class StoreRefused(StoreError):
    """The store cannot be opened: not a Parlour store, corrupt, or from a newer build.

    The message is one line naming the file and the problem; the file is left untouched.
    """


class StoreFailure(StoreError):
    """A read or a commit failed (disk full, file removed, locked, read-only...)."""


class Store(Protocol):
    #: Where the store is, as the operator wrote it (for logs and messages).
    location: str

    def commit(self, records: Sequence[Record]) -> None:
        """Write every record in one transaction, or none of them (StoreFailure)."""
        ...

    def heartbeat(self, now: float) -> None:
        """Remember that the server was alive at ``now`` (downtime is measured from it)."""
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
    ) -> list[GameRow]:
        """Finished games (of one ``state`` if given), newest first; ``before`` is the
        (finished, id) of the last game of the previous page."""
        ...

    def purge(self, finished_before: float) -> int:
        """Forget game records finished before this time; how many went."""
        ...

    def check(self) -> dict[str, Any]:
        """The backend's integrity check and counts of every kind of row."""
        ...

    def export(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row as (kind, fields): players, games, moves."""
        ...

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Rows from ``export`` into this store, which must be empty."""
        ...

    def backup(self, target: str) -> None:
        """A consistent copy of the whole store at ``target``, taken while it is in use."""
        ...

    def close(self) -> None: ...
