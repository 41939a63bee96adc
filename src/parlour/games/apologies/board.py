"""Board geometry of Apologies as precomputed tables.

Every question the move generator asks in its inner loop ("where does this pawn land going
forward 7?", "is square 9 a slide start for BLUE, and where does it end?") is a list lookup
here, computed once at import time.
"""

from __future__ import annotations

from parlour.games.apologies.model import HOME, SAFE, SAFE_SQUARES, SQUARES, START, Color

__all__ = [
    "BACKWARD",
    "CIRCLE",
    "DISTANCE",
    "FORWARD",
    "SLIDE_END",
    "SLIDE_SWEEP",
    "TURN",
    "backward",
    "distance_to_home",
    "forward",
]

#: The square a colour's pawns enter when they leave start (its circle).
CIRCLE = (4, 34, 49, 19)  # indexed by Color value: RED, YELLOW, GREEN, BLUE
#: The last board square before a colour's safe zone.
TURN = tuple((circle - 2) % SQUARES for circle in CIRCLE)


def _slides(color: int) -> tuple[tuple[int, int], ...]:
    """(start, end) of a colour's two slides: the short one ends on its circle."""
    circle = CIRCLE[color]
    return ((circle - 3) % SQUARES, circle), ((circle + 5) % SQUARES, (circle + 9) % SQUARES)


def forward(color: int, position: int, steps: int) -> int:
    """Where a pawn of ``color`` lands going forward ``steps`` from ``position``; -1 if it cannot.

    A pawn on a square at or before its turn square turns into its
    safe zone; past square 59 it wraps to 0 and the same rule applies; home needs the exact count.
    """
    if position >= HOME:
        return -1  # start and home pawns never move by counting
    if position >= SAFE:
        target = position - SAFE + steps
        if target < SAFE_SQUARES:
            return SAFE + target
        return HOME if target == SAFE_SQUARES else -1
    turn = TURN[color]
    if position + steps >= SQUARES and position > turn:
        steps -= SQUARES - position
        position = 0
    if position <= turn < position + steps:
        inside = steps - (turn - position) - 1
        if inside < SAFE_SQUARES:
            return SAFE + inside
        return HOME if inside == SAFE_SQUARES else -1
    return (position + steps) % SQUARES


def backward(color: int, position: int, steps: int) -> int:
    """Where a pawn lands going back ``steps``; -1 from start or home."""
    if position >= HOME:
        return -1
    if position >= SAFE:
        index = position - SAFE
        if index >= steps:
            return SAFE + index - steps
        # Leaving the safe zone backwards: safe 0 back 1 is the turn square.
        return (TURN[color] - (steps - index - 1)) % SQUARES
    return (position - steps) % SQUARES


def distance_to_home(color: int, position: int) -> int:
    """Steps still to go, as the reference counts them."""
    if position == HOME:
        return 0
    if position == START:
        return 65
    if position >= SAFE:
        return SAFE_SQUARES - (position - SAFE)
    turn, circle = TURN[color], CIRCLE[color]
    distance = (SQUARES - position) + turn + 6
    if turn < position < circle or distance < 65:
        return distance
    return distance - SQUARES


_CARD_STEPS = range(13)
#: FORWARD[color][position][steps] and BACKWARD[...] -> destination or -1 (positions 0..66).
FORWARD = tuple(
    tuple(tuple(forward(c, p, n) if n else -1 for n in _CARD_STEPS) for p in range(START + 1)) for c in Color
)
BACKWARD = tuple(
    tuple(tuple(backward(c, p, n) if n else -1 for n in _CARD_STEPS) for p in range(START + 1)) for c in Color
)
#: DISTANCE[color][position] = distance_to_home(color, position).
DISTANCE = tuple(tuple(distance_to_home(c, p) for p in range(START + 1)) for c in Color)


def _slide_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[tuple[int, ...], ...], ...]]:
    ends: list[list[int]] = [[-1] * (START + 1) for _ in Color]
    sweeps: list[list[tuple[int, ...]]] = [[()] * (START + 1) for _ in Color]
    for owner in Color:
        for start, end in _slides(owner):
            swept = tuple((start + k) % SQUARES for k in range(1, (end - start) % SQUARES + 1))
            for mover in Color:
                if mover is not owner:  # a pawn on its own colour's slide start does not slide
                    ends[mover][start] = end
                    sweeps[mover][start] = swept
    return tuple(tuple(row) for row in ends), tuple(tuple(row) for row in sweeps)


#: SLIDE_END[mover color][square] -> end of a slide starting there (another colour's), else -1;
#: SLIDE_SWEEP[...][square] -> the squares after the start up to the end, in order.
SLIDE_END, SLIDE_SWEEP = _slide_tables()
