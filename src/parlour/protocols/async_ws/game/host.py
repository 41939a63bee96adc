"""What a game needs from the rest of /async, and what it tells it: the narrow interface between
a game and the social side (lobby, sessions, presence, observers, devices, ratings).

Everything crosses it as account ids, game ids and server messages, never as a connection, a
session or the hub, so that a game could run on another node and reach the lobby over a bus.
The one implementation today is hubhost.HubHost, over the hub of this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol

from parlour.protocols.async_ws.wire.messages import ServerMessage, ShownRating
from parlour.storage import GameResultRow

__all__ = ["GameHost", "Notice", "SeatRating"]

#: The push notifications a game asks for (the Scalable Server text "Push Notifications").
Notice = Literal[
    "YOUR_TURN",
    "YOUR_TURN_INVITE",
    "YOUR_TURN_ROBOT",
    "CONFIRM_INVITATION",
    "INVITEE_ACCEPTED",
    "INVITEE_DECLINED",
    "GAME_OVER",
    "CLIENT_DATA",
]


class SeatRating(NamedTuple):
    """What a game changed of one account's rating: the ordinal's change (OutcomeEntry's
    ``rating_change``), the rating as shown with its change, and the new rating (kept with the
    game's results)."""

    change: float
    shown: ShownRating
    mu: float
    sigma: float
    games: int


class GameHost(Protocol):
    def online(self, player_id: int) -> bool:
        """Whether the account has a live connection."""
        ...

    def name(self, player_id: int) -> str | None:
        """The account's name; None if there is no such account."""
        ...

    def ignores(self, player_id: int, other: int) -> bool:
        """Whether ``player_id`` ignores ``other`` (S14: its invitations never reach it)."""
        ...

    def send(self, player_id: int | None, message: ServerMessage) -> bool:
        """The message to the account if it is connected; whether it was."""
        ...

    def send_many(self, player_ids: Sequence[int], message: ServerMessage) -> None:
        """The message, encoded once, to each connected account of ``player_ids`` (in order,
        without repeats)."""
        ...

    def observers(self, game_id: int) -> Sequence[int]:
        """Who watches the game (S17), in account id order."""
        ...

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
        """A push notification to the devices of an account that is not connected (S16), naming
        the account ``about`` (an inviter, an invitee) or carrying a client's ``text``; how many
        devices it was queued for."""
        ...

    def rate(
        self, game_type: str, players: Sequence[int | None], ranks: Sequence[int], now: float
    ) -> list[SeatRating | None]:
        """Rate a finished ranked game (one rank per seat, None for a robot): each seat's change."""
        ...

    def penalise(self, game_type: str, players: Sequence[int | None], now: float) -> list[SeatRating | None]:
        """These players lose a game against the default rating (an aborted ranked game)."""
        ...

    def ended(self, results: Sequence[GameResultRow]) -> None:
        """A game ended: each seat's result, stored with the game's end (players' profiles)."""
        ...

    def started(self, game_id: int, player_ids: Sequence[int]) -> None:
        """The game started: its players leave the lobby ("when that game starts, the player is
        exited")."""
        ...

    def lists_changed(self, game_id: int | None = None) -> None:
        """The lobby's lists changed: ``game_id`` (an open game appeared, changed, started or
        ended), or games it cannot name (None: the lobby reads every game again)."""
        ...
