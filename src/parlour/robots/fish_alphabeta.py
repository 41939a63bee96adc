"""The strongest Fish robot, ``alphabeta``: iterative deepening alpha-beta (paranoid: every other
seat plays against the robot), played on a small mutable copy of the position with moves made and
unmade in place, so each node costs a few list writes instead of a copy of the whole state.

Leaves are scored by the score lead plus a territory estimate: each tile goes to the seat whose
penguins reach it in fewer slides (ties to nobody), its fish counted at ``territory``. Fish is an
Amazons-like game of walling off regions, and the nearer seat usually ends up eating the tile.

Search stops at ``budget`` nodes (deterministic, unlike a clock): the last completed depth's
best move is played, with the best move of each depth searched first in the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from parlour.games.fish.rules import FishMove, FishState, Move, Place

__all__ = ["AlphaBetaFishRobot"]

_INF = float("inf")
#: What a finished game adds to the lead: more than any position's score lead.
_DECIDED = 1000.0


class _OutOfNodes(Exception):
    """The node budget ran out in the middle of a depth: that depth's result is discarded."""


class _Position:
    """The mutable part of a Fish position, for make/unmake search."""

    __slots__ = ("fish", "neighbours", "order", "owner", "pens", "scores", "taken")

    def __init__(self, state: FishState) -> None:
        self.fish = state.fish.copy()
        self.neighbours = state.neighbours
        self.order = list(state.order)
        self.owner = state.owner
        self.scores = state.scores.copy()
        # Seat -> its penguins' tiles (only placed ones: the search starts after placing).
        self.pens: dict[int, list[int]] = {seat: [] for seat in self.order}
        for penguin, tile in enumerate(state.penguins):
            if tile >= 0 and self.owner[penguin] in self.pens:
                self.pens[self.owner[penguin]].append(tile)
        self.taken = {tile for tiles in self.pens.values() for tile in tiles}

    def slides(self, tile: int) -> list[int]:
        found = []
        fish, neighbours, taken = self.fish, self.neighbours, self.taken
        for direction in range(6):
            step = neighbours[tile][direction]
            while step >= 0 and fish[step] > 0 and step not in taken:
                found.append(step)
                step = neighbours[step][direction]
        return found

    def can_move(self, seat: int) -> bool:
        fish, neighbours, taken = self.fish, self.neighbours, self.taken
        for tile in self.pens[seat]:
            for step in neighbours[tile]:
                if step >= 0 and fish[step] > 0 and step not in taken:
                    return True
        return False

    def moves(self, seat: int) -> list[tuple[int, int, int]]:
        """(penguin index within the seat, from, to), richest departures and arrivals first."""
        fish = self.fish
        found = [(index, tile, to) for index, tile in enumerate(self.pens[seat]) for to in self.slides(tile)]
        found.sort(key=lambda m: -(fish[m[1]] * 8 + fish[m[2]]))
        return found

    def next_seat(self, after: int) -> int | None:
        order = self.order
        start = order.index(after) + 1
        for offset in range(len(order)):
            seat = order[(start + offset) % len(order)]
            if self.can_move(seat):
                return seat
        return None

    def territory(self) -> dict[int, int]:
        """Fish on the tiles each seat reaches in strictly fewer slides than every other seat."""
        fish = self.fish
        best: dict[int, tuple[int, int]] = {}  # tile -> (distance, seat or -1 when shared)
        for seat, tiles in self.pens.items():
            distance = {tile: 0 for tile in tiles}
            frontier = list(tiles)
            depth = 0
            while frontier and depth < 3:
                depth += 1
                following = []
                for tile in frontier:
                    for to in self.slides(tile):
                        if to not in distance:
                            distance[to] = depth
                            following.append(to)
                frontier = following
            for tile, steps in distance.items():
                if steps == 0:
                    continue
                known = best.get(tile)
                if known is None or steps < known[0]:
                    best[tile] = (steps, seat)
                elif steps == known[0] and known[1] != seat:
                    best[tile] = (steps, -1)
        result = dict.fromkeys(self.pens, 0)
        for tile, (_, seat) in best.items():
            if seat >= 0:
                result[seat] += fish[tile]
        return result


class AlphaBetaFishRobot:
    """Iterative-deepening paranoid alpha-beta within a node budget (see the module docstring)."""

    name = "alphabeta"

    def __init__(
        self, budget: int = 1500, territory: float = 0.5, max_depth: int = 12, name: str = "alphabeta"
    ) -> None:
        self.name = name
        self.budget = budget
        self.territory = territory
        self.max_depth = max_depth
        self._nodes = 0
        #: Decides away from the event loop where the service allows it (parlour.robots.think):
        #: measured up to 90 ms a move with 1,500 nodes, 8 ms with 150 (``shallow``).
        self.slow = True

    def choose(self, state: FishState, seat: int, moves: Sequence[FishMove], rng: Random) -> FishMove:
        if len(moves) == 1:
            return moves[0]
        if isinstance(moves[0], Place):
            return self._place(state, seat, moves)
        position = _Position(state)
        root = position.moves(seat)
        best = root[0]
        self._nodes = 0
        for depth in range(1, self.max_depth + 1):
            try:
                value, found = self._root(position, seat, root, depth)
            except _OutOfNodes:
                break
            best = found
            if abs(value) >= _DECIDED:
                break  # the game's end is within reach: deeper search changes nothing
            root.remove(found)
            root.insert(0, found)
        _, start, to = best
        penguin = next(p for p, tile in enumerate(state.penguins) if tile == start)
        return Move(penguin, to)

    def _place(self, state: FishState, seat: int, moves: Sequence[FishMove]) -> FishMove:
        """Placing: the tile with the most fish within one slide, itself counted double."""
        fish, neighbours = state.fish, state.neighbours
        occupied = state.occupied()

        def worth(move: FishMove) -> float:
            assert isinstance(move, Place)
            total = 2.0 * fish[move.tile]
            for direction in range(6):
                step = neighbours[move.tile][direction]
                while step >= 0 and fish[step] > 0 and step not in occupied:
                    total += fish[step] / 3
                    step = neighbours[step][direction]
            return total

        return max(moves, key=worth)

    def _root(
        self, position: _Position, seat: int, moves: list[tuple[int, int, int]], depth: int
    ) -> tuple[float, tuple[int, int, int]]:
        alpha = -_INF
        best = moves[0]
        for move in moves:
            value = self._child(position, seat, seat, move, depth - 1, alpha, _INF)
            if value > alpha:
                alpha, best = value, move
        return alpha, best

    def _child(
        self,
        position: _Position,
        me: int,
        mover: int,
        move: tuple[int, int, int],
        depth: int,
        alpha: float,
        beta: float,
    ) -> float:
        index, start, to = move
        fish = position.fish
        gained = fish[start]
        pens = position.pens[mover]
        fish[start] = 0
        pens[index] = to
        position.taken.discard(start)
        position.taken.add(to)
        position.scores[mover] += gained
        try:
            return self._search(position, me, mover, depth, alpha, beta)
        finally:
            position.scores[mover] -= gained
            position.taken.discard(to)
            position.taken.add(start)
            pens[index] = start
            fish[start] = gained

    def _search(
        self, position: _Position, me: int, last: int, depth: int, alpha: float, beta: float
    ) -> float:
        self._nodes += 1
        if self._nodes > self.budget:
            raise _OutOfNodes
        mover = position.next_seat(last)
        if mover is None:
            return self._final(position, me)
        if depth <= 0:
            return self._evaluate(position, me)
        if mover == me:
            value = -_INF
            for move in position.moves(mover):
                value = max(value, self._child(position, me, mover, move, depth - 1, alpha, beta))
                alpha = max(alpha, value)
                if alpha >= beta:
                    break
            return value
        value = _INF
        for move in position.moves(mover):
            value = min(value, self._child(position, me, mover, move, depth - 1, alpha, beta))
            beta = min(beta, value)
            if alpha >= beta:
                break
        return value

    @staticmethod
    def _final(position: _Position, me: int) -> float:
        """The game is over: a win is worth more than any lead, a loss less than any deficit."""
        scores = position.scores
        lead = scores[me] - max(scores[s] for s in position.order if s != me)
        return lead + (_DECIDED if lead > 0 else -_DECIDED if lead < 0 else 0.0)

    def _evaluate(self, position: _Position, me: int) -> float:
        scores = position.scores
        land = position.territory()
        mine = scores[me] + self.territory * land[me]
        others = max(scores[s] + self.territory * land[s] for s in position.order if s != me)
        return mine - others
