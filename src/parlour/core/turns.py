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
from functools import partial
from random import Random
from typing import Any

from parlour.core.durable import SNAPSHOT_EVERY, codec_of, snapshot_row
from parlour.core.effects import Think
from parlour.core.events import GamePlayerTurn, GameStateChange, Sink
from parlour.core.ids import turn_ids
from parlour.core.journal import Journal
from parlour.core.records import Game, GameState, PlayerType, Seat, SeatState
from parlour.games.base import GamePlugin, Outcome, Robot, StateCodec
from parlour.robots.levels import level_robot
from parlour.robots.think import decide, decide_encoded
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
        #: Whether slow robots (``slow = True``: the hard levels) decide away from the event
        #: loop: Think effects, answered through ``thought``. Set by a service whose transport
        #: runs them (parlour.transport.runtime); otherwise every robot moves at once.
        self.offload = False
        self.thinks: list[Think] = []
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
        """GAME_STATE_CHANGE to every seated human, each with its own view (one per player, even
        when players share a connection)."""
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
                robot = self.robot_for(game)
                if self.offload and getattr(robot, "slow", False):
                    if game.thinking is None:
                        self._think(game, seat_index, robot, moves)
                    return None  # the move comes back as an input of its own (thought)
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

    def _think(self, game: Game, seat: int, robot: Robot[Any, Any], moves: Sequence[Any]) -> None:
        """Ask for the robot's decision away from the event loop (a Think effect), on a copy of
        the position and with a random source of its own, so that nothing it reads changes."""
        token = (game.id, len(game.times))
        game.thinking = token
        # Picklable: the transport may run it in another process (and does: a thread would
        # still share the interpreter with the event loop).
        seed = self.rng.getrandbits(64)
        if self.codec is not None:  # the position as bytes: compiled states do not pickle
            job = partial(
                decide_encoded, game.game, robot.name, self.codec.encode_state(game.play), seat, seed
            )
        else:
            job = partial(decide, game.game, robot.name, game.play.copy(), seat, list(moves), seed)
        self.thinks.append(Think(token, job))

    def thought(self, game: Game, token: tuple[str, int], choice: int | None, now: float) -> bool:
        """The decision asked for with ``token`` is back: played if the game still waits for it
        (the robot's own choice, or at once by the server's robot if the job failed). False
        when it came too late (the game ended or moved on): nothing is played."""
        if game.thinking != token or game.state is not GameState.PLAYING:
            return False
        game.thinking = None
        seat = self.plugin.to_move(game.play)
        assert seat is not None
        moves = self.plugin.legal_moves(game.play, seat)
        if choice is None or not 0 <= choice < len(moves):
            self.robot_move(game, seat, moves, now)
        else:
            self.apply(game, seat, choice if self.journal.recording else 0, moves[choice], now)
        return True

    def take_thinks(self) -> list[Think]:
        thinks, self.thinks = self.thinks, []
        return thinks

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
