"""What anyone may see of an Apologies game, as JSON: pawns, turns and the last action, never
a hand.

The pawn object is the one of the Apologies protocol (docs/apologies-protocol.md), which its
renderer pre-encodes from ``pawn_json``; the game records of the HTTP API show the same pawns
after each move.
"""

from __future__ import annotations

from typing import Any

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import HOME, SAFE, START, Color, Move, PawnMove

__all__ = ["pawn_json", "public_json"]


def pawn_json(color: Color, index: int, position: int) -> dict[str, Any]:
    """The protocol's pawn object: exactly one of start/home/safe/square is set."""
    return {
        "color": color.name,
        "id": str(index),
        "start": position == START,
        "home": position == HOME,
        "safe": position - SAFE if SAFE <= position < HOME else None,
        "square": position if position < SAFE else None,
    }


def _step(step: PawnMove) -> dict[str, Any]:
    return {
        "start": pawn_json(step.color, step.pawn, step.start),
        "end": pawn_json(step.color, step.pawn, step.end),
    }


def public_json(state: GameState, move: Move | None) -> dict[str, Any]:
    """Each colour's turns and pawns, the last action, who is to move and the winner; with the
    move that led here if there was one (pawns as in GAME_PLAYER_TURN: the history's last entry
    may be the game's completion rather than the move)."""
    players = [
        {
            "color": color.name,
            "turns": state.turns[color],
            "pawns": [pawn_json(color, index, position) for index, position in enumerate(state.pawns[color])],
        }
        for color in state.colors
    ]
    last = state.history[-1] if state.history else None
    action = None
    if last is not None:
        action = {
            "action": last.action,
            "color": None if last.color is None else last.color.name,
            "card": None if last.card is None else last.card.name,
        }
    winner = None if state.winner is None else state.winner.name
    to_move = None if state.to_move is None else state.to_move.name
    view: dict[str, Any] = {"players": players, "action": action, "to_move": to_move, "winner": winner}
    if move is not None:
        view["move"] = {
            "card": move.card.name,
            "actions": [_step(step) for step in move.actions],
            "side_effects": [_step(step) for step in move.side_effects],
        }
    return view
