"""Values of the Apologies game: colours, cards, pawn positions, moves, history, views.

Everything here is small and immutable so that moves can be hashed, compared and turned into
wire forms by the protocol layer (docs/apologies-protocol.md). Positions are plain ints
for speed: the rules engine indexes precomputed tables with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import NamedTuple

__all__ = [
    "HOME",
    "SAFE",
    "SAFE_SQUARES",
    "SQUARES",
    "START",
    "Card",
    "Color",
    "HistoryEntry",
    "Mode",
    "Move",
    "PawnMove",
    "PlayerView",
    "position_name",
]

#: Board squares are 0..59; a colour's own safe zone is SAFE+0 .. SAFE+4; then home and start.
SQUARES = 60
SAFE = 60
SAFE_SQUARES = 5
HOME = SAFE + SAFE_SQUARES  # 65
START = HOME + 1  # 66


class Color(IntEnum):
    """Seat and turn order: a game of n players uses the first n colours."""

    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3


class Mode(Enum):
    STANDARD = "STANDARD"
    ADULT = "ADULT"


class Card(IntEnum):
    """The eleven card types; the value is the face used in history strings (A = 0)."""

    CARD_APOLOGIES = 0
    CARD_1 = 1
    CARD_2 = 2
    CARD_3 = 3
    CARD_4 = 4
    CARD_5 = 5
    CARD_7 = 7
    CARD_8 = 8
    CARD_10 = 10
    CARD_11 = 11
    CARD_12 = 12

    @property
    def face(self) -> str:
        """The card as history strings write it: ``1`` .. ``12`` or ``A``."""
        return "A" if self == 0 else str(int(self))


def position_name(position: int) -> str:
    """A position as history strings write it: ``square 11``, ``safe 2``, ``home``, ``start``."""
    if position < SAFE:
        return f"square {position}"
    if position < HOME:
        return f"safe {position - SAFE}"
    return "home" if position == HOME else "start"


class PawnMove(NamedTuple):
    """One pawn going from ``start`` to ``end`` (positions as above; ``end`` includes any slide).

    Moves are named tuples rather than dataclasses: the engine builds thousands per second.
    """

    color: Color
    pawn: int
    start: int
    end: int


class Move(NamedTuple):
    """A legal move: the card played, what the player does, and the bumps that follow.

    A forfeit is a move with no actions.
    """

    card: Card
    actions: tuple[PawnMove, ...]
    side_effects: tuple[PawnMove, ...] = ()
    #: ADULT: which card of the hand is played (its index), so that of two equal cards the one
    #: chosen is the one discarded and the hand keeps its order; -1 in STANDARD.
    slot: int = -1

    @property
    def is_forfeit(self) -> bool:
        return not self.actions


class HistoryEntry(NamedTuple):
    """One line of game history with its exact action text (docs/apologies-protocol.md, "Game
    history").

    A named tuple, like moves: one is made per move, and under mypyc a frozen dataclass is
    built through ``object.__setattr__``, several times slower.
    """

    action: str
    color: Color | None = None
    card: Card | None = None


@dataclass(frozen=True, slots=True)
class PlayerView:
    """What one seat may see: every pawn, every colour's turn count, only its own hand."""

    color: Color
    mode: Mode
    colors: tuple[Color, ...]  # colours in play, in colour order
    pawns: tuple[tuple[int, int, int, int], ...]  # indexed by Color value, positions of pawns 0-3
    turns: tuple[int, ...]  # indexed by Color value
    hand: tuple[Card, ...]  # own hand, in hand order (always empty in STANDARD)
    drawn_card: Card | None  # STANDARD: the card drawn for the current turn
    history: tuple[HistoryEntry, ...]
