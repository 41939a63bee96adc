"""The ``easy`` robots: a greedy robot that blunders on purpose, now and then."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

from parlour.games.base import Robot, Seat

__all__ = ["Blunderer"]


class Blunderer:
    """Plays a uniformly random legal move with probability ``rate``, else what ``inner`` plays."""

    name = "easy"

    def __init__(self, inner: Robot[Any, Any], rate: float, name: str = "easy") -> None:
        self.name = name
        self.inner = inner
        self.rate = rate
        #: As slow as the robot it wraps, when it plays that robot's move.
        self.slow: bool = getattr(inner, "slow", False)

    def choose(self, state: Any, seat: Seat, moves: Sequence[Any], rng: Random) -> Any:
        if len(moves) > 1 and rng.random() < self.rate:
            return moves[rng.randrange(len(moves))]
        return self.inner.choose(state, seat, moves, rng)
