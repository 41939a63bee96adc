"""The ``rollout`` robot: Monte Carlo over determinised draws, a whole round deep.

For each distinct legal move the robot plays ``samples`` short futures: the cards still to come
are dealt at random from the cards it has not seen (the deck less the discard pile and its own
cards: the draw pile's order and the opponents' hands are never read), every opponent answers
as RewardV1 would (the reference's programmatic play, and a fair model of a greedy human), until
the robot is to move again. Every move is judged on the same futures (common random numbers), so
the comparison between moves is far less noisy than each estimate. Where the round ends, the
position is scored as the ``search`` robot scores it (score against leader and field, less the
bumps still threatened).

The round is what one-reply expectimax (``search``) cannot see: the second and third opponents'
bumps and Apologies cards, and what each opponent's reply does to the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random
from typing import Any

from parlour.games.apologies.engine import DECK, GameState, apply_move, legal_moves
from parlour.games.apologies.model import HOME, Card, Mode, Move
from parlour.games.base import Seat
from parlour.robots.apologies.search import SearchRobot, _after, _positions
from parlour.robots.apologies.simple import ALL_HOME_BONUS, GreedyRobot, player_score

__all__ = ["RolloutRobot"]

#: A finished game outweighs any score difference.
_WON = 10_000.0
#: A player's RewardV1 score with every pawn home: only reached by winning.
_HOME_SCORE = 260 + 40 + ALL_HOME_BONUS


class _Last(Random):
    """A stand-in random source for the engine's draw: always the last card of the pile, so
    that a rollout's pile, dealt in advance, is drawn in the order chosen."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        return start - 1 if stop is None else stop - 1


_LAST = _Last(0)


class RolloutRobot:
    """``samples`` futures per move, a round deep; opponents modelled as RewardV1 players."""

    name = "rollout"
    #: Decides away from the event loop where the service allows it (parlour.core.turns).
    slow = True

    def __init__(
        self,
        samples: int = 10,
        caution: float = 0.5,
        adult_caution: float = 0.25,
        max_steps: int = 8,
        finish: bool = True,
        width: int = 5,
    ) -> None:
        self.samples = samples
        self.finish = finish
        self.width = width
        self.max_steps = max_steps
        self._judge = SearchRobot(caution=caution, adult_caution=adult_caution)
        self._greedy = GreedyRobot()

    def choose(self, state: GameState, seat: Seat, moves: Sequence[Move], rng: Random) -> Move:
        distinct: dict[tuple[Any, ...], Move] = {}
        for move in moves:
            distinct.setdefault((move.card, move.actions, move.side_effects), move)
        if len(distinct) == 1:
            return moves[0]
        me = state.colors[seat]
        adult = state.mode is Mode.ADULT
        judge = self._judge
        judge._cards = 5 if adult else 1
        judge._weight = judge.adult_caution if adult else judge.caution
        candidates = list(distinct.values())
        for move in candidates:
            if move.actions and all(p == HOME for p in _row_after(state, me, move)):
                return move  # this move wins
        if len(candidates) > self.width:
            # Only the most promising moves by the one-move score are played out: a 7 split or
            # a hand of five offers dozens of moves, and the time per decision is bounded.
            scores = [player_score(c, state.pawns[c]) for c in range(len(state.pawns))]
            colors = state.colors
            candidates.sort(
                key=lambda m: -judge.value(me, colors, _after(state, m, scores), _positions(state.pawns, m))
            )
            del candidates[self.width :]
        futures = [self._future(state, me, rng) for _ in range(self.samples)]
        best, best_value = candidates[0], float("-inf")
        for move in candidates:
            value = sum(self._play(state, me, move, hands, pile) for hands, pile in futures)
            if value > best_value:
                best, best_value = move, value
        return best

    def _future(self, state: GameState, me: int, rng: Random) -> tuple[list[list[Card]], list[Card]]:
        """One deal of what the robot cannot see: the opponents' hands (ADULT) and the cards to be
        drawn, as a pile drawn from its end."""
        unseen = Counter(DECK)
        unseen.subtract(state.discard)
        if state.mode is Mode.ADULT:
            unseen.subtract(state.hands[me])
        elif state.drawn_card is not None:
            unseen[state.drawn_card] -= 1
        pool = [card for card, count in unseen.items() for _ in range(max(count, 0))]
        rng.shuffle(pool)
        hands: list[list[Card]] = [list(hand) for hand in state.hands]
        if state.mode is Mode.ADULT:
            for color in state.colors:
                if color != me:
                    hands[color] = [pool.pop() if pool else rng.choice(DECK) for _ in range(5)]
        # Cards after the pile runs out come from the reshuffled discards: any card of the deck.
        pile = [rng.choice(DECK) for _ in range(self.max_steps + 2)] + pool
        return hands, pile

    def _play(
        self, state: GameState, me: int, move: Move, hands: list[list[Card]], pile: list[Card]
    ) -> float:
        board = GameState(
            state.mode,
            state.colors,
            [list(p) for p in state.pawns],
            [list(h) for h in hands],
            list(pile),
            [],
            state.drawn_card,
            state.to_move,
            list(state.turns),
            [],
        )
        apply_move(board, move, _LAST)
        greedy = self._greedy
        for _ in range(self.max_steps):
            mover = board.to_move
            if mover is None or mover == me:
                break
            answers = legal_moves(board, mover)
            apply_move(board, greedy.choose(board, board.colors.index(mover), answers, _LAST), _LAST)
        if board.winner is not None:
            return _WON if board.winner == me else -_WON
        scores = [player_score(c, board.pawns[c]) for c in range(len(board.pawns))]
        judge = self._judge
        if self.finish and board.to_move == me:
            # The robot's own next move, with the card the future deals it, chosen by the score.
            best = float("-inf")
            for answer in legal_moves(board, me):
                if not answer.actions:
                    return judge.value(me, board.colors, scores, board.pawns)
                after = _after(board, answer, scores)
                if after[me] >= _HOME_SCORE:
                    return _WON
                best = max(best, judge.value(me, board.colors, after, _positions(board.pawns, answer)))
            return best
        return judge.value(me, board.colors, scores, board.pawns)


def _row_after(state: GameState, color: int, move: Move) -> list[int]:
    row = list(state.pawns[color])
    for step in (*move.actions, *move.side_effects):
        if step.color == color:
            row[step.pawn] = step.end
    return row
