"""Fish rules on hand-built boards (docs/fish-protocol.md)."""

from __future__ import annotations

from random import Random

import pytest

from parlour.games.fish import PLUGIN
from parlour.games.fish.board import neighbour, neighbours_table, random_fish
from parlour.games.fish.rules import (
    FishState,
    Move,
    Place,
    apply_move,
    legal_moves,
    new_game,
    outcome,
    remove_seat,
)

N, NE, SE, S, SW, NW = range(6)


def test_tile_ids_are_column_major_and_odd_rows_shift_right() -> None:
    # 3 rows x 3 columns:  0 3 6 /  1 4 7 / 2 5 8  (odd rows drawn half a tile right)
    assert [neighbour(3, 3, 4, d) for d in range(6)] == [-1, 6, 8, -1, 5, 3]
    assert neighbour(3, 3, 0, N) == -1 and neighbour(3, 3, 0, NW) == -1 and neighbour(3, 3, 0, SE) == 1
    assert neighbour(3, 3, 0, SW) == -1  # even row: south-west is one column left
    assert neighbour(3, 3, 1, SW) == 2 and neighbour(3, 3, 1, NE) == 3  # odd row: east side shifts
    assert neighbour(3, 3, 2, N) == 0 and neighbour(3, 3, 0, S) == 2
    assert neighbour(3, 3, 8, SE) == -1 and neighbour(3, 3, 7, SE) == -1 and neighbour(3, 3, 7, NE) == -1


def game(seats: int = 2, rows: int = 3, columns: int = 3, ages: list[int] | None = None) -> FishState:
    return new_game(seats, Random(1), rows=rows, columns=columns, fish=2, ages=ages)


def test_placement_goes_by_age_then_join_order_and_skips_occupied_tiles() -> None:
    state = game(3, rows=4, columns=4, ages=[9, 3, 3])
    assert state.order == [1, 2, 0] and state.current == 1
    assert len(state.penguins) == 9 and state.owner == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    apply_move(state, Place(5))
    assert state.penguins[3] == 5 and state.current == 2  # the lowest-id unplaced penguin
    assert Place(5) not in legal_moves(state, 2) and Place(6) in legal_moves(state, 2)
    assert legal_moves(state, 1) == []  # not its turn


def position(
    fish: list[int], penguins: list[int], owner: list[int], order: list[int], current: int
) -> FishState:
    """A hand-built 3 x 3 game:  0 3 6 / 1 4 7 / 2 5 8."""
    return FishState(
        rows=3,
        columns=3,
        fish=fish,
        neighbours=neighbours_table(3, 3),
        order=order,
        penguins=penguins,
        owner=owner,
        scores=[0] * (max(owner) + 1),
        current=current,
    )


def test_moves_are_straight_lines_stopped_by_holes_and_penguins() -> None:
    open_board = position([1] * 9, [0, 8], [0, 1], [0, 1], 0)
    # From 0: south-east 1 then 5; south 2; nothing north, north-west, south-west, north-east.
    assert sorted(m.tile for m in legal_moves(open_board, 0)) == [1, 2, 5]  # type: ignore[union-attr]
    holed = position([1, 1, 1, 1, 1, 0, 1, 1, 1], [0, 8], [0, 1], [0, 1], 0)
    assert sorted(m.tile for m in legal_moves(holed, 0)) == [1, 2]  # type: ignore[union-attr]
    blocked = position([1] * 9, [0, 1], [0, 1], [0, 1], 0)
    assert sorted(m.tile for m in legal_moves(blocked, 0)) == [2]  # type: ignore[union-attr]


def test_a_move_scores_the_vacated_tile_and_removes_it() -> None:
    state = position([3, 1, 1, 1, 1, 1, 1, 1, 1], [0, 8], [0, 1], [0, 1], 0)
    apply_move(state, Move(0, 5))
    assert state.scores == [3, 0] and state.fish[0] == 0 and state.penguins[0] == 5 and state.current == 1


def test_stuck_players_are_skipped_and_the_game_ends_when_nobody_can_move() -> None:
    # Seat 1 on tile 8 is walled in (6 and 4 taken, 7 a hole), and so is seat 2 on tile 6.
    fish = [1, 1, 1, 1, 1, 1, 1, 0, 1]
    state = FishState(3, 3, fish, neighbours_table(3, 3), [0, 1, 2], [0, 8, 6, 4], [0, 1, 2, 0], [0, 0, 0], 0)
    assert legal_moves(state, 0)
    apply_move(state, Move(0, 2))
    assert state.current == 0  # seats 1 and 2 cannot act and are skipped
    lonely = position([1, 0, 0, 0, 0, 0, 0, 0, 1], [0, 8], [0, 1], [0, 1], 0)
    assert legal_moves(lonely, 0) == []
    state = position([1, 1, 0, 0, 0, 0, 0, 0, 1], [0, 8], [0, 1], [0, 1], 0)
    apply_move(state, Move(0, 1))
    assert state.finished and state.current is None and outcome(state) is not None


def test_winners_are_every_player_with_the_top_score() -> None:
    state = game(3, rows=4, columns=4)
    state.scores = [5, 7, 7]
    state.finished, state.current = True, None
    result = outcome(state)
    assert result is not None and result.winners == (1, 2)


def test_removing_a_player_takes_its_penguins_and_passes_the_turn() -> None:
    state = game(3, rows=4, columns=4)
    apply_move(state, Place(0))  # seat 0 places; seat 1 to move
    assert state.current == 1
    remove_seat(state, 1)
    assert state.current == 2 and 1 not in state.order
    assert all(state.penguins[p] == -2 for p in state.penguins_of(1))
    assert state.penguins[0] == 0  # the others' penguins stay


def test_random_boards_respect_fish_range_holes_and_room() -> None:
    fish = random_fish(5, 5, 6, 8, Random(4))
    assert fish.count(0) == 6 and all(1 <= f <= 5 for f in fish if f)
    with pytest.raises(ValueError, match="room for fewer"):
        random_fish(3, 3, 5, 8, Random(4))


def test_random_playouts_end_with_a_winner() -> None:
    for seed in range(30):
        rng = Random(seed)
        seats = 2 + seed % 3
        state = PLUGIN.new_game(seats, {"holes": seed % 4}, rng)
        for _ in range(500):
            if PLUGIN.outcome(state) is not None:
                break
            mover = PLUGIN.to_move(state)
            assert mover is not None
            moves = PLUGIN.legal_moves(state, mover)
            assert moves
            state = PLUGIN.apply(state, moves[rng.randrange(len(moves))], rng)
        result = PLUGIN.outcome(state)
        assert result is not None and result.winners
        placed = [t for t in state.penguins if t >= 0]
        assert len(placed) == len(set(placed)) and all(state.fish[t] > 0 for t in placed)
