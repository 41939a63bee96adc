"""What the lobby tells players, protocol-neutral. A protocol adapter renders each event to
its wire form at the moment it is emitted, so events may refer to live records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from parlour.core.effects import ConnId
from parlour.core.errors import ParlourError
from parlour.core.records import Game, Player

__all__ = [
    "AvailableGames",
    "Event",
    "GameAdvertised",
    "GameCancelled",
    "GameCompleted",
    "GameIdle",
    "GameInactive",
    "GameInvitation",
    "GameJoined",
    "GamePlayerChange",
    "GamePlayerQuit",
    "GamePlayerTurn",
    "GameStarted",
    "GameStateChange",
    "PlayerIdle",
    "PlayerInactive",
    "PlayerMessageReceived",
    "PlayerRegistered",
    "PlayerUnregistered",
    "RegisteredPlayers",
    "RequestFailed",
    "ServerShutdown",
    "Sink",
    "WebsocketIdle",
    "WebsocketInactive",
]


class Event:
    """Base of every event."""

    __slots__ = ()


@dataclass(slots=True)
class ServerShutdown(Event):
    pass


@dataclass(slots=True)
class WebsocketIdle(Event):
    pass


@dataclass(slots=True)
class WebsocketInactive(Event):
    pass


@dataclass(slots=True)
class RequestFailed(Event):
    error: ParlourError


@dataclass(slots=True)
class PlayerRegistered(Event):
    player: Player


@dataclass(slots=True)
class RegisteredPlayers(Event):
    players: list[Player]


@dataclass(slots=True)
class AvailableGames(Event):
    games: list[Game]


@dataclass(slots=True)
class PlayerUnregistered(Event):
    handle: str


@dataclass(slots=True)
class PlayerIdle(Event):
    handle: str


@dataclass(slots=True)
class PlayerInactive(Event):
    handle: str


@dataclass(slots=True)
class PlayerMessageReceived(Event):
    sender: str
    recipients: list[str]
    message: str


@dataclass(slots=True)
class GameAdvertised(Event):
    game: Game


@dataclass(slots=True)
class GameInvitation(Event):
    game: Game


@dataclass(slots=True)
class GameJoined(Event):
    handle: str
    game: Game


@dataclass(slots=True)
class GameStarted(Event):
    game: Game


@dataclass(slots=True)
class GamePlayerChange(Event):
    game: Game
    comment: str


@dataclass(slots=True)
class GameStateChange(Event):
    """The game as ``seat`` sees it now (one event per seated human)."""

    game: Game
    seat: int

    # Its own __init__, compiled (setup.py): one of these is made per move and human, and the
    # one @dataclass would generate is interpreted (see core/effects.py's Send).
    def __init__(self, game: Game, seat: int) -> None:
        self.game = game
        self.seat = seat


@dataclass(slots=True)
class GamePlayerTurn(Event):
    """``seat`` is to move and may choose among ``game.pending``."""

    game: Game
    seat: int

    def __init__(self, game: Game, seat: int) -> None:  # compiled, as GameStateChange's
        self.game = game
        self.seat = seat


@dataclass(slots=True)
class GamePlayerQuit(Event):
    handle: str
    game: Game


@dataclass(slots=True)
class GameCancelled(Event):
    game: Game
    reason: str  # CANCELLED, NOT_VIABLE, INACTIVE, SHUTDOWN
    comment: str | None


@dataclass(slots=True)
class GameCompleted(Event):
    game: Game
    winner: str
    comment: str


@dataclass(slots=True)
class GameIdle(Event):
    game: Game


@dataclass(slots=True)
class GameInactive(Event):
    game: Game


class Sink(Protocol):
    """Where the lobby's output goes: the adapter renders each event as it is emitted."""

    def send(self, conns: Iterable[ConnId], event: Event) -> None:
        """Send one event to each connection (rendered once, shared)."""
        ...

    def close(self, conn: ConnId, code: int, reason: str) -> None: ...
