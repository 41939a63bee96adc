"""Drive the reference `apologies` library (0.4.2) as an oracle, and translate its positions.

Test and benchmark code only: src/parlour never imports the library. The library draws cards
with the global ``random`` module, so callers seed it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from apologies.game import CardType, Game, GameMode, PlayerColor
from apologies.game import Position as LibPosition
from apologies.rules import ActionType, Rules
from apologies.rules import Move as LibMove

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import HOME, SAFE, START, Card, Color, Mode, Move

LIB_MODE = {Mode.STANDARD: GameMode.STANDARD, Mode.ADULT: GameMode.ADULT}
COLOR = {lib: Color[lib.name] for lib in PlayerColor}
CARD = {lib: Card[lib.name] for lib in CardType}

#: An outcome: the card used and where every pawn stands afterwards, ((color, pawn, position), ...).
Outcome = tuple[Card, tuple[tuple[int, int, int], ...]]


def position(lib: LibPosition) -> int:
    if lib.home:
        return HOME
    if lib.start:
        return START
    if lib.safe is not None:
        return SAFE + lib.safe
    assert lib.square is not None
    return lib.square


@dataclass
class Sample:
    """One position of a library game: whose turn, with which card(s), and the library's moves."""

    game: Game
    mode: Mode
    color: PlayerColor
    card: object | None  # the drawn library card (STANDARD) or None (ADULT: the hand)
    moves: list[LibMove]

    def ours(self) -> GameState:
        pawns = {
            COLOR[c]: [position(p.position) for p in player.pawns] for c, player in self.game.players.items()
        }
        hands = {
            COLOR[c]: [CARD[card.cardtype] for card in player.hand] for c, player in self.game.players.items()
        }
        drawn = CARD[self.card.cardtype] if self.card is not None else None  # type: ignore[attr-defined]
        return GameState.from_position(
            self.mode,
            [COLOR[c] for c in self.game.players],
            pawns,
            hands=hands if self.mode is Mode.ADULT else None,
            drawn_card=drawn,
            to_move=COLOR[self.color],
        )


def samples(mode: Mode, players: int, seed: int, every: int = 1) -> Iterator[Sample]:
    """Positions of one library game played with random moves, the way its server drives it:
    view -> legal moves -> execute, with the draw-again rule, until someone wins."""
    random.seed(seed)
    chooser = random.Random(seed + 1)
    rules = Rules(LIB_MODE[mode])
    game = Game(playercount=players)
    rules.start_game(game)
    order = list(game.players)
    turn = chooser.randrange(players)
    count = 0
    while not game.completed:
        color = order[turn]
        player = game.players[color]
        view = game.create_player_view(color)
        card = game.deck.draw() if mode is Mode.STANDARD else None
        moves = rules.construct_legal_moves(view, card=card)
        if count % every == 0:
            yield Sample(game, mode, color, card, moves)
        count += 1
        if play_library_move(game, rules, mode, player, moves[chooser.randrange(len(moves))]):
            turn = (turn + 1) % players


def play_library_move(game: Game, rules: Rules, mode: Mode, player: object, move: LibMove) -> bool:
    """Play one library move the way its server does; True when the turn passes on."""
    if move.actions:
        rules.execute_move(game, player, move)  # type: ignore[arg-type]
    else:
        game.track(f"Turn is forfeit; discarded card {move.card.cardtype.value}", player, move.card)  # type: ignore[arg-type]
    if mode is Mode.ADULT:
        player.hand.remove(move.card)  # type: ignore[attr-defined]
    game.deck.discard(move.card)
    if mode is Mode.ADULT:
        player.hand.append(game.deck.draw())  # type: ignore[attr-defined]
    return not (move.actions and move.card.cardtype is CardType.CARD_2)


def board_of(game: Game) -> dict[tuple[int, int], int]:
    return {
        (COLOR[c], pawn.index): position(pawn.position)
        for c, player in game.players.items()
        for pawn in player.pawns
    }


def outcome_of_ours(board: dict[tuple[int, int], int], move: Move) -> Outcome:
    after = dict(board)
    for step in (*move.actions, *move.side_effects):
        after[(step.color, step.pawn)] = step.end
    return move.card, tuple(sorted((c, p, where) for (c, p), where in after.items()))


def library_steps(move: LibMove) -> list[tuple[int, int, int, bool]]:
    """(color, pawn, destination, is_side_effect) for every step of a library move, in order."""
    steps = []
    for action, side in [(a, False) for a in move.actions] + [(a, True) for a in move.side_effects]:
        target = START if action.actiontype is ActionType.MOVE_TO_START else position(action.position)
        steps.append((COLOR[action.pawn.color], action.pawn.index, target, side))
    return steps


def outcome_of_library(board: dict[tuple[int, int], int], move: LibMove) -> Outcome:
    after = dict(board)
    for color, pawn, target, _ in library_steps(move):
        after[(color, pawn)] = target
    return CARD[move.card.cardtype], tuple(sorted((c, p, where) for (c, p), where in after.items()))


def library_game(mode: Mode, players: int, pawns: dict[Color, list[int]]) -> Game:
    """A library game with pawns placed by hand (positions as Parlour ints)."""
    game = Game(playercount=players)
    for lib_color, player in game.players.items():
        for pawn, where in zip(player.pawns, pawns.get(COLOR[lib_color], [START] * 4), strict=True):
            target = LibPosition()
            if where == HOME:
                target = LibPosition().move_to_home()
            elif where >= SAFE and where < HOME:
                target = LibPosition().move_to_safe(where - SAFE)
            elif where < SAFE:
                target = LibPosition().move_to_square(where)
            pawn.position.move_to_position(target)
    return game


def library_moves(game: Game, color: Color, card: Card, mode: Mode = Mode.STANDARD) -> list[LibMove]:
    from apologies.game import Card as LibCard

    lib_color = next(c for c in game.players if COLOR[c] is color)
    view = game.create_player_view(lib_color)
    return Rules(LIB_MODE[mode]).construct_legal_moves(view, card=LibCard("t", CardType[card.name]))
