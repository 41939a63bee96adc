"""Tsuro rules: the 35 tiles, rotations, paths, loops, collisions, suicide, the end
(docs/tsuro-protocol.md)."""

from __future__ import annotations

import re
from pathlib import Path
from random import Random

from parlour.games.tsuro import PLUGIN
from parlour.games.tsuro.rules import (
    ALIVE,
    COLLIDED,
    DEAD,
    EJECTED,
    Placement,
    TsuroState,
    _follow,
    _outcome_of,
    _simulate,
    apply_placement,
    check,
    eject,
    legal_moves,
    new_game,
    ranking,
)
from parlour.games.tsuro.tiles import PORTS, TILES, exit_port

# A few rows of the table of docs/tsuro-protocol.md, written out independently of the code's copy.
TABLE = {
    0: "AE BF CH DG",
    4: "AH BC DE FG",
    7: "AD BG CF EH",
    12: "AC BH DF EG",
    22: "AB CH DG EF",
    34: "AB CD EF GH",
}


def pairs(index: int, rotation: int) -> set[frozenset[str]]:
    return {frozenset((PORTS[p], PORTS[exit_port(index, rotation, p)])) for p in range(8)}


def test_all_35_tiles_in_all_4_rotations() -> None:
    assert len(TILES) == 35
    for index in range(35):
        assert sorted(TILES[index]) == list(range(8)) and all(TILES[index][p] != p for p in range(8))
        for rotation in (0, 90, 180, 270):
            turn = 2 * (rotation // 90)
            for port in range(8):
                out = exit_port(index, rotation, port)
                assert exit_port(index, rotation, out) == port  # paths go both ways
                assert out == (TILES[index][(port - turn) % 8] + turn) % 8
    for index, spec in TABLE.items():
        assert pairs(index, 0) == {frozenset(pair) for pair in spec.split()}
    # Clockwise: tile 0 turned 90 degrees joins C-G (was A-E), D-H (was B-F), E-B (was C-H), F-A (was D-G).
    assert pairs(0, 90) == {frozenset("CG"), frozenset("DH"), frozenset("EB"), frozenset("FA")}
    assert len({tuple(TILES[i]) for i in range(35)}) == 35


def empty(seats: int = 3) -> TsuroState:
    return new_game(seats, Random(1))


def test_initial_placement_rules_and_reasons() -> None:
    state = empty()
    hand = state.hand
    assert hand == [0, 1, 2]  # the cyclic deal
    assert check(state, 0, Placement(True, 9, 0, 0, 0, 0)) == "Played a tile not found in hand"
    assert check(state, 0, Placement(False, 0, 0, 0, 0)) == "initial placements are first round only"
    assert check(state, 0, Placement(True, 0, 0, 5, 5, 0)) == "not_on_border"
    assert check(state, 0, Placement(True, 0, 0, 4, 0, 4)) == "port not on outside edge"  # E faces down
    assert check(state, 0, Placement(True, 0, 0, 4, 0, 0)) is None  # A faces off the top
    apply_placement(state, Placement(True, 0, 0, 4, 0, 0))
    player = state.players[0]
    assert player.at == (4, 0, 4) and player.start == (4, 0, 0) and player.state == ALIVE  # in at A, out at E
    assert check(state, 1, Placement(True, 3, 0, 4, 0, 0)) == "space occupied"
    assert check(state, 1, Placement(True, 3, 0, 5, 0, 0)) == "has neighbor"
    assert state.hand == [3, 4, 5]


def test_intermediate_placement_must_be_in_front_of_the_avatar_and_paths_are_followed() -> None:
    state = empty()
    apply_placement(state, Placement(True, 0, 0, 4, 0, 0))  # white ends at (4,0) port E, facing (4,1)
    apply_placement(state, Placement(True, 3, 0, 0, 5, 7))
    apply_placement(state, Placement(True, 6, 0, 9, 5, 2))
    assert state.current == 0 and state.hand == [9, 10]
    assert check(state, 0, Placement(False, 9, 0, 5, 5)) == "not adjacent to occupied port"
    apply_placement(state, Placement(False, 9, 0, 4, 1))  # tile 9: AD BE CH FG; enters at B, leaves at E
    assert state.players[0].at == (4, 1, 4)


def board_with(cells: dict[tuple[int, int], tuple[int, int]]) -> list[list[tuple[int, int] | None]]:
    board: list[list[tuple[int, int] | None]] = [[None] * 10 for _ in range(10)]
    for (x, y), cell in cells.items():
        board[y][x] = cell
    return board


def test_loops_are_detected_never_endless() -> None:
    # Tile 4 (AH BC DE FG) on a 2 x 2 block: D->G, F->A, H->C and B->E chain round and round.
    block = board_with({(4, 4): (4, 0), (5, 4): (4, 0), (5, 5): (4, 0), (4, 5): (4, 0)})
    assert _follow(block, (4, 4, 3)) == ((4, 4, 3), "loop")
    # Without the fourth tile the same path stops in front of the empty square.
    open_block = board_with({(4, 4): (4, 0), (5, 4): (4, 0), (5, 5): (4, 0)})
    assert _follow(open_block, (4, 4, 3)) == ((5, 5, 7), None)


def test_leaving_through_a_starting_port_is_a_collision_otherwise_death() -> None:
    state = empty()
    apply_placement(state, Placement(True, 0, 0, 4, 0, 0))  # white started at (4,0) port A
    assert state.players[0].start == (4, 0, 0)
    assert _outcome_of(state, (4, 0, 0), "off") == COLLIDED
    assert _outcome_of(state, (4, 0, 1), "off") == DEAD
    assert _outcome_of(state, (4, 0, 1), "loop") == DEAD


def test_suicide_is_illegal_unless_every_choice_dies() -> None:
    refused = forced = 0
    for seed in range(40):
        rng = Random(seed)
        state = new_game(3, rng)
        while not state.finished and (refused == 0 or forced == 0):
            seat = state.current
            assert seat is not None
            moves = legal_moves(state, seat)
            if not state.players[seat].at:
                apply_placement(state, moves[rng.randrange(len(moves))], rng)
                continue
            x, y = moves[0].x, moves[0].y
            every = [Placement(False, t, r, x, y) for t in state.hand for r in (0, 90, 180, 270)]
            reasons = [check(state, seat, move) for move in every]
            if "player does not survive" in reasons:
                refused += 1
                assert None in reasons  # refused only while a surviving choice exists
            if all(_simulate(state, move, seat)[1][seat][1] != ALIVE for move in every):
                forced += 1
                assert all(reason is None for reason in reasons)  # a suicide-only hand: all allowed
            apply_placement(state, moves[rng.randrange(len(moves))], rng)
    assert refused and forced


def test_random_games_end_with_a_ranking_and_ejected_players_last() -> None:
    for seed in range(12):
        rng = Random(seed)
        seats = 3 + seed % 3
        state = PLUGIN.new_game(seats, {"deal": "random" if seed % 2 else "cyclic"}, rng)
        if seed % 4 == 0:
            eject(state, seats - 1)
        for _ in range(200):
            if PLUGIN.outcome(state) is not None:
                break
            mover = PLUGIN.to_move(state)
            assert mover is not None
            moves = PLUGIN.legal_moves(state, mover)
            state = PLUGIN.apply(state, moves[rng.randrange(len(moves))], rng)
        assert PLUGIN.outcome(state) is not None
        places = ranking(state)
        assert sorted(s for place in places for s in place) == list(range(seats))
        if seed % 4 == 0:
            assert places[-1] == [seats - 1] and state.players[seats - 1].state == EJECTED
        assert sum(1 for p in state.players if p.state == ALIVE) <= 1 or all(
            cell is not None for row in state.board for cell in row
        )


def test_a_full_board_ends_the_game() -> None:
    state = empty()
    for y in range(10):
        for x in range(10):
            state.board[y][x] = (34, 0)
    state.board[5][5] = None
    for index, player in enumerate(state.players):
        player.at = (5, 4, 4) if index == 0 else (0, index, 6)
        player.start = (0, 0, 0)
    state.current, state.hand, state.round = 0, [34, 0], 3
    move = Placement(False, 0, 0, 5, 5)
    assert check(state, 0, move) in (None, "player does not survive")
    apply_placement(state, legal_moves(state, 0)[0])
    assert state.finished and state.current is None
    assert PLUGIN.outcome(state) is not None


def test_the_tile_table_of_the_protocol_doc_is_the_servers() -> None:
    """docs/tsuro-protocol.md lists each tile's joined ports: the same pairs as TILES."""
    doc = (Path(__file__).resolve().parents[3] / "docs/tsuro-protocol.md").read_text(encoding="utf-8")
    listed: dict[int, tuple[int, ...]] = {}
    for number, pairs in re.findall(r"\| (\d+) \| ((?:[A-H]{2} ?){4}) ", doc):
        other = [0] * 8
        for pair in pairs.split():
            a, b = PORTS.index(pair[0]), PORTS.index(pair[1])
            other[a], other[b] = b, a
        listed[int(number)] = tuple(other)
    assert listed == dict(enumerate(TILES))
