"""Small builders for hand-made Apologies positions."""

from __future__ import annotations

from parlour.games.apologies.engine import GameState, legal_moves
from parlour.games.apologies.model import START, Card, Color, Mode, Move

R, Y, G, B = Color.RED, Color.YELLOW, Color.GREEN, Color.BLUE
S = START


def position(
    pawns: dict[Color, list[int]],
    to_move: Color = R,
    card: Card | None = None,
    players: int = 4,
    mode: Mode = Mode.STANDARD,
    hands: dict[Color, list[Card]] | None = None,
) -> GameState:
    return GameState.from_position(
        mode, list(Color)[:players], pawns, hands=hands, drawn_card=card, to_move=to_move
    )


def moves(pawns: dict[Color, list[int]], card: Card, to_move: Color = R, players: int = 4) -> list[Move]:
    return legal_moves(position(pawns, to_move, card, players), to_move)


def ends(move: Move) -> dict[tuple[Color, int], int]:
    """Where each pawn the move touches ends up (actions, then side effects)."""
    found: dict[tuple[Color, int], int] = {}
    for step in (*move.actions, *move.side_effects):
        found[(step.color, step.pawn)] = step.end
    return found


def summary(found: list[Move]) -> list[dict[tuple[Color, int], int]]:
    return [ends(move) for move in found]
