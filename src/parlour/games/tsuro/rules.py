"""Tsuro rules, with Parlour's choices where the original server was silent or wrong
(docs/tsuro-protocol.md).

Pure and deterministic given the injected random source (used only by the random deal).
Seats are join order; colours white, black, red, green, blue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, NamedTuple

from parlour.games.tsuro.tiles import MATCH, SIDE_STEP, TILES, exit_port, port_side

__all__ = [
    "COLORS",
    "SIZE",
    "Placement",
    "Player",
    "TsuroState",
    "apply_placement",
    "check",
    "legal_moves",
    "new_game",
]

SIZE = 10
COLORS = ("white", "black", "red", "green", "blue")
ALIVE, DEAD, COLLIDED, EJECTED = "ALIVE", "DEAD", "COLLIDED", "EJECTED"


class Placement(NamedTuple):
    """Put tile number ``tile`` turned ``rotation`` degrees on (x, y); ``port`` names the entry
    (A=0..H=7) for the first placement and is None afterwards."""

    initial: bool
    tile: int
    rotation: int
    x: int
    y: int
    port: int | None = None


@dataclass(slots=True)
class Player:
    color: str
    state: str = ALIVE
    #: Where the avatar stands: on square (x, y) at ``port``; None before its first placement.
    at: tuple[int, int, int] | None = None
    #: Where it entered the board (for collisions).
    start: tuple[int, int, int] | None = None
    #: When it left the game (placement number), for the ranking.
    out: int | None = None


@dataclass(slots=True)
class TsuroState:
    board: list[list[tuple[int, int] | None]]  # board[y][x] = (index, rotation)
    players: list[Player]
    current: int | None
    hand: list[int]
    round: int = 0
    dealt: int = 0  # the cyclic deal's counter
    placements: int = 0
    random_deal: bool = False
    rng_state: Any = None
    finished: bool = False
    seats_played: set[int] = field(default_factory=set)


def _deal(state: TsuroState, rng: Random | None) -> None:
    """The mover's fresh hand: 3 tiles in the first round, 2 afterwards."""
    count = 3 if state.round == 0 else 2
    if state.random_deal and rng is not None:
        state.hand = [rng.randrange(len(TILES)) for _ in range(count)]
    else:
        state.hand = [(state.dealt + i) % len(TILES) for i in range(count)]
        state.dealt = (state.dealt + count) % len(TILES)


def new_game(seats: int, rng: Random, random_deal: bool = False) -> TsuroState:
    if not 3 <= seats <= 5:
        raise ValueError("Tsuro is played by 3, 4 or 5 players")
    state = TsuroState(
        board=[[None] * SIZE for _ in range(SIZE)],
        players=[Player(COLORS[seat]) for seat in range(seats)],
        current=0,
        hand=[],
        random_deal=random_deal,
    )
    _deal(state, rng)
    return state


def _on_board(x: int, y: int) -> bool:
    return 0 <= x < SIZE and 0 <= y < SIZE


def _beyond(x: int, y: int, port: int) -> tuple[int, int]:
    dx, dy = SIDE_STEP[port_side(port)]
    return x + dx, y + dy


def _follow(
    board: Sequence[Sequence[tuple[int, int] | None]], at: tuple[int, int, int]
) -> tuple[tuple[int, int, int], str | None]:
    """Walk the paths from ``at`` until the next square is empty or off the board, or a loop.

    Returns the final position and None (still in play), "off" (left the board) or "loop".
    """
    x, y, port = at
    seen = {at}
    while True:
        nx, ny = _beyond(x, y, port)
        if not _on_board(nx, ny):
            return (x, y, port), "off"
        cell = board[ny][nx]
        if cell is None:
            return (x, y, port), None
        x, y = nx, ny
        port = exit_port(cell[0], cell[1], MATCH[port])
        if (x, y, port) in seen:
            return (x, y, port), "loop"  # a closed loop is death, never an endless walk
        seen.add((x, y, port))


def _outcome_of(state: TsuroState, where: tuple[int, int, int], ending: str | None) -> str:
    if ending is None:
        return ALIVE
    if ending == "off" and any(p.start == where for p in state.players):
        return COLLIDED  # leaving through a starting entry port
    return DEAD


def _simulate(
    state: TsuroState, move: Placement, seat: int
) -> tuple[list[list[tuple[int, int] | None]], dict[int, tuple[tuple[int, int, int], str]]]:
    """The board after ``move`` and where every avatar in play ends up, with its state."""
    board = [row.copy() for row in state.board]
    board[move.y][move.x] = (move.tile, move.rotation)
    results: dict[int, tuple[tuple[int, int, int], str]] = {}
    for index, player in enumerate(state.players):
        if player.state != ALIVE:
            continue
        if index == seat and move.initial:
            assert move.port is not None
            entry = exit_port(move.tile, move.rotation, move.port)
            where, ending = _follow(board, (move.x, move.y, entry))
        elif player.at is not None:
            where, ending = _follow(board, player.at)
        else:
            continue
        results[index] = (where, _outcome_of_start(state, seat, move, where, ending))
    return board, results


def _outcome_of_start(
    state: TsuroState, seat: int, move: Placement, where: tuple[int, int, int], ending: str | None
) -> str:
    """Like _outcome_of, counting the mover's own new start when it places its first tile."""
    if ending == "off" and move.initial and move.port is not None and where == (move.x, move.y, move.port):
        return COLLIDED
    return _outcome_of(state, where, ending)


def _dies(state: TsuroState, move: Placement, seat: int) -> bool:
    return _simulate(state, move, seat)[1][seat][1] != ALIVE


def check(state: TsuroState, seat: int, move: Placement) -> str | None:
    """None if ``move`` is legal for ``seat``, else the EJECTED reason (docs/tsuro-protocol.md,
    "Ejection": the rules' reasons, in their order)."""
    player = state.players[seat]
    if move.tile not in state.hand:
        return "Played a tile not found in hand"
    if move.initial != (player.at is None):
        return "initial placements are first round only"
    if state.board[move.y][move.x] is not None:
        return "space occupied"
    if move.initial:
        if move.x not in (0, SIZE - 1) and move.y not in (0, SIZE - 1):
            return "not_on_border"
        for dx, dy in SIDE_STEP:
            nx, ny = move.x + dx, move.y + dy
            if _on_board(nx, ny) and state.board[ny][nx] is not None:
                return "has neighbor"
        assert move.port is not None
        if _on_board(*_beyond(move.x, move.y, move.port)):
            return "port not on outside edge"
    else:
        assert player.at is not None
        if (move.x, move.y) != _beyond(player.at[0], player.at[1], player.at[2]):
            return "not adjacent to occupied port"
    # No suicide while some tile of the hand, in some rotation, on this square would survive.
    if _dies(state, move, seat):
        alternatives = (
            move._replace(tile=tile, rotation=rotation)
            for tile in state.hand
            for rotation in (0, 90, 180, 270)
        )
        if any(not _dies(state, other, seat) for other in alternatives):
            return "player does not survive"
    return None


def _squares(state: TsuroState, seat: int) -> list[tuple[int, int, int | None]]:
    """Where ``seat`` may place: (x, y, port) for a first placement, else the square ahead."""
    player = state.players[seat]
    if player.at is not None:
        x, y = _beyond(*player.at)
        return [(x, y, None)]
    found: list[tuple[int, int, int | None]] = []
    for y in range(SIZE):
        for x in range(SIZE):
            if x not in (0, SIZE - 1) and y not in (0, SIZE - 1):
                continue
            for port in range(8):
                if not _on_board(*_beyond(x, y, port)):
                    found.append((x, y, port))
    return found


def legal_moves(state: TsuroState, seat: int) -> list[Placement]:
    if state.finished or seat != state.current:
        return []
    initial = state.players[seat].at is None
    candidates = [
        Placement(initial, tile, rotation, x, y, port)
        for x, y, port in _squares(state, seat)
        for tile in dict.fromkeys(state.hand)
        for rotation in (0, 90, 180, 270)
    ]
    return [move for move in candidates if check(state, seat, move) is None]


def apply_placement(state: TsuroState, move: Placement, rng: Random | None = None) -> None:
    """Play a legal move for the seat to move, in place; then the next seat, or the end."""
    seat = state.current
    assert seat is not None
    board, results = _simulate(state, move, seat)
    state.board = board
    state.placements += 1
    mover = state.players[seat]
    if move.initial:
        assert move.port is not None
        mover.start = (move.x, move.y, move.port)
    for index, (where, outcome) in results.items():
        player = state.players[index]
        player.at = where
        if outcome != ALIVE:
            player.state, player.out = outcome, state.placements
    state.seats_played.add(seat)
    _next(state, seat, rng)


def _next(state: TsuroState, after: int, rng: Random | None) -> None:
    """The next living seat after ``after``; a new round starts when the order wraps around."""
    alive = [i for i, p in enumerate(state.players) if p.state == ALIVE]
    full = all(cell is not None for row in state.board for cell in row)
    if len(alive) <= 1 or full:
        state.current, state.finished = None, True
        return
    count = len(state.players)
    for step in range(1, count + 1):
        if after + step == count:
            state.round += 1
        seat = (after + step) % count
        if state.players[seat].state == ALIVE:
            state.current = seat
            break
    _deal(state, rng)


def eject(state: TsuroState, seat: int, rng: Random | None = None) -> None:
    """A player removed for breaking the protocol: it stays listed as EJECTED."""
    player = state.players[seat]
    if player.state in (EJECTED,):
        return
    was_alive = player.state == ALIVE
    player.state, player.out = EJECTED, None
    if state.current == seat and not state.finished and was_alive:
        _next(state, seat, rng)
    elif not state.finished and len([p for p in state.players if p.state == ALIVE]) <= 1:
        state.current, state.finished = None, True


def ranking(state: TsuroState) -> list[list[int]]:
    """Places, best first: survivors (or the last eliminated together), then earlier
    eliminations; ejected players last, together."""
    places: dict[int, list[int]] = {}
    for index, player in enumerate(state.players):
        if player.state == EJECTED:
            continue
        key = 10**9 if player.state == ALIVE else (player.out or 0)
        places.setdefault(key, []).append(index)
    ordered = [places[key] for key in sorted(places, reverse=True)]
    ejected = [i for i, p in enumerate(state.players) if p.state == EJECTED]
    return ordered + ([ejected] if ejected else [])
