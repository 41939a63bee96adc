"""What anyone may see of a Tsuro game, as JSON: the board and where each player stands
(the hands stay hidden).

One shape for every reader: the Tsuro protocol builds its messages from these parts
(docs/tsuro-protocol.md), and the game records of the HTTP API show them after each move.
"""

from __future__ import annotations

from typing import Any

import msgspec

from parlour.games.tsuro.rules import SIZE, Placement, TsuroState
from parlour.games.tsuro.tiles import PORTS

__all__ = ["board", "player", "public_json", "tile"]


def tile(state: TsuroState, x: int, y: int) -> dict[str, int] | None:
    """The tile placed at (x, y), None for an empty square."""
    cell = state.board[y][x]
    return None if cell is None else {"index": cell[0], "rotation": cell[1], "x": x, "y": y}


def board(state: TsuroState) -> list[list[dict[str, int] | None]]:
    return [[tile(state, x, y) for x in range(SIZE)] for y in range(SIZE)]


def player(state: TsuroState, seat: int) -> dict[str, Any]:
    """A player's colour, the tile and port their token stands on, and their state."""
    who = state.players[seat]
    at = who.at
    return {
        "color": who.color,
        "tile": tile(state, at[0], at[1]) if at is not None else None,
        "port": PORTS[at[2]] if at is not None else None,
        "state": who.state,
    }


def public_json(state: TsuroState, move: Placement | None) -> dict[str, Any]:
    """The board and every player, with the placement that led to it if there was one."""
    view: dict[str, Any] = {
        "board": board(state),
        "players": [player(state, seat) for seat in range(len(state.players))],
    }
    if move is not None:
        view["move"] = msgspec.to_builtins(move._asdict())
    return view
