"""Hey, That's My Fish! rules, with Parlour's choices where the protocol was silent
(docs/fish-protocol.md).

Pure and deterministic given the injected random source, which only builds random boards.
Seats are PlayerIds (join order); turns go by ascending age, ties by join order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random
from typing import NamedTuple

from parlour.games.base import Outcome
from parlour.games.fish.board import neighbours_table, random_fish, uniform_fish

__all__ = ["FishState", "Move", "Place", "new_game"]

PENGUIN_FACTOR = 6  # each of N players has 6 - N penguins


class Place(NamedTuple):
    """Place the mover's lowest-id unplaced penguin on ``tile``."""

    tile: int


class Move(NamedTuple):
    """Slide ``penguin`` in a straight line to ``tile``."""

    penguin: int
    tile: int


FishMove = Place | Move


@dataclass(slots=True)
class FishState:
    rows: int
    columns: int
    #: Fish on each tile by id; 0 is a hole (or a tile already taken away).
    fish: list[int]
    neighbours: tuple[tuple[int, ...], ...]
    #: Seats in turn order (youngest first); seats removed by a kick leave it.
    order: list[int]
    #: Penguin positions by penguin id (-1: not placed yet); owner of each penguin.
    penguins: list[int]
    owner: list[int]
    scores: list[int]
    current: int | None
    removed: set[int] = field(default_factory=set)
    finished: bool = False

    def occupied(self) -> set[int]:
        return {tile for tile in self.penguins if tile >= 0}

    def penguins_of(self, seat: int) -> list[int]:
        return [p for p, who in enumerate(self.owner) if who == seat]


def new_game(
    seats: int,
    rng: Random,
    rows: int = 5,
    columns: int = 5,
    fish: int | None = None,
    holes: int = 0,
    ages: Sequence[int] | None = None,
) -> FishState:
    """A game for 2-4 seats. ``fish`` set: every tile holds that many (a fixed board); otherwise
    1-5 random fish per tile with ``holes`` random holes."""
    if not 2 <= seats <= 4:
        raise ValueError("Fish is played by 2, 3 or 4 players")
    per_player = PENGUIN_FACTOR - seats
    needed = seats * per_player
    if fish is not None:
        board = uniform_fish(rows, columns, fish)
        if rows * columns < needed:
            raise ValueError("the board is too small for every penguin")
    else:
        board = random_fish(rows, columns, holes, needed, rng)
    ages = list(ages) if ages is not None else [0] * seats
    order = sorted(range(seats), key=lambda seat: (ages[seat], seat))
    owner = [seat for seat in range(seats) for _ in range(per_player)]  # ids player by player
    return FishState(
        rows=rows,
        columns=columns,
        fish=board,
        neighbours=neighbours_table(rows, columns),
        order=order,
        penguins=[-1] * needed,
        owner=owner,
        scores=[0] * seats,
        current=order[0],
    )


def _reachable(state: FishState, tile: int, occupied: set[int]) -> list[int]:
    """Tiles a penguin on ``tile`` can slide to: straight lines stopped by holes and penguins."""
    found = []
    fish, neighbours = state.fish, state.neighbours
    for direction in range(6):
        step = neighbours[tile][direction]
        while step >= 0 and fish[step] > 0 and step not in occupied:
            found.append(step)
            step = neighbours[step][direction]
    return found


def legal_moves(state: FishState, seat: int) -> list[FishMove]:
    if state.finished or seat != state.current:
        return []
    return _actions(state, seat)


def _actions(state: FishState, seat: int) -> list[FishMove]:
    occupied = state.occupied()
    mine = state.penguins_of(seat)
    if any(state.penguins[p] < 0 for p in mine):
        return [Place(t) for t, f in enumerate(state.fish) if f > 0 and t not in occupied]
    return [Move(p, t) for p in mine for t in _reachable(state, state.penguins[p], occupied)]


def _advance(state: FishState, after: int) -> None:
    """The next seat in turn order that can act; the game ends when nobody can."""
    order = state.order
    if not order:
        state.current, state.finished = None, True
        return
    start = order.index(after) + 1 if after in order else 0
    for offset in range(len(order)):
        seat = order[(start + offset) % len(order)]
        if _actions(state, seat):
            state.current = seat
            return
    state.current, state.finished = None, True


def apply_move(state: FishState, move: FishMove) -> None:
    """Play a legal move in place."""
    seat = state.current
    assert seat is not None
    if isinstance(move, Place):
        penguin = next(p for p in state.penguins_of(seat) if state.penguins[p] < 0)
        state.penguins[penguin] = move.tile
    else:
        vacated = state.penguins[move.penguin]
        state.scores[seat] += state.fish[vacated]
        state.fish[vacated] = 0  # the tile is taken away (its fish are scored)
        state.penguins[move.penguin] = move.tile
    _advance(state, seat)


def remove_seat(state: FishState, seat: int) -> None:
    """A kicked player leaves with its penguins; play passes on if it was its turn."""
    if seat in state.removed:
        return
    state.removed.add(seat)
    for penguin in state.penguins_of(seat):
        state.penguins[penguin] = -2  # gone: neither placed nor waiting to be placed
    position = state.order.index(seat) if seat in state.order else -1
    state.order.remove(seat)
    if state.current == seat and not state.finished:
        previous = state.order[(position - 1) % len(state.order)] if state.order else seat
        _advance(state, previous)


def outcome(state: FishState) -> Outcome | None:
    """Every remaining player with the top score wins; nobody when all were kicked."""
    if not state.finished:
        return None
    if not state.order:
        return Outcome((), reason="everyone was removed")
    top = max(state.scores[seat] for seat in state.order)
    return Outcome(tuple(seat for seat in sorted(state.order) if state.scores[seat] == top), turns=top)
