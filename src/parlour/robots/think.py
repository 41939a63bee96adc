"""A robot's decision as a job another process can run: everything it needs is passed in (the
game, the robot's registry name, a copy of the position, the legal moves and a seed), so that the
job pickles and nothing it reads is shared with the server."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

from parlour.robots.registry import robot

__all__ = ["decide"]


def decide(game: str, name: str, state: Any, seat: int, moves: Sequence[Any], seed: int) -> int:
    """The index in ``moves`` of the move robot ``name`` of ``game`` chooses."""
    chosen = robot(game, name).choose(state, seat, moves, Random(seed))
    return list(moves).index(chosen)
