"""Apologies robots: ``random`` and ``greedy`` (the reference's RewardV1, rules section 14).

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
    """RewardV1's score of one player (rules section 14)."""
    table = SCORE[color]
    total = 260 + sum(table[p] for p in positions)
    return total + ALL_HOME_BONUS if all(p == HOME for p in positions) else total


def reward(state: GameState, color: int, move: Move, scores: Sequence[int]) -> int:
    """RewardV1 of ``move`` for ``color``, given every colour's current score.

    Only the pawns the move touches are re-scored: a pawn's share of the score depends on its
    own position alone, and only the mover can complete (home pawns are never bumped).
    """
    pawns = state.pawns
    ends: dict[tuple[int, int], int] = {}
    for step in move.actions:
        ends[(step.color, step.pawn)] = step.end
    for step in move.side_effects:
        ends[(step.color, step.pawn)] = step.end
    mine = scores[color]
    others = sum(scores[c] for c in state.colors) - mine
    home_before = pawns[color].count(HOME)
    home_after = home_before
    for (c, pawn), end in ends.items():
        table = SCORE[c]
        before = pawns[c][pawn]
        change = table[end] - table[before]
        if c == color:
            mine += change
            home_after += (end == HOME) - (before == HOME)
        else:
            others += change
    if home_after == 4 and home_before < 4:
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
        best = moves[0]
        best_reward = -1
        for move in moves:
            value = reward(state, color, move, scores)
            if value > best_reward:
                best, best_reward = move, value
        return best
