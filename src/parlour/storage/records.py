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
    "ASYNC_FINISHED_STATUSES",
    "EXPORT_KINDS",
    "STORE_META_KEYS",
    "AccountRow",
    "AsyncGameRow",
    "AsyncTurnRow",
    "GameRow",
    "MetaRow",
    "MoveRow",
    "PlayerGone",
    "PlayerRow",
    "RatingRow",
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


# ---------------------------------------------------------------------------------------------
# The /async protocol (scalable-server-notes.md): accounts, games, turns, ratings (schema v3)

#: Statuses of an /async game that are over: the rest are "live", loaded again after a restart.
ASYNC_FINISHED_STATUSES = ("OVER", "ABORTED")
#: ``parlour_meta`` keys the store itself owns: a MetaRow may not write them.
STORE_META_KEYS = frozenset({"application", "version", "schema_version", "heartbeat"})
#: The longest key ``parlour_meta`` holds (its column is a VARCHAR(64)).
META_KEY_CHARS = 64


class AccountRow(msgspec.Struct, frozen=True):
    """An /async account (S4), upserted whole. The id is allocated by the server core.

    ``password_hash`` is an Argon2id hash, or "" for an account of an external OAuth2/OIDC
    provider (it never logs in with a password). The store keeps names unique case-insensitively.
    """

    id: int
    name: str
    password_hash: str
    created: float


class AsyncGameRow(msgspec.Struct, frozen=True):
    """One /async game, whole, saved again whenever it changes.

    ``doc`` is opaque to the store: the core's own encoding of the game. ``status`` is the
    text's (NOT_STARTED, running, OUTCOME, OVER, ABORTING, ABORTED); OVER and ABORTED are over.
    """

    id: int
    game_type: str
    status: str
    created: float
    updated: float
    doc: bytes


class AsyncTurnRow(msgspec.Struct, frozen=True):
    """One committed turn of an /async game (S10: every turn is kept, the game's replay)."""

    game_id: int
    turn_index: int
    at: float
    doc: bytes


class RatingRow(msgspec.Struct, frozen=True):
    """An account's rating at one game type (S11). ``ordinal`` is the conservative estimate
    leaderboards sort by (with OpenSkill, ``mu - 3 * sigma``), computed by whoever rates."""

    account_id: int
    game_type: str
    mu: float
    sigma: float
    games: int
    updated: float
    ordinal: float


class MetaRow(msgspec.Struct, frozen=True):
    """A value kept in ``parlour_meta`` (upserted). The store's own keys are refused."""

    key: str
    value: str

    def __post_init__(self) -> None:
        if self.key in STORE_META_KEYS:
            raise ValueError(f"parlour_meta key {self.key!r} belongs to the store")
        if not 0 < len(self.key) <= META_KEY_CHARS:
            raise ValueError(f"a parlour_meta key has 1 to {META_KEY_CHARS} characters")


Record = (
    PlayerRow
    | PlayerGone
    | GameRow
    | MoveRow
    | AccountRow
    | AsyncGameRow
    | AsyncTurnRow
    | RatingRow
    | MetaRow
)


#: The kinds of rows of an export (``parlour db export``), in the order it gives them, and their
#: records.
EXPORT_KINDS: dict[str, type[Record]] = {
    "player": PlayerRow,
    "game": GameRow,
    "move": MoveRow,
    "account": AccountRow,
    "async_game": AsyncGameRow,
    "async_turn": AsyncTurnRow,
    "rating": RatingRow,
    "meta": MetaRow,
}


class Snapshot(msgspec.Struct):
    """What a restarting server loads: the registered players and every live game with its moves."""

    players: list[PlayerRow]
    games: list[GameRow]
    moves: dict[str, list[MoveRow]]
    #: When the previous run was last known alive (None for a new store).
    heartbeat: float | None
