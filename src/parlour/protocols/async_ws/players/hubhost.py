"""The one place games meet the rest of /async: game.host.GameHost implemented over this
process's hub and its owners (connections, the lobby, observers, ignore lists), notify.py (push
notifications) and ratings.py (the accounts' ratings)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parlour.core.effects import ConnId
from parlour.protocols.async_ws.game.host import Notice, SeatRating
from parlour.protocols.async_ws.players import notify, ratings
from parlour.protocols.async_ws.state.hub import Hub
from parlour.protocols.async_ws.wire.messages import ServerMessage, encode
from parlour.storage import GameResultRow, RatingRow

__all__ = ["HubHost"]


class HubHost:
    __slots__ = ("hub", "send")

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        #: The message to the account if it is connected; whether it was (the hub's own method:
        #: the games' most frequent call, without a second call around it).
        self.send: Callable[[int | None, ServerMessage], bool] = hub.to_player

    def online(self, player_id: int) -> bool:
        return player_id in self.hub.online

    def name(self, player_id: int) -> str | None:
        account = self.hub.accounts.get(player_id)
        return None if account is None else account.name

    def ignores(self, player_id: int, other: int) -> bool:
        return self.hub.relations.is_ignored(player_id, other)

    def send_many(self, player_ids: Sequence[int], message: ServerMessage) -> None:
        online = self.hub.online
        seen: set[int] = set()
        conns: list[ConnId] = []
        for player_id in player_ids:
            if player_id in seen:
                continue
            seen.add(player_id)
            conn = online.get(player_id)
            if conn is not None:
                conns.append(conn)
        if conns:
            self.hub.output.send_many(conns, encode(message))

    def observers(self, game_id: int) -> Sequence[int]:
        watchers = self.hub.observers.get(game_id)
        return sorted(watchers) if watchers else ()

    def notify(
        self,
        player_id: int,
        kind: Notice,
        game_id: int,
        turn_index: int,
        now: float,
        about: int | None = None,
        text: str | None = None,
    ) -> int:
        args = [self.hub.name(about)] if about is not None else []
        return notify.notify(self.hub, player_id, kind, game_id, turn_index, args, now, loc_key=text)

    def rate(
        self, game_type: str, players: Sequence[int | None], ranks: Sequence[int], now: float
    ) -> list[SeatRating | None]:
        rows, changes = ratings.rate(self.hub, game_type, players, ranks, now)
        self.rated(rows)
        return changes

    def penalise(self, game_type: str, players: Sequence[int | None], now: float) -> list[SeatRating | None]:
        rows, changes = ratings.penalise(self.hub, game_type, players, now)
        self.rated(rows)
        return changes

    def rated(self, rows: list[RatingRow]) -> None:
        """New ratings (the accounts have them already): stored with the game's end."""
        if rows:
            self.hub.store(*rows)

    def ended(self, results: Sequence[GameResultRow]) -> None:
        """Stored with the game's end, on the node that runs the game (nothing else reads them
        but the profiles, from the store)."""
        if results:
            self.hub.store(*results)

    def started(self, game_id: int, player_ids: Sequence[int]) -> None:
        # "when that game starts, the player is exited": through the lobby's one change of
        # membership, which also drops the cached list of the lobby's connections.
        self.hub.lobby.game_started(player_ids)

    def lists_changed(self, game_id: int | None = None) -> None:
        self.hub.lobby.lists_changed(game_id)
