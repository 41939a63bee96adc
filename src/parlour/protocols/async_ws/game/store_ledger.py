"""The records games produce in one input: each changed game once, as it is at the input's end
(docs/async-decisions.md S10), then its committed turns and the next game id, in order."""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.game.model import AsyncGame, TurnDoc, encode_game, encode_turn
from parlour.storage import AsyncGameRow, AsyncTurnRow, MetaRow, Record

__all__ = ["NEXT_GAME_KEY", "Ledger"]

#: The meta key that keeps game ids unique for the life of the store (S6), whatever is purged.
NEXT_GAME_KEY: Final = "async_next_game_id"


class Ledger:
    __slots__ = ("_dirty", "_records")

    def __init__(self) -> None:
        self._dirty: dict[int, AsyncGame] = {}
        self._records: list[Record] = []

    def changed(self, game: AsyncGame, now: float, turn: TurnDoc | None = None) -> None:
        """Store the game (and a committed turn) before anything of this input is shown."""
        game.updated = now
        self._dirty[game.id] = game
        if turn is not None:
            self._records.append(AsyncTurnRow(game.id, game.turn_index - 1, now, encode_turn(turn)))

    def next_game(self, next_id: int) -> None:
        self._records.append(MetaRow(NEXT_GAME_KEY, str(next_id)))

    def pending(self, game_id: int) -> bool:
        """Whether the game changed in an input whose records are not taken yet."""
        return game_id in self._dirty

    def take(self) -> list[Record]:
        """The game rows first (a turn row needs its game), then the other records in order."""
        if not self._dirty and not self._records:
            return []  # most inputs store nothing
        records: list[Record] = [
            AsyncGameRow(
                id=game.id,
                game_type=game.config.game_type,
                status=game.status,
                created=game.created,
                updated=game.updated,
                doc=encode_game(game),
            )
            for game in self._dirty.values()
        ]
        records += self._records
        self._dirty.clear()
        self._records = []
        return records
