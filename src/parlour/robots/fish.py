"""Fish robots: ``random``, ``greedy`` (the most fish now) and ``search`` (maximin over a few plies,
bounded by a node budget)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from random import Random

from parlour.games.base import Robot
from parlour.games.fish.rules import FishMove, FishState, Move, _actions, _reachable, apply_move
from parlour.robots.blunder import Blunderer
from parlour.robots.fish_alphabeta import AlphaBetaFishRobot

__all__ = ["ROBOTS", "FishSearchRobot", "GreedyFishRobot", "RandomFishRobot"]


class RandomFishRobot:
    name = "random"

    def choose(self, state: FishState, seat: int, moves: Sequence[FishMove], rng: Random) -> FishMove:
        return moves[rng.randrange(len(moves))]


class GreedyFishRobot:
    """The most fish now: a slide scores the fish of the tile it leaves, so the penguin on the
    richest tile moves, to the richest tile it reaches (the fish it will score next); a placement
    takes the richest free tile. Ties go to the first in list order."""

    name = "greedy"

    def choose(self, state: FishState, seat: int, moves: Sequence[FishMove], rng: Random) -> FishMove:
        fish, penguins = state.fish, state.penguins

        def gain(move: FishMove) -> tuple[int, int]:
            if isinstance(move, Move):
                return fish[penguins[move.penguin]], fish[move.tile]
            return fish[move.tile], 0

        return max(moves, key=gain)


def _copy(state: FishState) -> FishState:
    """An independent copy for exploring (the board geometry and penguin owners are shared)."""
    return replace(
        state,
        fish=state.fish.copy(),
        order=state.order.copy(),
        penguins=state.penguins.copy(),
        scores=state.scores.copy(),
        removed=set(state.removed),
    )


class FishSearchRobot:
    """Looks ``depth`` plies ahead (the seat to move maximises, everyone else minimises the robot's
    lead), scoring positions by score lead plus a share of the tiles its penguins can reach."""

    name = "search"

    def __init__(self, depth: int = 3, budget: int = 4000, mobility: float = 0.3) -> None:
        self.depth = depth
        self.budget = budget
        self.mobility = mobility
        #: Decides away from the event loop where the service allows it (parlour.robots.think):
        #: measured up to 120 ms a move with the default budget, 20 ms with 600 nodes.
        self.slow = True

    def evaluate(self, state: FishState, seat: int) -> float:
        others = [state.scores[s] for s in state.order if s != seat] or [0]
        occupied = state.occupied()
        reach = {
            s: sum(
                len(_reachable(state, state.penguins[p], occupied))
                for p in state.penguins_of(s)
                if state.penguins[p] >= 0
            )
            for s in state.order
        }
        rival_reach = max((reach[s] for s in state.order if s != seat), default=0)
        return state.scores[seat] - max(others) + self.mobility * (reach.get(seat, 0) - rival_reach)

    def choose(self, state: FishState, seat: int, moves: Sequence[FishMove], rng: Random) -> FishMove:
        if len(moves) == 1:
            return moves[0]
        self._nodes = 0
        best, best_value = moves[0], float("-inf")
        # Placing: prefer tiles rich in fish and with room around them; no deep search needed.
        ordered = sorted(moves, key=lambda m: -self._quick(state, m))
        for move in ordered:
            child = _copy(state)
            apply_move(child, move)
            value = self._search(child, seat, self.depth - 1, float("-inf"), float("inf"))
            if value > best_value:
                best, best_value = move, value
        return best

    def _quick(self, state: FishState, move: FishMove) -> float:
        if isinstance(move, Move):
            return state.fish[state.penguins[move.penguin]]
        return state.fish[move.tile] + 0.1 * len(_reachable(state, move.tile, state.occupied()))

    def _search(self, state: FishState, seat: int, depth: int, alpha: float, beta: float) -> float:
        self._nodes += 1
        if depth <= 0 or state.finished or state.current is None or self._nodes > self.budget:
            return self.evaluate(state, seat)
        mover = state.current
        moves = _actions(state, mover)
        if not moves:
            return self.evaluate(state, seat)
        maximising = mover == seat
        value = float("-inf") if maximising else float("inf")
        for move in sorted(moves, key=lambda m: -self._quick(state, m))[:12]:
            child = _copy(state)
            apply_move(child, move)
            score = self._search(child, seat, depth - 1, alpha, beta)
            if maximising:
                value = max(value, score)
                alpha = max(alpha, value)
            else:
                value = min(value, score)
                beta = min(beta, value)
            if beta <= alpha:
                break
        return value


ROBOTS: dict[str, Robot[FishState, FishMove]] = {
    "random": RandomFishRobot(),
    "greedy": GreedyFishRobot(),
    "easy": Blunderer(GreedyFishRobot(), 0.3),
    "search": FishSearchRobot(),
    "alphabeta": AlphaBetaFishRobot(),
    # The same search with a tenth of the nodes: a few milliseconds a move at most.
    "shallow": AlphaBetaFishRobot(budget=150, name="shallow"),
}
