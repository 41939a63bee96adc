"""Server-side rules for /async games with ``rules`` set to a plugin (docs/async-decisions.md S9).

One :class:`ServerGame` is one live game played under Parlour's own rules plugins
(``parlour.games``) and robots (``parlour.robots``). It speaks only in strings: actions are short
human-readable texts, views are JSON text. The async service stores ``(rules, seats, seed,
options, actions)`` and rebuilds a game with :func:`replay` after a restart (S10), from the
game's latest snapshot when it has one (server_game.py).

Seats: the plugins number seats 0..n-1; everything here uses the protocol's local ids 1..n
(local id = seat + 1). Apologies colours follow seats: 1 RED, 2 YELLOW, 3 GREEN, 4 BLUE; Tsuro
colours: 1 white, 2 black, 3 red, 4 green, 5 blue.

Who moves first: Fish and Tsuro start with local id 1 (S19). Apologies draws its first player at
random, so the service must ask :meth:`ServerGame.to_move` rather than assume local id 1.

Determinism: the game owns ``random.Random(seed)`` for every draw of the rules (Apologies cards,
Fish boards, Tsuro's random deal). A robot's choice draws from a second ``Random`` derived from
the seed and the number of actions so far, so it depends only on the position: asking twice, or
asking again after :func:`replay`, gives the same action, and asking has no effect on the game.

Options (``start``'s ``options``; unknown keys are a ValueError):

* apologies: ``mode`` ``"STANDARD"`` (default) or ``"ADULT"`` (hands of five).
* fish: ``rows`` and ``columns`` (2-10, default 5), ``holes`` (default 0), ``fish`` (1-5: every
  tile holds that many; default random 1-5 per tile).
* tsuro: ``deal`` ``"random"`` (default here: hands are drawn from the seeded random source, so
  they are worth hiding) or ``"cyclic"`` (the reference's fixed cycle 0..34).

Actions (the client commits one of ``legal_actions`` verbatim; any other string, including one
that was legal on an earlier turn, is :class:`IllegalAction`):

* apologies: ``"play <card>: <pawn> <from>-><to>[, <pawn> <from>-><to>]"`` where card is ``A``,
  ``1``..``12``, a pawn is named as in the game history (``Red0``..``Blue3``) and a position is
  ``start``, ``square N`` (0-59), ``safe N`` (0-4) or ``home``; ``<to>`` is after any slide.
  Bumps that follow are not written: they are implied by the board. Examples:
  ``"play 5: Red0 square 4->square 9"``, ``"play 7: Red0 square 4->square 8, Red1 safe 0->safe 3"``,
  ``"play A: Red2 start->square 12, Blue0 square 12->start"``, ``"forfeit 10"`` (no legal move;
  in ADULT the card named is the one discarded). In ADULT two copies of one card give one action.
* fish: ``"place X,Y"`` and ``"move X,Y X2,Y2"`` (the penguin on X,Y slides to X2,Y2); X is the
  column and Y the row (tile id = X * rows + Y; odd rows are drawn half a tile to the right).
* tsuro: ``"tile T rotation R at X,Y"``, with ``" port P"`` appended on a first placement: T is
  the tile number 0-34, R the clockwise rotation in degrees (0, 90, 180, 270), X the column and Y
  the row (0-9), P the entry port A-H facing off the board.

``actions`` also records seat removals (Fish and Tsuro only, see :meth:`ServerGame.remove_seat`)
as ``"remove <local id>"``; :func:`replay` replays them, :meth:`ServerGame.apply` refuses them.

Views (``view(local_id)``, compact JSON objects). Every view has ``game`` (the rules name),
``turn`` (local id to move, null when over), ``players`` (by local id, each with ``id``) and
``recent`` (the last ``seats`` entries of ``actions`` as ``{"id": local id, "action": ...}``,
oldest first: what happened since a seat last moved). A seat's view adds ``you``: ``{"id": ...}``
plus its own hidden information; the spectator view (``None``) is exactly a seat view without
``you``, so it shows nothing any seat keeps hidden.

* apologies: ``mode``; ``card`` (STANDARD: the card drawn for this turn, shown to all; else
  null); ``discard`` (faces, oldest first; public); ``draw_pile`` (cards left); players:
  ``color``, ``pawns`` (four positions as in actions), ``turns``, ``score`` (progress, see
  outcome), ``hand_size``; ``you.hand`` (ADULT: own cards as faces in hand order; STANDARD: []).
* fish: ``rows``, ``columns``, ``fish`` (``fish[y][x]``, 0 for a hole), ``order`` (local ids in
  turn order, removed seats left out); players: ``score`` (fish eaten), ``penguins`` (``[x, y]``
  or null before placement; [] once removed), ``removed``. Nothing is hidden: ``you`` is the id.
* tsuro: ``size`` (10), ``deal``, ``round``, ``tiles`` (``[x, y, tile, rotation]`` of every placed
  tile, row by row); players: ``color``, ``state`` (ALIVE, DEAD, COLLIDED, EJECTED), ``at``
  (``[x, y, port letter]`` or null before the first placement), ``start`` (entry, same form),
  ``hand_size`` (the mover holds the hand, everyone else 0); ``you.hand`` (own tile numbers
  when to move, else []).

Outcome: local id -> ``(score, rank)``, rank 1 best, ties share a rank and the next rank skips
(1, 1, 3). Apologies: score is progress, the sum over pawns of 65 - distance to home (260 when
all are home: only the winner); Fish: fish eaten, removed seats ranked below every other seat;
Tsuro: how many players the seat outlasted (the places of GAME_END, ejected seats last).

Leaving for good: Apologies seats are always played by robots (its plugin cannot remove one).
Fish and Tsuro may do either: robots play on, or :meth:`ServerGame.remove_seat` takes the seat
out of play (Fish: its penguins leave the board; Tsuro: its avatar is EJECTED) and ranks it last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parlour.games.apologies import GameState as ApologiesState
from parlour.games.apologies.engine import distance_to_home
from parlour.games.apologies.engine import view as apologies_view
from parlour.games.apologies.model import Color, Mode, Move, PawnMove, position_name
from parlour.games.base import Robot
from parlour.games.fish.rules import FishMove, FishState, Place
from parlour.games.fish.rules import remove_seat as fish_remove_seat
from parlour.games.registry import plugin
from parlour.games.tsuro.rules import (
    ALIVE,
    SIZE,
    Placement,
    TsuroState,
    _on_board,
    _squares,
    eject,
    ranking,
)
from parlour.games.tsuro.tiles import PORTS, SIDE_STEP, TILES, exit_port, port_side
from parlour.protocols.async_ws.game.server_game import IllegalAction, PluginGame, ServerGame
from parlour.robots.fish import FishSearchRobot
from parlour.robots.levels import LEVELS
from parlour.robots.registry import robot

__all__ = ["RULES", "IllegalAction", "ServerGame", "check_options", "replay", "seat_range", "start"]

#: The plugins a game may be played under (GameConfiguration.rules other than "client").
RULES: tuple[str, ...] = ("apologies", "fish", "tsuro")


def seat_range(rules: str) -> tuple[int, int]:
    """(fewest, most) seats ``rules`` allows; ValueError naming the choices for an unknown name."""
    if rules not in RULES:
        raise ValueError(f"unknown rules {rules!r}; choose from {', '.join(RULES)}")
    game = plugin(rules)
    return game.min_seats, game.max_seats


# ---------------------------------------------------------------------------------------------
# Apologies

#: "Red0".."Blue3" and "start"/"square N"/"safe N"/"home", as the game history writes them.
_PAWN_NAMES = tuple(tuple(f"{color.name.capitalize()}{pawn}" for pawn in range(4)) for color in Color)
_POSITIONS = tuple(position_name(position) for position in range(67))


def _step(step: PawnMove) -> str:
    return f"{_PAWN_NAMES[step.color][step.pawn]} {_POSITIONS[step.start]}->{_POSITIONS[step.end]}"


class _Apologies(PluginGame[ApologiesState, Move]):
    rules = "apologies"

    def _plugin_options(self) -> dict[str, Any]:
        return {"mode": Mode(self.options["mode"])}

    def _seat(self) -> int | None:
        state = self._state
        return None if state.to_move is None or state.winner is not None else int(state.to_move)

    def _encode(self, move: Move) -> str:
        # The card and what the player does name a move: bumps follow from them (and the hand
        # slot only tells equal cards apart).
        if not move.actions:
            return f"forfeit {move.card.face}"
        return f"play {move.card.face}: " + ", ".join(_step(step) for step in move.actions)

    def _robot(self) -> Robot[ApologiesState, Move]:
        # The stronger default robot, and fast enough: measured under 1 ms a move (median), 10 ms at worst.
        return robot("apologies", "search")

    def _public(self) -> dict[str, Any]:
        state = self._state
        return {
            "mode": state.mode.value,
            "card": None if state.drawn_card is None else state.drawn_card.face,
            "discard": [card.face for card in state.discard],
            "draw_pile": len(state.draw_pile),
            "players": [
                {
                    "id": seat + 1,
                    "color": color.name,
                    "pawns": [_POSITIONS[position] for position in state.pawns[color]],
                    "turns": state.turns[color],
                    "score": _progress(state, color),
                    "hand_size": len(state.hands[color]),
                }
                for seat, color in enumerate(state.colors)
            ],
        }

    def _private(self, seat: int) -> dict[str, Any]:
        # The plugin's own view decides what a seat may see of its hand.
        mine = apologies_view(self._state, Color(seat), recent=1)
        return {"hand": [card.face for card in mine.hand]}

    def _standings(self) -> list[tuple[float, tuple[float, ...]]]:
        state = self._state
        return [
            (float(progress), (float(progress),))
            for progress in (_progress(state, color) for color in state.colors)
        ]


def _progress(state: ApologiesState, color: Color) -> int:
    """Steps made by all four pawns: 0 with all in start, 260 with all home."""
    return sum(65 - distance_to_home(color, position) for position in state.pawns[color])


# ---------------------------------------------------------------------------------------------
# Fish

#: The default robot "search" with a smaller node budget: depth 3 with 4000 nodes can take 150 ms
#: a move; 600 nodes stays under 20 ms and still beats a depth-2 search about 3 games in 4.
_FISH_ROBOT = FishSearchRobot(depth=3, budget=600)


class _Fish(PluginGame[FishState, FishMove]):
    rules = "fish"
    _removable = True

    def _seat(self) -> int | None:
        state = self._state
        return None if state.finished else state.current

    def _tile(self, tile: int) -> str:
        x, y = divmod(tile, self._state.rows)
        return f"{x},{y}"

    def _encode(self, move: FishMove) -> str:
        if isinstance(move, Place):
            return f"place {self._tile(move.tile)}"
        # A penguin is named by the tile it stands on: ids are the plugin's, not the players'.
        return f"move {self._tile(self._state.penguins[move.penguin])} {self._tile(move.tile)}"

    def _robot(self) -> Robot[FishState, FishMove]:
        return _FISH_ROBOT

    def _public(self) -> dict[str, Any]:
        state = self._state
        rows = state.rows
        players = []
        for seat in range(self.seats):
            penguins: list[list[int] | None] = []
            for penguin in state.penguins_of(seat):
                tile = state.penguins[penguin]
                if tile >= 0:
                    penguins.append(list(divmod(tile, rows)))
                elif tile == -1:  # not placed yet; -2 means removed with its seat
                    penguins.append(None)
            players.append(
                {
                    "id": seat + 1,
                    "score": state.scores[seat],
                    "penguins": penguins,
                    "removed": seat in state.removed,
                }
            )
        return {
            "rows": rows,
            "columns": state.columns,
            "fish": [[state.fish[x * rows + y] for x in range(state.columns)] for y in range(rows)],
            "order": [seat + 1 for seat in state.order],
            "players": players,
        }

    def _standings(self) -> list[tuple[float, tuple[float, ...]]]:
        state = self._state
        return [
            (float(state.scores[seat]), (float(seat not in state.removed), float(state.scores[seat])))
            for seat in range(self.seats)
        ]

    def _remove(self, seat: int) -> bool:
        if seat in self._state.removed:
            return False
        fish_remove_seat(self._state, seat)
        return True


# ---------------------------------------------------------------------------------------------
# Tsuro


def _where(at: tuple[int, int, int] | None) -> list[int | str] | None:
    return None if at is None else [at[0], at[1], PORTS[at[2]]]


#: _EXIT_SIDE[tile][rotation // 90][entry port] = the side (0 top .. 3 left) the path leaves by.
_EXIT_SIDE = tuple(
    tuple(
        tuple(port_side(exit_port(tile, rotation, port)) for port in range(8))
        for rotation in (0, 90, 180, 270)
    )
    for tile in range(len(TILES))
)
_ROTATIONS = (0, 90, 180, 270)


def _first_placements(state: TsuroState, seat: int) -> list[Placement]:
    """Exactly the plugin's ``legal_moves`` for a first placement, 5-10 times faster.

    The plugin checks each of up to 960 candidates on its own, simulating the board for each and,
    when the avatar would die, once more for every alternative: up to 12 ms, over the turn budget.
    On a first placement the square has no neighbours (a rule), so the avatar survives exactly
    when the tile's exit port faces another square of the board, and no other avatar is touched:
    one table lookup per candidate. test_rules.py compares both on every first placement it plays.
    """
    board = state.board
    hand = list(dict.fromkeys(state.hand))
    moves: list[Placement] = []
    for x, y, port in _squares(state, seat):
        if port is None or board[y][x] is not None:
            continue
        edge = [not _on_board(x + dx, y + dy) for dx, dy in SIDE_STEP]  # by side: off the board?
        if any(
            not off and board[y + dy][x + dx] is not None
            for off, (dx, dy) in zip(edge, SIDE_STEP, strict=True)
        ):
            continue
        survives = [not edge[_EXIT_SIDE[tile][turn][port]] for tile in hand for turn in range(4)]
        # A suicidal placement is legal only when every choice on this square is suicidal.
        anyone = any(survives)
        moves.extend(
            Placement(True, tile, _ROTATIONS[turn], x, y, port)
            for index, (tile, turn) in enumerate((tile, turn) for tile in hand for turn in range(4))
            if survives[index] or not anyone
        )
    return moves


class _Tsuro(PluginGame[TsuroState, Placement]):
    rules = "tsuro"
    _removable = True

    def _plugin_options(self) -> dict[str, Any]:
        return {"deal": self.options["deal"]}

    def _seat(self) -> int | None:
        state = self._state
        return None if state.finished else state.current

    def _moves(self, seat: int) -> Sequence[Placement]:
        if self._state.players[seat].at is None:
            return _first_placements(self._state, seat)
        return self._plugin.legal_moves(self._state, seat)

    def _encode(self, move: Placement) -> str:
        text = f"tile {move.tile} rotation {move.rotation} at {move.x},{move.y}"
        return text if move.port is None else f"{text} port {PORTS[move.port]}"

    def _robot(self) -> Robot[TsuroState, Placement]:
        return robot("tsuro", "lookahead")

    def _public(self) -> dict[str, Any]:
        state = self._state
        holder = self._seat()
        return {
            "size": SIZE,
            "deal": "random" if state.random_deal else "cyclic",
            "round": state.round,
            "tiles": [
                [x, y, cell[0], cell[1]]
                for y, row in enumerate(state.board)
                for x, cell in enumerate(row)
                if cell
            ],
            "players": [
                {
                    "id": seat + 1,
                    "color": player.color,
                    "state": player.state,
                    "at": _where(player.at),
                    "start": _where(player.start),
                    # A hand is dealt to the mover for its turn: nobody else holds tiles.
                    "hand_size": len(state.hand) if seat == holder else 0,
                }
                for seat, player in enumerate(state.players)
            ],
        }

    def _private(self, seat: int) -> dict[str, Any]:
        return {"hand": list(self._state.hand) if seat == self._seat() else []}

    def _standings(self) -> list[tuple[float, tuple[float, ...]]]:
        places = ranking(self._state)
        place_of = {seat: index for index, group in enumerate(places) for seat in group}
        worse = [sum(len(group) for group in places[index + 1 :]) for index in range(len(places))]
        return [(float(worse[place_of[seat]]), (-float(place_of[seat]),)) for seat in range(self.seats)]

    def _remove(self, seat: int) -> bool:
        if self._state.players[seat].state != ALIVE:
            return False  # already out: its place in the ranking stands
        # The plugin's remove_seat passes no random source, which would deal the next hand from
        # the cycle even in a random deal; the game's own source keeps the deal as chosen.
        eject(self._state, seat, self._rng)
        return True


# ---------------------------------------------------------------------------------------------
# Building games

_GAMES: dict[str, type[PluginGame[Any, Any]]] = {"apologies": _Apologies, "fish": _Fish, "tsuro": _Tsuro}


def _int_option(options: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"option {name!r} must be an integer from {low} to {high}")
    return value


def _choice_option(options: Mapping[str, Any], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = options.get(name, default)
    if isinstance(value, Mode):
        value = value.value
    if value not in choices:
        raise ValueError(f"option {name!r} must be one of {', '.join(choices)}")
    return str(value)


def _options(rules: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` checked, with defaults filled in, as JSON values."""
    known = {"apologies": ("mode",), "fish": ("rows", "columns", "holes", "fish"), "tsuro": ("deal",)}[rules]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown {rules} option {unknown[0]!r}; known options: {', '.join(known)}")
    if rules == "apologies":
        return {"mode": _choice_option(options, "mode", "STANDARD", ("STANDARD", "ADULT"))}
    if rules == "tsuro":
        return {"deal": _choice_option(options, "deal", "random", ("random", "cyclic"))}
    found: dict[str, Any] = {
        "rows": _int_option(options, "rows", 5, 2, 10),
        "columns": _int_option(options, "columns", 5, 2, 10),
        "holes": _int_option(options, "holes", 0, 0, 99),
    }
    if options.get("fish") is not None:
        found["fish"] = _int_option(options, "fish", 1, 1, 5)
    return found


def check_options(rules: str, options: Mapping[str, Any]) -> None:
    """ValueError naming the problem when ``options`` are not options of ``rules``."""
    seat_range(rules)
    _options(rules, options)


def start(
    rules: str,
    seats: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    level: str | None = None,
) -> ServerGame:
    """A new game of ``rules`` for ``seats`` players dealt from ``seed``, its robots playing at
    ``level`` (parlour.robots.levels; None: each game's default robot).

    ValueError for an unknown rules name, a seat count the game does not allow (the message names
    the allowed range), a bad option or an unknown level.
    """
    low, high = seat_range(rules)
    if isinstance(seats, bool) or not low <= seats <= high:
        raise ValueError(f"{rules} is played by {low} to {high} players, not {seats}")
    if level is not None and level not in LEVELS:
        raise ValueError(f"unknown robot level {level!r}; choose from {', '.join(LEVELS)}")
    game = _GAMES[rules](seats, seed, _options(rules, options or {}))
    game.level = level
    return game


def replay(
    rules: str,
    seats: int,
    seed: int,
    actions: Sequence[str],
    options: Mapping[str, Any] | None = None,
    level: str | None = None,
    snapshot: bytes | None = None,
) -> ServerGame:
    """The game rebuilt from its record: :func:`start`, then every action (and seat removal) in
    order; from ``snapshot`` (:meth:`ServerGame.snapshot`) when there is one that fits, then only
    the actions after it. IllegalAction if the record does not fit the game."""
    game = start(rules, seats, seed, options, level)
    done = 0 if snapshot is None else game.resume(snapshot, actions)
    for action in actions[done:]:
        if action.startswith("remove "):
            local_id = action.removeprefix("remove ")
            if not local_id.isdigit():
                raise IllegalAction(f"{action[:80]!r} is not a seat removal")
            game.remove_seat(int(local_id))
        else:
            game.apply(action)
    return game
