"""The Apologies rules engine behind the game-plugin interface (parlour.games.base).

A module of its own, compiled with the engine (setup.py): the lobby calls these methods four
times a move, and each call of an interpreted method costs more than some of the work behind it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from parlour.games.apologies.engine import GameState, apply_move, legal_moves, new_game, view
from parlour.games.apologies.model import Color, Mode, Move, PlayerView
from parlour.games.apologies.public import public_json
from parlour.games.apologies.snapshot import decode_state, encode_state
from parlour.games.base import Outcome, Seat

__all__ = ["PLUGIN", "ApologiesPlugin"]


class ApologiesPlugin:
    """Seats are colours in order: seat 0 is RED, 1 YELLOW, 2 GREEN, 3 BLUE."""

    name = "apologies"
    min_seats = 2
    max_seats = 4

    def new_game(self, seats: int, options: Mapping[str, Any], rng: Random) -> GameState:
        mode = options.get("mode", Mode.STANDARD)
        return new_game(seats, mode if isinstance(mode, Mode) else Mode(mode), rng)

    def to_move(self, state: GameState) -> Seat | None:
        return None if state.to_move is None else int(state.to_move)

    def legal_moves(self, state: GameState, seat: Seat) -> Sequence[Move]:
        return legal_moves(state, seat)

    def apply(self, state: GameState, move: Move, rng: Random) -> GameState:
        apply_move(state, move, rng)
        return state

    def view(self, state: GameState, seat: Seat) -> PlayerView:
        return view(state, Color(seat))

    def outcome(self, state: GameState) -> Outcome | None:
        if state.winner is None:
            return None
        return Outcome((int(state.winner),), turns=state.turns[state.winner])

    def remove_seat(self, state: GameState, seat: Seat) -> GameState:
        raise NotImplementedError("an abandoned Apologies seat is played by a robot, never removed")

    def public_json(self, state: GameState, move: Move | None) -> dict[str, Any]:
        return public_json(state, move)

    def encode_state(self, state: GameState) -> bytes:
        return encode_state(state)

    def decode_state(self, data: bytes) -> GameState:
        return decode_state(data)


PLUGIN = ApologiesPlugin()
