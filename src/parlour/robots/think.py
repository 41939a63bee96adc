"""A robot's decision as a job another process can run: everything it needs is passed in (the
game, the robot's registry name, a copy of the position, the legal moves and a seed), so that the
job pickles and nothing it reads is shared with the server."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from random import Random
from typing import Any

from parlour.games.base import StateCodec
from parlour.games.registry import plugin
from parlour.robots.registry import robot

__all__ = ["decide", "decide_encoded", "decide_pickled", "frozen", "thawed"]


def decide(game: str, name: str, state: Any, seat: int, moves: Sequence[Any], seed: int) -> int:
    """The index in ``moves`` of the move robot ``name`` of ``game`` chooses."""
    chosen = robot(game, name).choose(state, seat, moves, Random(seed))
    return list(moves).index(chosen)


def decide_encoded(game: str, name: str, state: bytes, seat: int, seed: int) -> int:
    """As ``decide``, from the position as its plugin encodes it (a game whose state is built of
    compiled classes, which do not pickle): the index in the legal moves the position gives."""
    rules = plugin(game)
    assert isinstance(rules, StateCodec)
    position = rules.decode_state(state)
    return decide(game, name, position, seat, rules.legal_moves(position, seat), seed)


def frozen(state: Any) -> bytes:
    """A copy of a plain (uncompiled) position, taken now: the server goes on changing its own
    in place (Fish and Tsuro apply moves to the state they are given) while the job waits."""
    return pickle.dumps(state, pickle.HIGHEST_PROTOCOL)


def thawed(state: bytes) -> Any:
    """The position ``frozen`` took (in the robots' process)."""
    return pickle.loads(state)


def decide_pickled(game: str, name: str, state: bytes, seat: int, seed: int) -> int:
    """As ``decide``, from a position ``frozen`` by the server: the index in the legal moves
    its plugin gives (the order the server's own copy gives too)."""
    position = thawed(state)
    return decide(game, name, position, seat, plugin(game).legal_moves(position, seat), seed)
