"""What the lobby owes the store: the rows of every durable change since the store last took
them. Each changed game is written once, as it stands when the rows are taken, after the other
rows (players, moves) in the order they came."""

from __future__ import annotations

from parlour.core.durable import game_row
from parlour.core.records import Game
from parlour.storage.records import Record

__all__ = ["Journal"]


class Journal:
    def __init__(self, game_name: str) -> None:
        #: With a store, every durable change is also recorded as rows for it to commit.
        self.recording = False
        self.game_name = game_name
        self._records: list[Record] = []
        self._dirty: dict[str, Game] = {}

    def save(self, game: Game) -> None:
        """``game`` changed: its row goes with the next rows taken."""
        if self.recording:
            self._dirty[game.id] = game

    def add(self, record: Record) -> None:
        if self.recording:
            self._records.append(record)

    def take(self) -> list[Record]:
        """The rows of every durable change since the last call (each changed game once)."""
        records = self._records
        if self._dirty:
            records.extend(game_row(game, self.game_name) for game in self._dirty.values())
            self._dirty.clear()
        self._records = []
        return records

    def discard(self) -> None:
        """Forget the rows not taken yet (a failed commit: what they record never happened)."""
        self._records.clear()
        self._dirty.clear()
