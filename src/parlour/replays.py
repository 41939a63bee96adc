"""Game records as JSON for the HTTP API: configuration, seats, result, and every move with
what a spectator could see after it (hidden information left out: no Apologies hand, no
Tsuro hand). The states come from replaying the stored moves from the stored seed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from random import Random
from typing import Any

import msgspec

from parlour.core.durable import replay
from parlour.games.registry import plugin
from parlour.storage.records import GameRow, MoveRow, SeatRow

__all__ = ["game_json", "record_json", "summary_json"]


def _apologies_view(state: Any, move: Any) -> dict[str, Any]:
    from parlour.protocols.apologies_ws.render import _pawn

    players = [
        {
            "color": color.name,
            "turns": state.turns[color],
            "pawns": [_pawn(color, index, position) for index, position in enumerate(state.pawns[color])],
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
    view = {"players": players, "action": action, "to_move": to_move, "winner": winner}
    if move is not None:
        # The move itself, pawns as in GAME_PLAYER_TURN (the history's last entry may be the
        # game's completion rather than the move).
        view["move"] = {
            "card": move.card.name,
            "actions": [_step(step) for step in move.actions],
            "side_effects": [_step(step) for step in move.side_effects],
        }
    return view


def _step(step: Any) -> dict[str, Any]:
    from parlour.protocols.apologies_ws.render import _pawn

    return {"start": _pawn(step.color, step.pawn, step.start), "end": _pawn(step.color, step.pawn, step.end)}


def _fish_view(state: Any, move: Any) -> dict[str, Any]:
    from parlour.protocols.fish_tcp.messages import game_state

    view = game_state(state)
    if move is not None:
        view["move"] = {"type": type(move).__name__, **msgspec.to_builtins(move._asdict())}
    return view


def _tsuro_view(state: Any, move: Any) -> dict[str, Any]:
    from parlour.protocols.tsuro_tcp.messages import board, player

    view: dict[str, Any] = {
        "board": board(state),
        "players": [player(state, seat) for seat in range(len(state.players))],
    }
    if move is not None:
        view["move"] = msgspec.to_builtins(move._asdict())
    return view


#: The public view of each game's state, by game name.
VIEWS: dict[str, Callable[[Any, Any], dict[str, Any]]] = {
    "apologies": _apologies_view,
    "fish": _fish_view,
    "tsuro": _tsuro_view,
}


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
    view = VIEWS[row.game]
    options = row.config.get("options", {})
    if row.game == "apologies":
        from parlour.protocols.apologies_ws.service import decode_options

        options = decode_options(options)
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
