"""Game records as JSON for the HTTP API: configuration, seats, result, and every move with
what a spectator could see after it (hidden information left out: no Apologies hand, no
Tsuro hand). The states come from replaying the stored moves from the stored seed, and each
view from the game's plugin (``public_json``), the one its protocol's renderer uses too."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

import msgspec

from parlour.core.durable import replay
from parlour.games.registry import plugin
from parlour.storage.records import GameRow, MoveRow, SeatRow

__all__ = ["game_json", "record_json", "summary_json"]


def summary_json(row: GameRow) -> dict[str, Any]:
    """One game of a list: what it was, who sat where, how it ended."""
    return {
        "id": row.id,
        "game_type": row.game,
        "protocol": row.protocol,
        "name": row.name,
        "state": row.state,
        "created": row.created,
        "started": row.started,
        "finished": row.finished,
        "moves": row.moves,
        "options": row.config.get("options", {}),
        "seats": [_seat(row, index, seat) for index, seat in enumerate(row.seats)],
        "result": row.result,
    }


#: Apologies seats are colours in this order (seat 0 is RED).
APOLOGIES_COLORS = ("RED", "YELLOW", "GREEN", "BLUE")


def _seat(row: GameRow, index: int, seat: SeatRow) -> dict[str, Any]:
    found: dict[str, Any] = {"handle": seat.handle, "robot": seat.robot}
    if row.game == "apologies" and row.started is not None:
        found["color"] = APOLOGIES_COLORS[index]
    return found


def record_json(row: GameRow, moves: Sequence[MoveRow]) -> dict[str, Any]:
    """One game whole: its summary, the view before the first move, and every move with the
    view after it."""
    record = summary_json(row)
    if row.started is None:
        record["initial"], record["moves"] = None, []
        return record
    rules = plugin(row.game)
    # Stored options are JSON; each plugin's new_game reads them as they are (the Apologies
    # mode by its value).
    options = row.config.get("options", {})
    view = rules.public_json
    steps = []
    initial: dict[str, Any] | None = None
    for state, stored, value in replay(rules, len(row.seats), options, Random(row.seed), moves):
        if stored is None:
            initial = view(state, None)
            continue
        steps.append(
            {
                "seq": stored.seq,
                "seat": stored.seat,
                "handle": row.seats[stored.seat].handle,
                "kind": stored.kind,
                "at": stored.at,
                "view": view(state, value),
            }
        )
    record["initial"], record["moves"] = initial, steps
    return record


def game_json(row: GameRow, moves: Sequence[MoveRow]) -> bytes:
    return msgspec.json.encode(record_json(row, moves))
