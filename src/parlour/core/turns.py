"""A running game dealt and played forward, turn by turn.

The lobby decides who sits where, when a game starts and what its end does to the players; this
module holds what plays the game: the rules plugin, the robot and the random source its choices
show to every player. Robots move at once; a human's turn is offered under move ids derived
from the game's secret and the moves so far; every move is announced to the seated humans and
journalled for the store, and every ``snapshot_every`` moves the game's state with it
(core/durable.py: what a restart starts from).
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

from parlour.core.durable import SNAPSHOT_EVERY, codec_of, snapshot_row
from parlour.core.events import GamePlayerTurn, GameStateChange, Sink
from parlour.core.ids import turn_ids
from parlour.core.journal import Journal
from parlour.core.records import Game, GameState, PlayerType, Seat, SeatState
from parlour.games.base import GamePlugin, Outcome, Robot, StateCodec
from parlour.robots.levels import level_robot
from parlour.storage.records import MOVE, MoveRow

__all__ = ["Turns"]


class Turns:
    def __init__(
        self,
        plugin: GamePlugin[Any, Any, Any],
        robot: Robot[Any, Any],
        rng: Random,
        sink: Sink,
        journal: Journal,
        robot_handles: Sequence[str],
    ) -> None:
        self.plugin = plugin
        #: Wrapped by a timer when the server reports metrics (parlour.app).
        self.robot = robot
        #: Robots' seats and choices: game seeds are not drawn from here (parlour.core.ids).
        self.rng = rng
        self.sink = sink
        self.journal = journal
        self.robot_handles = tuple(robot_handles)
        #: How the plugin encodes its states for snapshots (None: its games replay every move).
        self.codec: StateCodec[Any] | None = codec_of(plugin)
        #: Moves between two snapshots of a game (core/durable.py).
        self.snapshot_every = SNAPSHOT_EVERY

    def deal(self, game: Game, now: float) -> None:
        """Robots take the empty seats, every seat plays, and the game is dealt."""
        taken = {seat.handle for seat in game.seats}
        names = [name for name in self.robot_handles if name not in taken]
        while len(game.seats) < game.players:
            name = names.pop(self.rng.randrange(len(names)))
            game.seats.append(Seat(name, PlayerType.PROGRAMMATIC, SeatState.PLAYING))
        for seat in game.seats:
            seat.state = SeatState.PLAYING
        game.state = GameState.PLAYING
        # The game draws from its own source, seeded when it was created, so that its stored
        # moves replay to the same states (robots and ids draw from the lobby's).
        game.rng = Random(game.seed)
        game.play = self.plugin.new_game(len(game.seats), game.options, game.rng)
        game.times = [now]

    def announce(self, game: Game) -> None:
        """GAME_STATE_CHANGE to every seated human, each with its own view (wire-notes 7.1)."""
        for index, seat in enumerate(game.seats):
            player = seat.player
            if player is not None and player.conn is not None and seat.state is not SeatState.QUIT:
                self.sink.send((player.conn,), GameStateChange(game, index))

    def advance(self, game: Game, now: float, tell: bool = True) -> Outcome | None:
        """Robots play until a connected human is to move (who is then told, with ``tell``), or
        the game has an outcome, returned for the lobby to end the game with."""
        plugin = self.plugin
        while game.state is GameState.PLAYING:
            outcome = plugin.outcome(game.play)
            if outcome is not None:
                return outcome
            seat_index = plugin.to_move(game.play)
            if seat_index is None:  # pragma: no cover - a plugin with no mover has an outcome
                return None
            seat = game.seats[seat_index]
            moves = plugin.legal_moves(game.play, seat_index)
            if seat.player is None or seat.state is SeatState.QUIT:
                self.robot_move(game, seat_index, moves, now)
                continue
            # The turn's ids derive from the game's secret and the moves so far: the same after
            # a restart or a refused commit, so nothing about the turn needs storing.
            game.pending = dict(
                zip(turn_ids(game.secret, len(game.times) - 1, len(moves)), moves, strict=True)
            )
            game.pending_seat = seat_index
            if tell and seat.player.conn is not None:
                self.sink.send((seat.player.conn,), GamePlayerTurn(game, seat_index))
            return None
        return None

    def robot_for(self, game: Game) -> Robot[Any, Any]:
        """The robot of ``game``'s level when one was chosen (an option stored with the game),
        else the server's robot."""
        level = game.options.get("robot_level")
        return self.robot if level is None else level_robot(game.game, level)

    def robot_move(self, game: Game, seat: int, moves: Sequence[Any], now: float) -> None:
        """The robot's choice among ``moves``, the legal moves of ``seat``, played."""
        move = self.robot_for(game).choose(game.play, seat, moves, self.rng)
        self.apply(game, seat, moves.index(move) if self.journal.recording else 0, move, now)

    def apply(self, game: Game, seat: int, choice: int, move: Any, now: float) -> None:
        """Play ``move``, the ``choice``-th legal move of ``seat`` (the stored form of a move)."""
        game.pending.clear()
        game.pending_seat = None
        assert game.rng is not None  # set when the game starts
        game.play = self.plugin.apply(game.play, move, game.rng)
        if self.journal.recording:  # one row: the game's own is written when it changes otherwise
            moves = len(game.times)
            self.journal.add(MoveRow(game.id, moves - 1, seat, MOVE, choice, now))
            game.times.append(now)
            if moves % self.snapshot_every == 0 and self.codec is not None:
                # After the move's row, in the same commit: never ahead of the stored moves.
                self.journal.add(snapshot_row(game, self.codec))
        else:
            game.times.append(now)
        game.touch(now)
        self.announce(game)
