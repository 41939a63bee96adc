"""Small builders of store rows, shared by the storage and ``parlour db`` tests."""

from __future__ import annotations

from typing import Any

from parlour.storage import MOVE, REMOVE_SEAT, GameRow, MoveRow, PlayerRow, Record, SeatRow

__all__ = ["finished_game", "game", "move_rows", "player", "populate"]


def player(number: int, handle: str | None = None) -> PlayerRow:
    return PlayerRow(
        id=f"player-{number:04}",
        handle=handle or f"handle{number}",
        registered=1000.0 + number,
        last_active=2000.0 + number,
    )


def game(number: int, state: str = "PLAYING", moves: int = 0, **fields: Any) -> GameRow:
    """A game with two seats, a human (``handle<number>``) and a robot."""
    defaults: dict[str, Any] = {
        "id": f"game-{number:04}",
        "protocol": "apologies",
        "game": "apologies",
        "name": f"Game {number}",
        "state": state,
        "created": 100.0 + number,
        "last_active": 200.0 + number,
        "seed": 7_000_000_000 + number,  # more than 32 bits: the column is a BIGINT
        "moves": moves,
        "config": {"mode": "STANDARD", "players": 2, "visibility": "PUBLIC"},
        "seats": [
            SeatRow(handle=f"handle{number}", robot=False, state="PLAYING", player_id=f"player-{number:04}"),
            SeatRow(handle="Robbie", robot=True, state="PLAYING", extra={"age": 9}),
        ],
    }
    defaults.update(fields)
    return GameRow(**defaults)


def finished_game(number: int, finished: float, **fields: Any) -> GameRow:
    fields.setdefault("state", "COMPLETED")
    fields.setdefault("result", {"winners": [0], "reason": "won", "comment": None})
    return game(number, started=150.0 + number, finished=finished, **fields)


def move_rows(game_id: str, count: int, start: int = 0) -> list[MoveRow]:
    """Moves ``start..count-1``, every fifth one a seat taken out of play."""
    return [
        MoveRow(game_id, seq, seq % 2, REMOVE_SEAT if seq % 5 == 4 else MOVE, seq % 3, 500.0 + seq)
        for seq in range(start, count)
    ]


def populate(games: int = 6, moves: int = 4) -> list[Record]:
    """One batch: two players, and games alternately live and finished, each with its moves."""
    records: list[Record] = [player(1), player(2)]
    for number in range(games):
        if number % 2:
            row = finished_game(number, finished=900.0 + number, moves=moves)
        elif number % 4:
            row = game(number, state="PLAYING", moves=moves)
        else:
            row = game(number, state="ADVERTISED")  # not started: no moves yet
        records.append(row)
        records.extend(move_rows(row.id, row.moves))
    return records
