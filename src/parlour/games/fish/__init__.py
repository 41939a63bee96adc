"""Hey, That's My Fish!: the rules plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from parlour.games.base import Outcome
from parlour.games.fish.public import public_json
from parlour.games.fish.rules import (
    FishMove,
    FishState,
    Move,
    Place,
    apply_move,
    legal_moves,
    new_game,
    outcome,
    remove_seat,
)

__all__ = ["PLUGIN", "FishPlugin", "FishState", "Move", "Place"]


class FishPlugin:
    name = "fish"
    min_seats = 2
    max_seats = 4

    def new_game(self, seats: int, options: Mapping[str, Any], rng: Random) -> FishState:
        return new_game(
            seats,
            rng,
            rows=int(options.get("rows", 5)),
            columns=int(options.get("columns", 5)),
            fish=options.get("fish"),
            holes=int(options.get("holes", 0)),
            ages=options.get("ages"),
        )

    def to_move(self, state: FishState) -> int | None:
        return state.current

    def legal_moves(self, state: FishState, seat: int) -> Sequence[FishMove]:
        return legal_moves(state, seat)

    def apply(self, state: FishState, move: FishMove, rng: Random) -> FishState:
        apply_move(state, move)
        return state

    def view(self, state: FishState, seat: int) -> FishState:
        return state  # nothing is hidden in Fish

    def outcome(self, state: FishState) -> Outcome | None:
        return outcome(state)

    def remove_seat(self, state: FishState, seat: int) -> FishState:
        remove_seat(state, seat)
        return state

    def public_json(self, state: FishState, move: FishMove | None) -> dict[str, Any]:
        return public_json(state, move)


PLUGIN = FishPlugin()
