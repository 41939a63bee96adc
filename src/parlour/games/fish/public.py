"""What anyone may see of a Fish game, as JSON: nothing is hidden in Fish.

One shape for every reader: the Fish protocol sends it as its GameState (docs/fish-protocol.md,
"The state": the documented names and the original code's where they differ), and the game
records of the HTTP API show it after each move.
"""

from __future__ import annotations

from typing import Any

import msgspec

from parlour.games.fish.board import DIRECTIONS
from parlour.games.fish.rules import FishMove, FishState

__all__ = ["COLORS", "game_state", "public_json"]

#: Player colours by PlayerId modulo 4, lowercase as documented.
COLORS = ("blue", "green", "pink", "purple")


def game_state(state: FishState, winners: list[int] | None = None) -> dict[str, Any]:
    """The board, the penguins and scores, whose turn it is, and the winners once there are."""
    tiles = []
    for tile, fish in enumerate(state.fish):
        if fish <= 0:
            continue  # holes are omitted
        entry: dict[str, Any] = {"tile_id": tile, "fish": fish, "fish_count": fish}
        for direction, (name, *_rest) in enumerate(DIRECTIONS):
            other = state.neighbours[tile][direction]
            entry[name] = other if other >= 0 and state.fish[other] > 0 else None
        tiles.append(entry)
    players = []
    for seat in state.order:
        penguins = [
            {"penguin_id": p, "tile": t if t >= 0 else None, "tile_id": t if t >= 0 else None}
            for p in state.penguins_of(seat)
            for t in (state.penguins[p],)
        ]
        players.append(
            {"player_id": seat, "color": COLORS[seat % 4], "penguins": penguins, "score": state.scores[seat]}
        )
    return {
        "board": {"tiles": tiles, "width": state.columns, "height": state.rows},
        "players": players,
        "turn_order": list(state.order),
        "current_turn": state.current,
        "winning_players": winners or [],
    }


def public_json(state: FishState, move: FishMove | None) -> dict[str, Any]:
    """The state as above, with the move that led to it (its type and fields) if there was one."""
    view = game_state(state)
    if move is not None:
        view["move"] = {"type": type(move).__name__, **msgspec.to_builtins(move._asdict())}
    return view
