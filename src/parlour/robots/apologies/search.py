"""The ``search`` robot: expectimax over the next player's card, with a greedy model of its reply.

For each legal move, the robot plays it on a copy of the game, then averages over what the next
player may hold: STANDARD, every card it may draw, weighted by the cards still in the draw pile
(public: the deck less the discard pile); ADULT, a few hands sampled from the cards the robot has
not seen (determinisation). The next player is assumed to answer as RewardV1 would (the
reference's programmatic play). Positions are scored without RewardV1's clamp at zero, so the
robot keeps telling good moves from bad ones when it is behind, where greedy play stops caring.

It reads only what its seat may see: the board, turn counts, the discard pile and its own hand.
The draw pile's order and the opponents' hands are never looked at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random

from parlour.games.apologies.board import BACKWARD, FORWARD
from parlour.games.apologies.engine import DECK, GameState, apply_move, legal_moves
from parlour.games.apologies.model import HOME, SQUARES, START, Card, Color, Mode, Move
from parlour.games.base import Seat
from parlour.robots.apologies.simple import ALL_HOME_BONUS, SCORE, player_score, reward

__all__ = ["SearchRobot"]


_CARD_CHANCE = {card: count / len(DECK) for card, count in Counter(DECK).items()}


def _reach(color: int, square: int) -> dict[int, float]:
    """Squares a pawn of ``color`` on ``square`` can land on with one card, and the chance of
    drawing a card that does it (cards counted once even when they reach by several ways)."""
    cards: dict[int, set[Card]] = {}
    for card in Card:
        steps = int(card)
        if card is Card.CARD_APOLOGIES:
            continue
        targets = {FORWARD[color][square][steps]}
        if card is Card.CARD_7:
            targets |= {FORWARD[color][square][n] for n in range(1, 7)}  # a split moves any share
        if card is Card.CARD_4:
            targets = {BACKWARD[color][square][4]}
        if card is Card.CARD_10:
            targets.add(BACKWARD[color][square][1])
        for target in targets:
            if 0 <= target < SQUARES:
                cards.setdefault(target, set()).add(card)
    return {target: sum(_CARD_CHANCE[c] for c in found) for target, found in cards.items()}


#: REACH[color][square] -> {square it can hit: chance of holding a card that hits it}.
REACH = tuple(tuple(_reach(color, square) for square in range(SQUARES)) for color in Color)
APOLOGIES_CHANCE = _CARD_CHANCE[Card.CARD_APOLOGIES]


def danger(pawns: Sequence[Sequence[int]], colors: Sequence[int], me: int, cards: int = 1) -> float:
    """Expected points ``me`` loses to bumps before its next turn: for each own pawn on the board,
    the chance that some opponent holds a card that lands on it (among ``cards`` cards: one drawn
    in STANDARD, a hand of five in ADULT), times what the pawn has gained."""
    loss = 0.0
    table = SCORE[me]
    for square in pawns[me]:
        if square >= SQUARES:
            continue
        safe = 1.0
        for color in colors:
            if color == me:
                continue
            theirs = pawns[color]
            chance = APOLOGIES_CHANCE if START in theirs else 0.0
            for their in theirs:
                if their < SQUARES:
                    chance += REACH[color][their].get(square, 0.0)
            safe *= (1.0 - min(chance, 1.0)) ** cards
        loss += (1.0 - safe) * (table[square] - table[START])
    return loss


def _after(state: GameState, move: Move, scores: list[int]) -> list[int]:
    """Every colour's RewardV1 score once ``move`` is played (only touched pawns re-scored)."""
    pawns = state.pawns
    result = list(scores)
    ends: dict[tuple[int, int], int] = {}
    for step in move.actions:
        ends[(step.color, step.pawn)] = step.end
    for step in move.side_effects:
        ends[(step.color, step.pawn)] = step.end
    for (color, pawn), end in ends.items():
        table = SCORE[color]
        result[color] += table[end] - table[pawns[color][pawn]]
    if move.actions:
        mover = move.actions[0].color
        row = list(pawns[mover])
        for (color, pawn), end in ends.items():
            if color == mover:
                row[pawn] = end
        if all(p == HOME for p in row) and not all(p == HOME for p in pawns[mover]):
            result[mover] += ALL_HOME_BONUS
    return result


def _positions(pawns: Sequence[Sequence[int]], move: Move) -> list[list[int]]:
    """Where every pawn stands once ``move`` is played."""
    result = [list(row) for row in pawns]
    for step in move.actions:
        result[step.color][step.pawn] = step.end
    for step in move.side_effects:
        result[step.color][step.pawn] = step.end
    return result


class SearchRobot:
    """Expectimax one reply deep; ``samples`` hands per move in ADULT; ``caution`` weighs the
    expected loss to bumps by every opponent before the robot's next turn; ``thrift`` (ADULT)
    weighs what the cards kept in hand promise for the next turn."""

    name = "search"

    def __init__(
        self, samples: int = 8, caution: float = 1.0, adult_caution: float = 0.5, thrift: float = 0.5
    ) -> None:
        self.samples = samples
        self.caution = caution
        # In ADULT the reply is modelled with whole hands and the danger term counts five cards
        # per opponent, so less extra caution pays (tuned with ``parlour simulate``).
        self.adult_caution = adult_caution
        self.thrift = thrift
        self._weight = caution
        self._cards = 1  # cards an opponent holds when it next moves (set per decision)

    def value(
        self, me: int, colors: Sequence[int], scores: Sequence[int], pawns: Sequence[Sequence[int]]
    ) -> float:
        """How good a position is for ``me``: its score against both the leader and the field,
        unclamped (RewardV1 stops at zero when behind), less the bumps it can expect."""
        return self.standing(me, colors, scores) - self._weight * danger(pawns, colors, me, self._cards)

    @staticmethod
    def standing(me: int, colors: Sequence[int], scores: Sequence[int]) -> float:
        others = [scores[c] for c in colors if c != me]
        return 2 * scores[me] - max(others) - sum(others) / len(others)

    def choose(self, state: GameState, seat: Seat, moves: Sequence[Move], rng: Random) -> Move:
        if len(moves) == 1:
            return moves[0]
        me = state.colors[seat]
        adult = state.mode is Mode.ADULT
        self._cards = 5 if adult else 1
        self._weight = self.adult_caution if adult else self.caution
        scores = [player_score(c, state.pawns[c]) for c in range(len(state.pawns))]
        best, best_value = moves[0], float("-inf")
        seen: dict[tuple[object, ...], float] = {}
        for move in moves:
            key = (move.card, move.actions, move.side_effects)
            if key in seen:  # ADULT duplicates: the same move with another copy of a card
                continue
            value = seen[key] = self._expect(state, me, move, scores, rng)
            if value > best_value:
                best, best_value = move, value
        return best

    def _expect(self, state: GameState, me: int, move: Move, scores: list[int], rng: Random) -> float:
        after = _after(state, move, scores)
        colors = state.colors
        if move.actions and all(p == HOME for p in _row_after(state, me, move)):
            return float("inf")  # this move wins
        if move.actions and move.card is Card.CARD_2:
            # We move again at once: judge the position as it stands.
            return self.value(me, colors, after, _positions(state.pawns, move))
        board = state.copy()
        apply_move(board, move, Random(0))  # the copy's own draw is never looked at
        reply = board.to_move
        if reply is None or reply == me:
            return self.value(me, colors, after, board.pawns)
        if board.mode is Mode.STANDARD:
            return self._standard_reply(state, board, me, reply, move, after)
        kept = list(state.hands[me])
        kept.remove(move.card)
        potential = self._potential(board, me, kept, after)
        return self._adult_reply(state, board, me, reply, after, rng) + self.thrift * potential

    def _potential(self, board: GameState, me: int, kept: list[Card], scores: list[int]) -> float:
        """ADULT: the best gain the cards we keep would offer on our next turn, were the board to
        stay as it is (keeping a useful card has value; greedy play spends cards blindly)."""
        to_move, hand = board.to_move, board.hands[me]
        board.to_move, board.hands[me] = Color(me), kept
        try:
            moves = legal_moves(board, me)
        finally:
            board.to_move, board.hands[me] = to_move, hand
        base = self.standing(me, board.colors, scores)
        best = 0.0
        for move in moves:
            if move.actions:
                best = max(best, self.standing(me, board.colors, _after(board, move, scores)) - base)
        return best

    def _standard_reply(
        self, state: GameState, board: GameState, me: int, reply: int, move: Move, after: list[int]
    ) -> float:
        # The next card comes from the deck less the discard pile (public), less the card played.
        pile = Counter(DECK)
        pile.subtract(state.discard)
        pile[move.card] -= 1
        if sum(count for count in pile.values() if count > 0) == 0:
            pile = Counter(state.discard)
            pile[move.card] += 1
        total = 0
        expected = 0.0
        for card, count in pile.items():
            if count > 0:
                board.drawn_card = card
                expected += count * self._after_reply(board, me, reply, after)
                total += count
        return expected / total

    def _adult_reply(
        self, state: GameState, board: GameState, me: int, reply: int, after: list[int], rng: Random
    ) -> float:
        # Cards the robot has not seen: the deck less the discard pile and its own hand.
        unseen = Counter(DECK)
        unseen.subtract(state.discard)
        unseen.subtract(state.hands[me])
        pool = [card for card, count in unseen.items() for _ in range(max(count, 0))]
        if len(pool) < 5:
            return self.value(me, state.colors, after, board.pawns)
        expected = 0.0
        for _ in range(self.samples):
            board.hands[reply] = rng.sample(pool, 5)
            expected += self._after_reply(board, me, reply, after)
        return expected / self.samples

    def _after_reply(self, board: GameState, me: int, reply: int, scores: list[int]) -> float:
        """Our value once ``reply`` has answered as RewardV1 would."""
        answers = legal_moves(board, reply)
        best, best_reward = answers[0], -1
        if len(answers) > 1:
            for answer in answers:
                gained = reward(board, reply, answer, scores)
                if gained > best_reward:
                    best, best_reward = answer, gained
        if not best.actions:
            return self.value(me, board.colors, scores, board.pawns)
        return self.value(me, board.colors, _after(board, best, scores), _positions(board.pawns, best))


def _row_after(state: GameState, color: int, move: Move) -> list[int]:
    row = list(state.pawns[color])
    for step in (*move.actions, *move.side_effects):
        if step.color == color:
            row[step.pawn] = step.end
    return row
