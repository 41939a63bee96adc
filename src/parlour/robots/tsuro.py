"""Tsuro robots: ``random`` (any legal placement), ``greedy`` (stay on the board, one step ahead)
and ``lookahead`` (survive, and steer others off)."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from parlour.games.base import Robot
from parlour.games.tsuro.rules import ALIVE, SIZE, Placement, TsuroState, _beyond, _follow, _simulate
from parlour.games.tsuro.tiles import MATCH, TILES, exit_port
from parlour.robots.blunder import Blunderer

__all__ = ["ROBOTS", "GreedyTsuroRobot", "LookaheadRobot", "RandomTsuroRobot"]


class RandomTsuroRobot:
    name = "random"

    def choose(self, state: TsuroState, seat: int, moves: Sequence[Placement], rng: Random) -> Placement:
        return moves[rng.randrange(len(moves))]


class GreedyTsuroRobot:
    """The tile that keeps its own avatar on the board, one step ahead: a placement after which
    it is still in play, facing an empty square on the board (so that some tile can be placed
    next turn). Others' fates are ignored; ties are broken at random."""

    name = "greedy"

    def choose(self, state: TsuroState, seat: int, moves: Sequence[Placement], rng: Random) -> Placement:
        best, best_score = moves[0], -1.0
        for move in moves:
            board, results = _simulate(state, move, seat)
            where, outcome = results[seat]
            score = 0.0
            if outcome == ALIVE:
                score = 2.0
                x, y = _beyond(*where)
                if 0 <= x < SIZE and 0 <= y < SIZE and board[y][x] is None:
                    score = 4.0
            score += rng.random()
            if score > best_score:
                best, best_score = move, score
        return best


class LookaheadRobot:
    """Scores each placement by what follows at once: staying in play first, opponents knocked
    out next, then its freedom: how many tiles and turns would keep it alive on its next square."""

    name = "lookahead"

    def __init__(self, name: str = "lookahead", plans: bool = True) -> None:
        self.name = name
        #: Decides away from the event loop where the service allows it (parlour.robots.think):
        #: measured up to 27 ms a move (``careful``, without plans: 4 ms).
        self.slow = True
        #: Whether to weigh the hand the cyclic deal will give next turn, and the room around.
        self.plans = plans

    def choose(self, state: TsuroState, seat: int, moves: Sequence[Placement], rng: Random) -> Placement:
        best, best_score = moves[0], float("-inf")
        upcoming = self._next_hand(state, seat) if self.plans else []
        for move in moves:
            board, results = _simulate(state, move, seat)
            where, outcome = results[seat]
            score = 100.0 * sum(1 for index, (_, o) in results.items() if index != seat and o != ALIVE)
            if outcome == ALIVE:
                score += 10_000 + (self._freedom(board, where) if not move.initial else self._room(where))
                if upcoming and not move.initial:
                    score += 40 * self._freedom(board, where, upcoming)
                    score += self.depth * self._best_next(board, where, upcoming)
                if self.plans:
                    score += self.space * self._space(board, where)
                # A square another avatar also faces may be filled by that player first.
                ahead = _beyond(*where)
                score -= 60 * sum(
                    1
                    for index, (theirs, o) in results.items()
                    if index != seat and o == ALIVE and _beyond(*theirs) == ahead
                )
            score += rng.random() * 0.5  # break ties without a fixed bias
            if score > best_score:
                best, best_score = move, score
        return best

    space = 8.0
    depth = 5.0

    def _best_next(
        self, board: list[list[tuple[int, int] | None]], where: tuple[int, int, int], hand: Sequence[int]
    ) -> float:
        """With the hand the robot will hold next turn, the most freedom one of its placements
        would leave it (0 when every placement kills it)."""
        x, y = _beyond(*where)
        if not (0 <= x < SIZE and 0 <= y < SIZE) or board[y][x] is not None:
            return 0.0
        entry = MATCH[where[2]]
        best = 0.0
        for index in hand:
            for rotation in (0, 90, 180, 270):
                board[y][x] = (index, rotation)
                after, ending = _follow(board, (x, y, exit_port(index, rotation, entry)))
                if ending is None:
                    best = max(best, self._freedom(board, after))
                board[y][x] = None
        return best

    @staticmethod
    def _space(board: list[list[tuple[int, int] | None]], where: tuple[int, int, int]) -> float:
        """Empty squares within two steps of the square ahead: room to manoeuvre later."""
        x, y = _beyond(*where)
        return float(
            sum(
                1
                for dy in range(-2, 3)
                for dx in range(-2, 3)
                if abs(dx) + abs(dy) <= 2
                and 0 <= x + dx < SIZE
                and 0 <= y + dy < SIZE
                and board[y + dy][x + dx] is None
            )
        )

    @staticmethod
    def _room(where: tuple[int, int, int]) -> float:
        x, y = _beyond(*where)
        return 5.0 * min(x, y, SIZE - 1 - x, SIZE - 1 - y)

    @staticmethod
    def _next_hand(state: TsuroState, seat: int) -> list[int]:
        """The tiles the cyclic deal (known to all) gives this seat next turn; none when dealt at random."""
        if state.random_deal:
            return []
        others = sum(1 for i, p in enumerate(state.players) if i != seat and p.state == ALIVE)
        start = state.dealt + 2 * others
        return [(start + i) % len(TILES) for i in range(2)]

    @staticmethod
    def _freedom(
        board: list[list[tuple[int, int] | None]],
        where: tuple[int, int, int],
        tiles: Sequence[int] | None = None,
    ) -> float:
        """Of the tiles (every tile by default) in every rotation, how many would keep the avatar
        on the board next turn."""
        x, y = _beyond(*where)
        if not (0 <= x < SIZE and 0 <= y < SIZE) or board[y][x] is not None:
            return 0.0
        safe = 0
        entry = MATCH[where[2]]
        for index in tiles if tiles is not None else range(len(TILES)):
            for rotation in (0, 90, 180, 270):
                board[y][x] = (index, rotation)
                _, ending = _follow(board, (x, y, exit_port(index, rotation, entry)))
                safe += ending is None
        board[y][x] = None
        return float(safe)


ROBOTS: dict[str, Robot[TsuroState, Placement]] = {
    "random": RandomTsuroRobot(),
    "greedy": GreedyTsuroRobot(),
    "easy": Blunderer(GreedyTsuroRobot(), 0.3),
    "lookahead": LookaheadRobot(),
    # Staying in play, knocking others off and the freedom of its next square only.
    "careful": LookaheadRobot("careful", plans=False),
}
# The normal level: careful, with a random placement one time in five.
ROBOTS["normal"] = Blunderer(ROBOTS["careful"], 0.2, "normal")
