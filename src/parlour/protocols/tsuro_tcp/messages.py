"""Tsuro protocol messages (docs/tsuro-protocol.md).

Out: one JSON object per line. In: JOIN and MOVE_REQUEST, typed strictly; anything else is a
reason to eject the sender, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from parlour.games.tsuro.public import board, player
from parlour.games.tsuro.rules import SIZE, Placement, TsuroState, ranking
from parlour.games.tsuro.tiles import PORTS, TILES
from parlour.protocols.streamed import Violation

__all__ = ["Bad", "Join", "MoveRequest", "decode", "line"]


class Bad(Violation):
    """A message to eject for; the text is the EJECTED reason."""


@dataclass(frozen=True, slots=True)
class Join:
    name: str
    strategy: str


@dataclass(frozen=True, slots=True)
class MoveRequest:
    color: str
    placement: Placement


def _text(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _int(body: dict[str, Any], name: str, low: int, high: int) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Bad(f"'{name}' must be an integer")
    if not low <= value <= high:
        raise Bad(f"'{name}' must be between {low} and {high}")
    return value


def decode(message: Any) -> Join | MoveRequest:
    if not isinstance(message, dict):
        raise Bad("a message must be a JSON object")
    kind = message.get("type")
    if kind == "JOIN":
        name, strategy = message.get("name"), message.get("strategy", "")
        if not isinstance(name, str) or not name.strip():
            raise Bad("'name' must be a non-empty string")
        if not isinstance(strategy, str):
            raise Bad("'strategy' must be a string")
        if not _text(name) or not _text(strategy):
            # JSON may escape lone surrogates; such a name could be neither stored nor sent.
            raise Bad("'name' and 'strategy' must be Unicode text (no lone surrogates)")
        return Join(name, strategy)
    if kind == "MOVE_REQUEST":
        kind_of = message.get("placement_type")
        if kind_of not in ("INITIAL", "INTERMEDIATE"):
            raise Bad("'placement_type' must be INITIAL or INTERMEDIATE")
        rotation = message.get("rotation")
        if not isinstance(rotation, int) or isinstance(rotation, bool) or rotation not in (0, 90, 180, 270):
            raise Bad("'rotation' must be 0, 90, 180 or 270")
        color = message.get("color")
        if not isinstance(color, str):
            raise Bad("'color' must be a string")
        port = None
        if kind_of == "INITIAL":
            letter = message.get("port")
            if not isinstance(letter, str) or len(letter) != 1 or letter not in PORTS:
                raise Bad("'port' must be one of A-H")
            port = PORTS.index(letter)
        placement = Placement(
            kind_of == "INITIAL",
            _int(message, "index", 0, len(TILES) - 1),
            rotation,
            _int(message, "x", 0, SIZE - 1),
            _int(message, "y", 0, SIZE - 1),
            port,
        )
        return MoveRequest(color, placement)
    raise Bad(f"unknown message type {str(kind)[:40]!r}")


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields}, separators=(",", ":")) + "\n"


def game_state(state: TsuroState, seat: int) -> str:
    """RECEIVE_GAME_STATE: the board, every player's current state, and the recipient's own."""
    mine = player(state, seat)
    return line(
        "RECEIVE_GAME_STATE",
        board=board(state),
        players=[player(state, s) for s in range(len(state.players))],
        state=mine["state"],
        tile=mine["tile"],
        port=mine["port"],
    )


def ask_for_move(state: TsuroState) -> str:
    tiles = [{"index": index, "rotation": 0, "x": None, "y": None} for index in state.hand]
    return line("ASK_FOR_MOVE", board=board(state), tiles=tiles)


def game_end(state: TsuroState) -> str:
    """Places best first under keys "0", "1", ..., ejected players last."""
    results = {
        str(place): [[player(state, seat), state.players[seat].state] for seat in seats]
        for place, seats in enumerate(ranking(state))
    }
    return line("GAME_END", results=results)
