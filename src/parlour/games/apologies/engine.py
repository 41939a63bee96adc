"""The Apologies rules engine: game state, legal moves, applying a move (the reference library's
rules, ``apologies`` 0.4.2, with its quirks fixed: docs/apologies-protocol.md).

Pure and deterministic given the injected ``random.Random``; no I/O, no clock. The state is a
mutable record updated in place by :func:`apply_move` for speed (the plugin interface allows
it); :meth:`GameState.copy` gives an independent copy when a caller needs one.

Parlour's fixes of the reference's quirks live in the move generator:
safe zones are per colour, a pawn is never sent to start by its own move, and a 7 split is
listed once, with both halves judged against the board without either mover.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from random import Random

from parlour.games.apologies.board import (
    BACKWARD,
    CIRCLE,
    DISTANCE,
    FORWARD,
    SLIDE_END,
    SLIDE_SWEEP,
)
from parlour.games.apologies.model import (
    HOME,
    SQUARES,
    START,
    Card,
    Color,
    HistoryEntry,
    Mode,
    Move,
    PawnMove,
    PlayerView,
    position_name,
)

__all__ = [
    "DECK",
    "HAND_SIZE",
    "GameState",
    "apply_move",
    "distance_to_home",
    "legal_moves",
    "new_game",
    "view",
]

#: The 45-card deck: five 1s and four of every other card.
DECK: tuple[Card, ...] = (Card.CARD_1,) * 5 + tuple(
    card for card in Card if card is not Card.CARD_1 for _ in range(4)
)
HAND_SIZE = 5
PAWNS = 4
COLORS = tuple(Color)


def distance_to_home(color: Color | int, position: int) -> int:
    """Steps a pawn still has to go, as the reference counts them."""
    return DISTANCE[color][position]


class GameState:
    """Everything about one game. Lists are indexed by ``Color`` value; unused colours keep
    four pawns in start, an empty hand and zero turns, and never move.

    ``squares`` caches who stands on each board square (key ``color * 4 + pawn``, or -1) so
    that move generation needs no setup; :func:`apply_move` keeps it in step with ``pawns``.
    Change pawns only through :func:`apply_move` or build a new state with :meth:`from_position`.
    """

    __slots__ = (
        "__weakref__",  # protocol adapters cache per-game renderings keyed by the state
        "colors",
        "discard",
        "draw_pile",
        "drawn_card",
        "hands",
        "history",
        "memo",
        "mode",
        "pawns",
        "squares",
        "to_move",
        "turns",
        "winner",
    )

    def __init__(
        self,
        mode: Mode,
        colors: tuple[Color, ...],
        pawns: list[list[int]],
        hands: list[list[Card]],
        draw_pile: list[Card],
        discard: list[Card],
        drawn_card: Card | None,
        to_move: Color | None,
        turns: list[int],
        history: list[HistoryEntry],
        winner: Color | None = None,
    ) -> None:
        self.mode = mode
        self.colors = colors
        self.pawns = pawns
        self.hands = hands
        self.draw_pile = draw_pile
        self.discard = discard
        self.drawn_card = drawn_card
        self.to_move = to_move
        self.turns = turns
        self.history = history
        self.winner = winner
        self.squares = _occupancy(colors, pawns)
        #: What an encoder derives from this state and keeps with it (games/apologies/
        #: snapshot.py: the history encoded so far); a copy starts without it.
        self.memo: object = None

    @classmethod
    def from_position(
        cls,
        mode: Mode,
        colors: Iterable[Color],
        pawns: Mapping[Color, Sequence[int]] | Sequence[Sequence[int]],
        hands: Mapping[Color, Sequence[Card]] | None = None,
        draw_pile: Sequence[Card] | None = None,
        discard: Sequence[Card] | None = None,
        drawn_card: Card | None = None,
        to_move: Color | None = Color.RED,
        turns: Mapping[Color, int] | None = None,
        history: Sequence[HistoryEntry] = (),
    ) -> GameState:
        """A state at any position, for tests and analysis.

        ``pawns`` gives four positions per colour (a mapping by colour, or a sequence by colour
        value; missing colours stay in start). When ``draw_pile`` is omitted it holds every card
        of the deck not in a hand, not discarded and not drawn, so the 45 cards are conserved.
        """
        in_play = tuple(sorted(Color(c) for c in colors))
        board = [[START] * PAWNS for _ in COLORS]
        items = pawns.items() if isinstance(pawns, Mapping) else enumerate(pawns)
        for color, positions in items:
            if len(positions) != PAWNS:
                raise ValueError(f"{Color(color).name} needs {PAWNS} pawn positions")
            board[color] = list(positions)
        held = [[] for _ in COLORS] if hands is None else [list(hands.get(c, ())) for c in COLORS]
        used = list(discard or ())
        if draw_pile is None:
            remaining = list(DECK)
            for card in [*(c for hand in held for c in hand), *used, *([drawn_card] if drawn_card else [])]:
                remaining.remove(card)
            draw_pile = remaining
        counts = [0] * len(COLORS)
        for color, count in (turns or {}).items():
            counts[color] = count
        return cls(
            mode=mode,
            colors=in_play,
            pawns=board,
            hands=held,
            draw_pile=list(draw_pile),
            discard=used,
            drawn_card=drawn_card,
            to_move=to_move,
            turns=counts,
            history=list(history),
        )

    def copy(self) -> GameState:
        return GameState(
            self.mode,
            self.colors,
            [list(p) for p in self.pawns],
            [list(h) for h in self.hands],
            list(self.draw_pile),
            list(self.discard),
            self.drawn_card,
            self.to_move,
            list(self.turns),
            list(self.history),
            self.winner,
        )

    def cards_in_play(self) -> list[Card]:
        """The cards the player to move may use: the drawn card, or the whole hand (ADULT)."""
        if self.mode is Mode.STANDARD:
            return [self.drawn_card] if self.drawn_card is not None else []
        return list(self.hands[self.to_move]) if self.to_move is not None else []


def _occupancy(colors: Iterable[Color], pawns: list[list[int]]) -> list[int]:
    """Who stands on each board square. Safe zones are per colour (fix of the cross-colour
    safe-zone collision), so they are not shared squares and are not tracked here."""
    squares = [-1] * SQUARES
    for color in colors:
        for index, position in enumerate(pawns[color]):
            if position < SQUARES:
                if squares[position] >= 0:
                    raise ValueError(f"two pawns on square {position}")
                squares[position] = color * PAWNS + index
    return squares


def _draw(state: GameState, rng: Random) -> Card:
    """A uniformly random card of the draw pile; the discard pile is reshuffled in when it runs out."""
    pile = state.draw_pile
    if not pile:
        pile.extend(state.discard)
        state.discard.clear()
    size = len(pile)
    if type(rng) is Random:
        # Random.randrange(size) inlined: its rejection sampling of getrandbits, the same
        # draws, without three Python-level calls a move (a subclass keeps its own randrange).
        bits = size.bit_length()
        index = rng.getrandbits(bits)
        while index >= size:
            index = rng.getrandbits(bits)
    else:
        index = rng.randrange(size)
    card = pile[index]
    pile[index] = pile[-1]
    pile.pop()
    return card


def new_game(seats: int, mode: Mode, rng: Random) -> GameState:
    """A new game for 2-4 players, colours RED, YELLOW, GREEN, BLUE in seat order."""
    if not 2 <= seats <= 4:
        raise ValueError("Apologies is played by 2, 3 or 4 players")
    colors = COLORS[:seats]
    pawns = [[START] * PAWNS for _ in COLORS]
    if mode is Mode.ADULT:
        for color in colors:
            pawns[color][0] = CIRCLE[color]
    state = GameState.from_position(
        mode,
        colors,
        pawns,
        draw_pile=list(DECK),
        history=[HistoryEntry(f"Game started with mode: GameMode.{mode.value}")],
    )
    if mode is Mode.ADULT:
        for _ in range(HAND_SIZE):  # dealt one card at a time, round-robin in colour order
            for color in colors:
                state.hands[color].append(_draw(state, rng))
    state.to_move = colors[rng.randrange(seats)]
    if mode is Mode.STANDARD:
        state.drawn_card = _draw(state, rng)
    return state


# ---------------------------------------------------------------------------------------------
# Move generation (with Parlour's fixes of the reference's quirks)


# Named tuples are built through a Python-level ``__new__``. Move generation builds a few
# hundred thousand per second, so it calls ``tuple.__new__`` itself: the same objects for a
# fraction of the cost once compiled (setup.py).
def _pawn_move(color: Color, pawn: int, start: int, end: int) -> PawnMove:
    return tuple.__new__(PawnMove, (color, pawn, start, end))


def _move(card: Card, actions: tuple[PawnMove, ...], side_effects: tuple[PawnMove, ...], slot: int) -> Move:
    return tuple.__new__(Move, (card, actions, side_effects, slot))


def _entry(action: str, color: Color | None, card: Card | None) -> HistoryEntry:
    return tuple.__new__(HistoryEntry, (action, color, card))


class _Board:
    """Who stands where, seen by the colour to move. Pawns are keyed ``color * 4 + pawn``."""

    __slots__ = ("color", "occupant", "own", "pawns", "slot")

    def __init__(self, state: GameState, color: int) -> None:
        self.color = color
        self.slot = -1  # the hand index of the card being generated (ADULT)
        self.pawns = state.pawns
        self.own = state.pawns[color]
        self.occupant = state.squares

    def blocked(self, end: int, moving: tuple[int, ...]) -> bool:
        """True when an own pawn that is not moving stands on ``end``."""
        if end < SQUARES:
            key = self.occupant[end]
            return key >= 0 and key // PAWNS == self.color and key % PAWNS not in moving
        if end < HOME:
            own = self.own
            return any(own[i] == end and i not in moving for i in range(PAWNS))
        return False  # home and start never conflict

    def settle(
        self, color: int, pawn: int, start: int, end: int, moving: tuple[int, ...], bumps: list[PawnMove]
    ) -> PawnMove:
        """The action of a pawn arriving at ``end``: bump who stands there, then slide.

        ``moving`` holds the keys of the pawns this move moves: they are never bumped by it, so a
        pawn is never sent to start by its own move (a fix of the reference's quirk).
        """
        if end < SQUARES:
            occupant = self.occupant
            key = occupant[end]
            if key >= 0 and key not in moving:
                bumps.append(_pawn_move(COLORS[key // PAWNS], key % PAWNS, end, START))
            slide = SLIDE_END[color][end]
            if slide >= 0:
                for square in SLIDE_SWEEP[color][end]:
                    key = occupant[square]
                    if key >= 0 and key not in moving:
                        bumps.append(_pawn_move(COLORS[key // PAWNS], key % PAWNS, square, START))
                end = slide
        return _pawn_move(COLORS[color], pawn, start, end)

    def simple(self, card: Card, pawn: int, start: int, end: int) -> Move | None:
        """A one-pawn move to ``end`` (-1: off the board), or None when it is not legal.

        The same rules as :meth:`blocked` and :meth:`settle`, inlined: this is the hot path.
        """
        if end < 0:
            return None
        color = self.color
        if end >= SQUARES:
            if end < HOME and self.blocked(end, (pawn,)):
                return None
            return _move(card, (_pawn_move(COLORS[color], pawn, start, end),), (), self.slot)
        occupant = self.occupant
        key = occupant[end]
        bumps: list[PawnMove] = []
        if key >= 0:
            if key // PAWNS == color:
                if key % PAWNS != pawn:
                    return None
            else:
                bumps.append(_pawn_move(COLORS[key // PAWNS], key % PAWNS, end, START))
        slide = SLIDE_END[color][end]
        if slide >= 0:
            mine = color * PAWNS + pawn
            for square in SLIDE_SWEEP[color][end]:
                key = occupant[square]
                if key >= 0 and key != mine:
                    bumps.append(_pawn_move(COLORS[key // PAWNS], key % PAWNS, square, START))
            end = slide
        return _move(card, (_pawn_move(COLORS[color], pawn, start, end),), tuple(bumps), self.slot)

    def targets(self) -> list[tuple[int, int, int]]:
        """Opponent pawns on board squares as (color, pawn, square), in colour then pawn order."""
        color = self.color
        return [
            (c, index, position)
            for c in range(len(self.pawns))
            if c != color
            for index, position in enumerate(self.pawns[c])
            if position < SQUARES
        ]


def _unique(bumps: list[PawnMove]) -> tuple[PawnMove, ...]:
    """Bumps with repeats of one pawn dropped (two slides of one move may sweep the same pawn)."""
    if len(bumps) < 2:
        return tuple(bumps)
    seen: set[tuple[int, int]] = set()
    kept = []
    for bump in bumps:
        if (bump.color, bump.pawn) not in seen:
            seen.add((bump.color, bump.pawn))
            kept.append(bump)
    return tuple(kept)


def _split_moves(board: _Board, card: Card, pawn: int, start: int, moves: list[Move]) -> None:
    """7 splits of ``pawn`` with each later own pawn that is on the board or in its safe zone.

    Parlour lists each split once (lower pawn index first), judges both halves against the board
    without either mover, never lets two own pawns end on one square, and never bumps a partner
    that moved (fixes of the reference's quirks).
    """
    color = board.color
    own = board.own
    forward = FORWARD[color]
    for partner in range(pawn + 1, PAWNS):
        other = own[partner]
        if other >= HOME:
            continue
        moving = (pawn, partner)
        keys = (color * PAWNS + pawn, color * PAWNS + partner)
        for share in range(1, 7):
            first_end = forward[start][share]
            second_end = forward[other][7 - share]
            if first_end < 0 or second_end < 0:
                continue
            if board.blocked(first_end, moving) or board.blocked(second_end, moving):
                continue
            bumps: list[PawnMove] = []
            first = board.settle(color, pawn, start, first_end, keys, bumps)
            second = board.settle(color, partner, other, second_end, keys, bumps)
            if first.end == second.end and first.end != HOME:
                continue
            moves.append(_move(card, (first, second), _unique(bumps), board.slot))


def _card_moves(board: _Board, card: Card, moves: list[Move]) -> None:
    """Every legal move of one card, pawn by pawn, in the order the reference library lists them."""
    color = board.color
    own = board.own
    value = int(card)  # IntEnum's .value is a slow property in this hot loop
    ahead = FORWARD[color]
    back = BACKWARD[color]
    for pawn in range(PAWNS):
        start = own[pawn]
        if start == HOME:
            continue
        if start == START:
            if value == 1 or value == 2:
                move = board.simple(card, pawn, START, CIRCLE[color])
                if move is not None:
                    moves.append(move)
            elif value == 0:
                _apologies_moves(board, card, pawn, moves)
            continue
        if value == 0:
            continue
        if value == 4:
            move = board.simple(card, pawn, start, back[start][4])
        else:
            if value == 11 and start < SQUARES:
                _swap_moves(board, card, pawn, start, moves)
            move = board.simple(card, pawn, start, ahead[start][value])
        if move is not None:
            moves.append(move)
        if value == 7:
            _split_moves(board, card, pawn, start, moves)
        elif value == 10:
            move = board.simple(card, pawn, start, back[start][1])
            if move is not None:
                moves.append(move)


def _apologies_moves(board: _Board, card: Card, pawn: int, moves: list[Move]) -> None:
    """A start pawn takes the square of each opponent on the board, which goes to start."""
    color = board.color
    mine = color * PAWNS + pawn
    for c, index, square in board.targets():
        bumps: list[PawnMove] = []
        action = board.settle(color, pawn, START, square, (mine, c * PAWNS + index), bumps)
        victim = _pawn_move(COLORS[c], index, square, START)
        moves.append(_move(card, (action, victim), _unique(bumps), board.slot))


def _swap_moves(board: _Board, card: Card, pawn: int, start: int, moves: list[Move]) -> None:
    """11: trade places with each opponent on a board square; both may slide.

    Slides are judged after the exchange: the mover is never bumped by its own move, and the
    opponent is sent to start when the mover's slide sweeps the square it was swapped onto, or
    when its own slide ends on the mover (the reference reaches the same board by bumping pawns
    at their pre-move squares).
    """
    color = board.color
    mine = color * PAWNS + pawn
    for c, index, square in board.targets():
        keys = (mine, c * PAWNS + index)
        bumps: list[PawnMove] = []
        action = board.settle(color, pawn, start, square, keys, bumps)
        other = board.settle(c, index, square, start, keys, bumps)
        if other.end == action.end or other.end in SLIDE_SWEEP[color][square]:
            bumps.append(_pawn_move(COLORS[c], index, other.end, START))
        moves.append(_move(card, (action, other), _unique(bumps), board.slot))


def legal_moves(state: GameState, color: Color | int) -> list[Move]:
    """The legal moves of ``color`` now, in the reference's list order; forfeits when none.

    Empty when ``color`` is not to move or the game is over.
    """
    if state.to_move is None or color != state.to_move or state.winner is not None:
        return []
    board = _Board(state, color)
    moves: list[Move] = []
    if state.mode is Mode.STANDARD:
        card = state.drawn_card
        if card is None:
            return []
        _card_moves(board, card, moves)
        return moves or [_move(card, (), (), -1)]
    hand = state.hands[color]
    for slot, card in enumerate(hand):
        board.slot = slot
        _card_moves(board, card, moves)
    return moves or [_move(card, (), (), slot) for slot, card in enumerate(hand)]


# ---------------------------------------------------------------------------------------------
# Applying a move


#: History names of pawns ("Red0") and positions ("square 11"), by colour, pawn and position.
PAWN_NAMES = tuple(tuple(f"{color.name.capitalize()}{pawn}" for pawn in range(PAWNS)) for color in COLORS)
POSITION_NAMES = tuple(position_name(position) for position in range(START + 1))


def _describe(move: Move) -> str:
    """The history text of a move: each pawn where it is right after that step."""
    if not move.actions:
        return f"Turn is forfeit; discarded card {move.card.face}"
    steps = "".join(
        f"{PAWN_NAMES[step.color][step.pawn]}->{POSITION_NAMES[step.end]}, "
        for step in (*move.actions, *move.side_effects)
    )
    return f"Played card {move.card.face}: [ {steps}]"


def apply_move(state: GameState, move: Move, rng: Random) -> None:
    """Play ``move`` (one of :func:`legal_moves`) for the colour to move, in place.

    Actions then side effects, the card discarded (ADULT: replaced at the end of the hand), the
    turn counted, the winner checked; then the same colour again after a played 2, otherwise the
    next colour, and (STANDARD) that player's card is drawn.
    """
    color = state.to_move
    if color is None:
        raise ValueError("the game is over")
    pawns = state.pawns
    squares = state.squares
    origins: dict[int, int] = {}
    for step in (*move.actions, *move.side_effects):
        key = step.color * PAWNS + step.pawn
        if key not in origins:
            origins[key] = pawns[step.color][step.pawn]
        pawns[step.color][step.pawn] = step.end
    # Vacate every square a touched pawn left before filling the squares where they ended:
    # in one move a pawn may land where another has just left.
    for key, origin in origins.items():
        if origin < SQUARES and squares[origin] == key:
            squares[origin] = -1
    for key in origins:
        end = pawns[key // PAWNS][key % PAWNS]
        if end < SQUARES:
            squares[end] = key
    card = move.card
    if state.mode is Mode.ADULT:
        hand = state.hands[color]
        if 0 <= move.slot < len(hand) and hand[move.slot] is card:
            del hand[move.slot]
        else:
            hand.remove(card)
        state.discard.append(card)
        state.hands[color].append(_draw(state, rng))
    else:
        state.discard.append(card)
        state.drawn_card = None
    state.turns[color] += 1
    state.history.append(_entry(_describe(move), color, card))
    if all(position == HOME for position in pawns[color]):
        state.winner = color
        state.to_move = None
        text = f"Game completed: winner is {color.name.capitalize()} after {state.turns[color]} turns"
        state.history.append(_entry(text, None, None))
        return
    if card is not Card.CARD_2 or not move.actions:
        colors = state.colors
        state.to_move = colors[(colors.index(color) + 1) % len(colors)]
    if state.mode is Mode.STANDARD:
        state.drawn_card = _draw(state, rng)


def view(state: GameState, color: Color, recent: int | None = None) -> PlayerView:
    """What ``color`` may see: the board and turn counts, and only its own hand.

    ``recent`` keeps only the last entries of the history (what the wire carries).
    """
    history = state.history if recent is None else state.history[-recent:]
    return PlayerView(
        color=color,
        mode=state.mode,
        colors=state.colors,
        pawns=tuple((p[0], p[1], p[2], p[3]) for p in state.pawns),
        turns=tuple(state.turns),
        hand=tuple(state.hands[color]),
        drawn_card=state.drawn_card,
        history=tuple(history),
    )
