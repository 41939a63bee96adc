"""Fish player protocol messages (docs/fish-protocol.md).

Out: one JSON object per line, the first protocol version's shapes. In: those shapes and the
externally tagged forms of later versions, ``tile_id`` accepted for ``next_tile_id``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from parlour.games.fish.public import COLORS, game_state
from parlour.games.fish.rules import FishMove, FishState, Move, Place
from parlour.protocols.streamed import Violation

__all__ = ["COLORS", "Connect", "Malformed", "decode", "game_state", "new_game_state", "player_connected"]


class Malformed(Violation):
    """A message this protocol does not accept; the sender is kicked."""


@dataclass(frozen=True, slots=True)
class Connect:
    age: int


def _natural(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Malformed(f"'{name}' must be a non-negative integer")
    return value


def decode(message: Any) -> Connect | FishMove:
    """A decoded request, or Malformed naming what is wrong."""
    if not isinstance(message, dict):
        raise Malformed("a message must be a JSON object")
    kind = message.get("type")
    body: Any = message
    if kind is None and len(message) == 1:  # {"PlacePenguin": {...}}: the later tagged form
        kind, body = next(iter(message.items()))
        if not isinstance(body, dict):
            raise Malformed(f"'{kind}' must hold an object")
    if kind == "PlayerConnect":
        return Connect(_natural(body.get("age"), "age"))
    if kind == "PlacePenguin":
        return Place(_natural(body.get("tile_id"), "tile_id"))
    if kind == "MovePenguin":
        target = body.get("next_tile_id", body.get("tile_id"))
        return Move(_natural(body.get("penguin_id"), "penguin_id"), _natural(target, "next_tile_id"))
    raise Malformed(f"unknown message type {str(kind)[:40]!r}")


def _line(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":")) + "\n"


def player_connected(player_id: int | None = None, error: str | None = None) -> str:
    if player_id is not None:
        return _line({"type": "PlayerConnected", "player_id": player_id})
    return _line({"type": "PlayerConnected", "error_message": error})


def new_game_state(state: FishState, winners: list[int] | None = None) -> str:
    return _line({"type": "NewGameState", "state": game_state(state, winners)})
