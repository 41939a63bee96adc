"""Tsuro: the rules plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from parlour.games.base import Outcome
from parlour.games.tsuro.public import public_json
from parlour.games.tsuro.rules import (
    Placement,
    TsuroState,
    apply_placement,
    eject,
    legal_moves,
    new_game,
    ranking,
)

__all__ = ["PLUGIN", "Placement", "TsuroPlugin", "TsuroState"]


class TsuroPlugin:
    name = "tsuro"
    min_seats = 3
    max_seats = 5

    def new_game(self, seats: int, options: Mapping[str, Any], rng: Random) -> TsuroState:
        return new_game(seats, rng, random_deal=options.get("deal") == "random")

    def to_move(self, state: TsuroState) -> int | None:
        return state.current

    def legal_moves(self, state: TsuroState, seat: int) -> Sequence[Placement]:
        return legal_moves(state, seat)

    def apply(self, state: TsuroState, move: Placement, rng: Random) -> TsuroState:
        apply_placement(state, move, rng)
        return state

    def view(self, state: TsuroState, seat: int) -> TsuroState:
        return state

    def outcome(self, state: TsuroState) -> Outcome | None:
        if not state.finished:
            return None
        places = ranking(state)
        return Outcome(tuple(places[0]) if places else ())

    def remove_seat(self, state: TsuroState, seat: int) -> TsuroState:
        eject(state, seat)
        return state

    def public_json(self, state: TsuroState, move: Placement | None) -> dict[str, Any]:
        return public_json(state, move)


PLUGIN = TsuroPlugin()
