"""What the store keeps: plain rows, the same for every backend (no SQL here).

The core builds these rows from its live records and gives them to the transport in a
``Store`` effect; the transport commits every row of one loop iteration in one transaction
before it releases the messages that reveal them (DESIGN.md, "stored before shown").
A game is kept as its configuration, its seed and its moves: replaying the moves from the seed
rebuilds every state the players saw, so nothing else about a game needs storing.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "GameRow",
    "MoveRow",
    "PlayerGone",
    "PlayerRow",
    "Record",
    "SeatRow",
    "Snapshot",
]

#: Game states as stored. ADVERTISED and PLAYING are "live": loaded again after a restart.
LIVE_STATES = ("ADVERTISED", "PLAYING")
#: Kinds of move rows: a move chosen from the legal moves, or a seat taken out of play.
MOVE, REMOVE_SEAT = "move", "remove"


class PlayerRow(msgspec.Struct, frozen=True):
    """A registered Apologies player (its id is a secret: never logged)."""

    id: str
    handle: str
    registered: float
    last_active: float


class PlayerGone(msgspec.Struct, frozen=True):
    """A player unregistered: its row is deleted."""

    id: str


class SeatRow(msgspec.Struct, frozen=True, omit_defaults=True):
    handle: str
    robot: bool
    #: JOINED, PLAYING, QUIT or FINISHED (Fish and Tsuro: PLAYING or QUIT).
    state: str
    #: The human's player id while it sits here (Apologies only).
    player_id: str | None = None
    #: Per-seat facts a protocol needs again, e.g. a Fish player's age.
    extra: dict[str, Any] = {}


class GameRow(msgspec.Struct, frozen=True, omit_defaults=True):
    """One game of any protocol, whole: saved again whenever it changes."""

    id: str
    #: The protocol it was played over (apologies, fish, tsuro) and the rules plugin's name.
    protocol: str
    game: str
    name: str
    #: ADVERTISED, PLAYING, COMPLETED, CANCELLED or ABORTED.
    state: str
    created: float
    last_active: float
    #: The seed of the game's own random source: new_game and every apply draw from it alone.
    seed: int
    #: How many moves the game had when this row was written. Rows are written when a game's
    #: configuration, seats or state change, not on every move (a move is one moves row): for
    #: a finished game this is every move, for a live one the moves rows are the count.
    moves: int = 0
    started: float | None = None
    finished: float | None = None
    #: Everything the protocol needs to rebuild the game: options, seat count, visibility...
    config: dict[str, Any] = {}
    seats: list[SeatRow] = []
    #: How it ended: winners (seat numbers), reason, comment.
    result: dict[str, Any] | None = None


class MoveRow(msgspec.Struct, frozen=True):
    """One accepted move: ``choice`` indexes the legal moves of ``seat`` at that point."""

    game_id: str
    seq: int
    seat: int
    kind: str
    choice: int
    at: float


Record = PlayerRow | PlayerGone | GameRow | MoveRow


class Snapshot(msgspec.Struct):
    """What a restarting server loads: the registered players and every live game with its moves."""

    players: list[PlayerRow]
    games: list[GameRow]
    moves: dict[str, list[MoveRow]]
    #: When the previous run was last known alive (None for a new store).
    heartbeat: float | None
