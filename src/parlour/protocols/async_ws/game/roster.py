"""Which live games each account plays in (any status but OVER and ABORTED)."""

from __future__ import annotations

from collections.abc import Iterator

from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.game.model import AsyncGame

__all__ = ["Roster"]


class Roster:
    __slots__ = ("_games",)

    def __init__(self) -> None:
        self._games: dict[int, set[int]] = {}

    def track(self, game: AsyncGame) -> None:
        """Index the game under each of its human seats while it is live (and no longer once it
        is not)."""
        for seat in game.seats:
            if seat.player_id is None:
                continue
            games = self._games.setdefault(seat.player_id, set())
            if game.status in LIVE:
                games.add(game.id)
            else:
                games.discard(game.id)

    def untrack(self, game_id: int, player_id: int) -> None:
        self._games.get(player_id, set()).discard(game_id)

    def of(self, player_id: int) -> list[int]:
        """The live games of the account, by id."""
        return sorted(self._games.get(player_id, ()))

    def count(self, player_id: int) -> int:
        return len(self._games.get(player_id, ()))

    def players(self) -> Iterator[int]:
        """The accounts with a live game."""
        return (player_id for player_id, games in self._games.items() if games)
