"""The lobby's records: connections, players, games and seats. Known by opaque ids, never by
socket objects, so players of different transports can share a table (DESIGN.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from random import Random
from typing import Any

from parlour.core.effects import ConnId

__all__ = [
    "Connection",
    "Game",
    "GameState",
    "Player",
    "PlayerType",
    "Seat",
    "SeatState",
    "Visibility",
]


class Visibility(Enum):
    PUBLIC = "PUBLIC"
    PRIVATE = "PRIVATE"


class GameState(Enum):
    ADVERTISED = "ADVERTISED"
    PLAYING = "PLAYING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"


class PlayerType(Enum):
    HUMAN = "HUMAN"
    PROGRAMMATIC = "PROGRAMMATIC"


class SeatState(Enum):
    JOINED = "JOINED"
    PLAYING = "PLAYING"
    QUIT = "QUIT"
    FINISHED = "FINISHED"


@dataclass(slots=True, eq=False)
class Connection:
    id: ConnId
    last_active: float
    idle: bool = False
    #: Ids of the players registered through this connection.
    players: set[str] = field(default_factory=set)


@dataclass(slots=True, eq=False)
class Player:
    id: str
    handle: str
    conn: ConnId | None
    registered: float
    last_active: float
    idle: bool = False
    game: Game | None = None

    @property
    def connected(self) -> bool:
        return self.conn is not None

    @property
    def play_state(self) -> str:
        """WAITING, JOINED or PLAYING, as REGISTERED_PLAYERS reports it."""
        if self.game is None:
            return "WAITING"
        return "PLAYING" if self.game.state is GameState.PLAYING else "JOINED"


@dataclass(slots=True, eq=False)
class Seat:
    handle: str
    kind: PlayerType
    state: SeatState
    #: The human sitting here; None for programmatic seats and once the human has left.
    player: Player | None = None


@dataclass(slots=True, eq=False)
class Game:
    id: str
    name: str
    #: The game plugin's registry name, and its options (e.g. the Apologies mode).
    game: str
    options: dict[str, Any]
    players: int
    visibility: Visibility
    invited: list[str]
    advertiser: str
    created: float
    last_active: float
    state: GameState = GameState.ADVERTISED
    idle: bool = False
    finished: float | None = None
    #: The seed of the game's own random source (deals and draws), drawn when it is created:
    #: replaying the stored moves from it rebuilds every state (core/durable.py).
    seed: int = 0
    rng: Random | None = None
    #: The key that derives the game's move ids (core/ids.turn_ids); stored with the game.
    secret: bytes = b""
    #: How the game ended, as stored: winners (seats), reason, comment.
    result: dict[str, Any] | None = None
    seats: list[Seat] = field(default_factory=list)
    #: The plugin's game state once started.
    play: Any = None
    #: The moves offered to the human whose turn it is, by move id.
    pending: dict[str, Any] = field(default_factory=dict)
    pending_seat: int | None = None
    #: When the game started, then when each move was played: history entries' timestamps.
    times: list[float] = field(default_factory=list)
    #: The robot's turn being decided away from the event loop: (game id, moves played).
    thinking: tuple[str, int] | None = None
    #: What protocol adapters keep about the game between events (e.g. encoded history).
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def in_progress(self) -> bool:
        return self.state is GameState.ADVERTISED or self.state is GameState.PLAYING

    def touch(self, now: float) -> None:
        """The game saw activity: its idle clock starts again."""
        self.last_active = now
        self.idle = False

    def joined_humans(self) -> int:
        return sum(
            1 for seat in self.seats if seat.kind is PlayerType.HUMAN and seat.state is not SeatState.QUIT
        )

    def audience(self) -> list[Player]:
        """The humans still seated and connected: who hears about this game."""
        return [
            seat.player
            for seat in self.seats
            if seat.player is not None and seat.state is not SeatState.QUIT and seat.player.conn is not None
        ]
