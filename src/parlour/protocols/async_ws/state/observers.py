"""Who watches which game, and who subscribed to the observable game list
(the Scalable Server text "Observable Game List", "Observing a Game"; docs/async-decisions.md
S17). The requests are lobby/observe.py's; the games read ``get`` to copy their events to observers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from parlour.protocols.async_ws.wire.messages import ObservableGame

__all__ = ["Observers"]


class Observers:
    """Observers by game (account ids), and the observable list's subscribers."""

    __slots__ = ("_by_game", "_pushed", "_subscribers")

    def __init__(self) -> None:
        self._by_game: dict[int, set[int]] = {}
        #: Subscribers to the observable list, and what each was last sent.
        self._subscribers: dict[int, list[ObservableGame]] = {}
        self._pushed = float("-inf")

    # -- Observers of games ---------------------------------------------------------------------

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._by_game

    def __len__(self) -> int:
        """How many games are watched now."""
        return len(self._by_game)

    def __iter__(self) -> Iterator[int]:
        """The ids of the games watched now."""
        return iter(self._by_game)

    def get(self, game_id: int, default: Collection[int] = ()) -> Collection[int]:
        """The observers of a game (not to be changed by the caller)."""
        return self._by_game.get(game_id, default)

    def add(self, game_id: int, player_id: int) -> None:
        self._by_game.setdefault(game_id, set()).add(player_id)

    def remove(self, game_id: int, player_id: int) -> bool:
        """``player_id`` stops watching ``game_id``; whether it was watching it."""
        watchers = self._by_game.get(game_id)
        if watchers is None or player_id not in watchers:
            return False
        watchers.discard(player_id)
        if not watchers:
            del self._by_game[game_id]
        return True

    def forget(self, game_id: int) -> None:
        """The game has nothing more to show (finished, or gone from memory)."""
        self._by_game.pop(game_id, None)

    def signed_out(self, player_id: int) -> None:
        """Watching ends with the connection: every game, and the list subscription."""
        self._subscribers.pop(player_id, None)
        for game_id in [game_id for game_id, watchers in self._by_game.items() if player_id in watchers]:
            self.remove(game_id, player_id)

    # -- The observable list's subscribers ------------------------------------------------------

    def subscribe(self, player_id: int, sent: list[ObservableGame]) -> None:
        self._subscribers[player_id] = sent

    def unsubscribe(self, player_id: int) -> None:
        self._subscribers.pop(player_id, None)

    def list_due(self, now: float, interval: float) -> bool:
        """Whether the list is to be compared with what subscribers were sent (someone
        subscribes, and ``interval`` passed); if so, it counts as pushed now."""
        if not self._subscribers or now - self._pushed < interval:
            return False
        self._pushed = now
        return True

    def outdated(self, games: list[ObservableGame]) -> list[int]:
        """The subscribers whose copy differs from ``games``; from now on they have it."""
        # Most subscribers hold the same list object (the last one pushed): each distinct copy
        # is compared once, not once per subscriber.
        differs: dict[int, bool] = {}
        stale = []
        for player_id, sent in self._subscribers.items():
            verdict = differs.get(id(sent))
            if verdict is None:
                verdict = differs[id(sent)] = sent != games
            if verdict:
                stale.append(player_id)
        for player_id in stale:
            self._subscribers[player_id] = games
        return stale
