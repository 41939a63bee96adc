"""Apologies robots: ``random`` and ``greedy`` (the reference's RewardV1; docs/robots.md,
"Apologies").

Robots receive the whole game state for speed but only read what their seat may see: the
board, the turn counts and their own hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from parlour.games.apologies.board import DISTANCE
from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import HOME, SAFE, Move
from parlour.games.base import Seat

__all__ = ["GreedyRobot", "RandomRobot", "player_score", "reward"]

#: SCORE[color][position]: one pawn's share of RewardV1's player score, less the constant 260:
#: minus its distance to home, plus 10 in the safe zone or home.
SCORE = tuple(
    tuple(-distance + (10 if SAFE <= position <= HOME else 0) for position, distance in enumerate(row))
    for row in DISTANCE
)
ALL_HOME_BONUS = 100


def player_score(color: int, positions: Sequence[int]) -> int:
    """RewardV1's score of one player."""
    table = SCORE[color]
    a, b, c, d = positions
    total = 260 + table[a] + table[b] + table[c] + table[d]
    return total + ALL_HOME_BONUS if a == b == c == d == HOME else total


def reward(state: GameState, color: int, move: Move, scores: Sequence[int], total: int | None = None) -> int:
    """RewardV1 of ``move`` for ``color``, given every colour's current score (and their sum
    over the colours in play, when the caller has it).

    Only the pawns the move touches are re-scored: a pawn's share of the score depends on its
    own position alone, and only the mover can complete (home pawns are never bumped). A pawn
    moved twice by one move (a swapped pawn then bumped) has each step start where the last
    ended, so the changes of its steps add up.
    """
    mine = scores[color]
    if total is None:
        total = sum(scores[c] for c in state.colors)
    others = total - mine
    homed = 0
    for steps in (move.actions, move.side_effects):
        for step in steps:
            table = SCORE[step.color]
            end = step.end
            if step.color == color:
                mine += table[end] - table[step.start]
                homed += end == HOME
            else:
                others += table[end] - table[step.start]
    if homed and state.pawns[color].count(HOME) + homed == 4:
        mine += ALL_HOME_BONUS
    return max(0, (len(state.colors) - 1) * mine - others)


class RandomRobot:
    """Any legal move, uniformly."""

    name = "random"

    def choose(self, state: GameState, seat: Seat, moves: Sequence[Move], rng: Random) -> Move:
        return moves[rng.randrange(len(moves))]


class GreedyRobot:
    """The best move one step ahead by RewardV1; ties go to the first move in list order."""

    name = "greedy"

    def choose(self, state: GameState, seat: Seat, moves: Sequence[Move], rng: Random) -> Move:
        if len(moves) == 1:
            return moves[0]
        color = state.colors[seat]
        scores = [player_score(c, state.pawns[c]) for c in range(len(state.pawns))]
        total = sum(scores[c] for c in state.colors)
        best = moves[0]
        best_reward = -1
        for move in moves:
            value = reward(state, color, move, scores, total)
            if value > best_reward:
                best, best_reward = move, value
        return best
