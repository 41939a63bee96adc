"""The interface of a game played under server rules (S9), and what every plugin's adapter shares:
seat numbering, the legal-action table, the replay record (rules.py has the adapters, the
options and the details of actions and views).

A game whose plugin is a StateCodec also gives a snapshot of itself (:meth:`ServerGame.snapshot`:
the plugin's state, the words of its random source and who made the last actions), which the
service keeps in the game's record every ``SNAPSHOT_EVERY`` actions: a restart resumes from it and
replays only the actions after it (:meth:`ServerGame.resume`), so restoring a game costs the same
whatever its length. The actions stay recorded one by one: they are the game's replay."""

from __future__ import annotations

from abc import ABC, abstractmethod
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from random import Random
from typing import Any, Final, Generic, TypeVar

import msgspec

from parlour.games.base import GamePlugin, Robot, StateCodec
from parlour.games.registry import plugin
from parlour.robots.levels import level_robot
from parlour.robots.think import frozen, thawed
from parlour.storage import SNAPSHOT_VERSION

__all__ = ["SNAPSHOT_EVERY", "IllegalAction", "PluginGame", "ServerGame"]

_ENCODE = msgspec.json.Encoder().encode

#: A game's record keeps a snapshot after every this many actions: a restart replays fewer than
#: this many. Encoding one costs about as much as a few actions (tens of microseconds for
#: Apologies), once per this many.
SNAPSHOT_EVERY: Final = 32
#: ``Random.getstate()``'s version of the Mersenne Twister state.
_MT_VERSION: Final = 3


class _Image(msgspec.Struct, array_like=True):
    """A snapshot: its encoding's version (the store's SNAPSHOT_VERSION: the plugins' codecs
    follow it), how many actions it follows, the plugin's encoding of the state, the random
    source (624 words and a position, 4 bytes each, and ``Random.gauss``'s kept variate) and
    the movers of the last ``seats`` actions (for the views' ``recent``)."""

    version: int
    actions: int
    play: bytes
    rng: bytes
    gauss: float | None
    actors: list[int]


_encode_image = msgspec.msgpack.Encoder().encode
_decode_image = msgspec.msgpack.Decoder(_Image).decode

S = TypeVar("S")
M = TypeVar("M")


class IllegalAction(ValueError):
    """The action is not one of the legal actions of the seat to move now."""


class ServerGame(ABC):
    """One live game under server rules; a plain Python object, not thread-safe."""

    rules: str
    seats: int
    seed: int
    #: The options the game was built with, defaults filled in (JSON values: store them as is).
    options: dict[str, Any]
    #: Every action applied so far, in order: with rules, seats, seed and options, the replay.
    actions: list[str]
    #: The level its robots play at (parlour.robots.levels); None: the game's default robot.
    level: str | None = None

    @abstractmethod
    def to_move(self) -> int | None:
        """The local id (1..seats) whose turn it is; None when the game is over."""

    @abstractmethod
    def legal_actions(self, local_id: int) -> list[str]:
        """The actions ``local_id`` may commit now, in a stable order; [] if it is not to move."""

    @abstractmethod
    def illegal(self, action: str) -> str | None:
        """Why ``action`` cannot be played now (IllegalAction's text), or None if it can."""

    @abstractmethod
    def apply(self, action: str) -> None:
        """Play ``action`` for the seat to move; IllegalAction (state untouched) if not legal now."""

    @abstractmethod
    def view(self, local_id: int | None) -> str:
        """JSON text of what ``local_id`` may see; None: a spectator's view (no hidden information)."""

    @abstractmethod
    def outcome(self) -> dict[int, tuple[float, int]] | None:
        """local id -> (score, rank), rank 1 best, ties sharing a rank; None while running."""

    @abstractmethod
    def robot_action(self, local_id: int) -> str:
        """A legal action Parlour's robot chooses for ``local_id``; ValueError if it is not to move.

        The choice depends only on the position (see the module docstring): the game is unchanged.
        """

    @abstractmethod
    def robot_job(self, local_id: int) -> Callable[[], int] | None:
        """For a slow robot (``slow = True``: the hard levels, the searches), its decision for
        ``local_id`` as a job another process can run, on a copy of the position taken now: the
        job returns the index in ``legal_actions(local_id)`` of what ``robot_action`` chooses.
        None when the robot is fast enough to ask at once. ValueError if it is not to move."""

    @abstractmethod
    def remove_seat(self, local_id: int) -> None:
        """Take a seat that left for good out of play (Fish, Tsuro); recorded in ``actions``.

        A no-op when the game is over or the seat is already out. Apologies: ValueError, its
        seats are played by robots instead.
        """

    def snapshot(self) -> bytes | None:
        """The game as it stands, for :meth:`resume`; None when its plugin cannot encode a state."""
        return None

    def resume(self, snapshot: bytes, actions: Sequence[str]) -> int:
        """Take the state ``snapshot`` holds, taken after the first actions of ``actions`` (the
        whole record): how many of them it covers (0: it does not fit, the game is unchanged)."""
        return 0


class PluginGame(ServerGame, Generic[S, M]):
    """What every game shares: seat numbering, the legal-action table, the replay record."""

    def __init__(self, seats: int, seed: int, options: dict[str, Any]) -> None:
        self.seats = seats
        self.seed = seed
        self.options = options
        self.actions = []
        #: Who each entry of ``actions`` belongs to (the mover, or the removed seat): for ``recent``.
        self._actors: list[int] = []
        self._rng = Random(seed)
        self._plugin: GamePlugin[S, M, Any] = plugin(self.rules)
        self._state: S = self._plugin.new_game(seats, self._plugin_options(), self._rng)
        #: The current turn's legal actions by wire form, built once per turn: legal_actions,
        #: apply and robot_action all need it, and Tsuro's first placements are costly to list.
        self._legal: dict[str, M] | None = None

    # -- hooks for each game -------------------------------------------------------------------

    def _plugin_options(self) -> dict[str, Any]:
        """``options`` as the plugin's new_game wants them."""
        return dict(self.options)

    @abstractmethod
    def _seat(self) -> int | None:
        """The plugin seat to move."""

    def _moves(self, seat: int) -> Sequence[M]:
        """The plugin's legal moves of the seat to move, in its order."""
        return self._plugin.legal_moves(self._state, seat)

    @abstractmethod
    def _encode(self, move: M) -> str:
        """A move's wire form: unique among the legal moves of one turn."""

    @abstractmethod
    def _robot(self) -> Robot[S, M]: ...

    @abstractmethod
    def _public(self) -> dict[str, Any]:
        """The view every seat and spectator shares, without ``game``, ``turn`` and ``recent``."""

    def _private(self, seat: int) -> dict[str, Any]:
        """What only ``seat`` may see (added to ``you``)."""
        return {}

    @abstractmethod
    def _standings(self) -> list[tuple[float, tuple[float, ...]]]:
        """Per seat: (score, key); a greater key ranks better, equal keys share a rank."""

    #: Whether the plugin can take a seat out of play (Fish, Tsuro); Apologies' robots play on.
    _removable = False

    def _remove(self, seat: int) -> bool:
        """Take ``seat`` out of play (only when _removable); False when there was nothing to do."""
        raise NotImplementedError

    # -- the public interface ------------------------------------------------------------------

    def to_move(self) -> int | None:
        seat = self._seat()
        return None if seat is None else seat + 1

    def _legal_map(self) -> dict[str, M]:
        if self._legal is None:
            legal: dict[str, M] = {}
            seat = self._seat()
            if seat is not None:
                for move in self._moves(seat):
                    # ADULT Apologies lists one move per copy of a card: the first copy stands
                    # for them all (the games that follow are the same).
                    legal.setdefault(self._encode(move), move)
            self._legal = legal
        return self._legal

    def legal_actions(self, local_id: int) -> list[str]:
        if local_id != self.to_move():
            return []
        return list(self._legal_map())

    def illegal(self, action: str) -> str | None:
        local_id = self.to_move()
        if local_id is None:
            return "the game is over"
        if action not in self._legal_map():
            shown = action if len(action) <= 80 else action[:77] + "..."
            return f"{shown!r} is not a legal action for local id {local_id} now"
        return None

    def apply(self, action: str) -> None:
        problem = self.illegal(action)
        if problem is not None:
            raise IllegalAction(problem)
        local_id = self.to_move()
        assert local_id is not None
        move = self._legal_map()[action]
        self._state = self._plugin.apply(self._state, move, self._rng)
        self._record(action, local_id)

    def _record(self, action: str, local_id: int) -> None:
        self.actions.append(action)
        self._actors.append(local_id)
        self._legal = None

    def robot_action(self, local_id: int) -> str:
        if local_id != self.to_move():
            raise ValueError(f"local id {local_id} is not to move")
        return list(self._legal_map())[self._robot_index(local_id, len(self.actions))]

    def _chosen_robot(self) -> Robot[S, M]:
        return self._robot() if self.level is None else level_robot(self.rules, self.level)

    def _robot_index(self, local_id: int, made: int) -> int:
        """The robot's choice for ``local_id``, ``made`` actions into the game: an index in the
        legal actions."""
        legal = self._legal_map()
        # Derived from the position alone (not from how often robots were asked), so a replayed
        # game makes the same choices; a string seed is hashed with SHA-512, the same everywhere.
        rng = Random(f"robot:{self.rules}:{self.seed}:{made}")
        choice = self._chosen_robot().choose(self._state, local_id - 1, list(legal.values()), rng)
        return list(legal).index(self._encode(choice))

    def robot_job(self, local_id: int) -> Callable[[], int] | None:
        if local_id != self.to_move():
            raise ValueError(f"local id {local_id} is not to move")
        if not getattr(self._chosen_robot(), "slow", False):
            return None
        codec = self._plugin if isinstance(self._plugin, StateCodec) else None
        # A compiled position (Apologies) does not pickle: it travels as its plugin encodes it.
        state = frozen(self._state) if codec is None else codec.encode_state(self._state)
        position = (self.seats, self.seed, self.options, self.level, state, len(self.actions))
        return partial(_decide, type(self), position, local_id)

    def _thaw(self, state: bytes) -> None:
        """Stand at the position ``robot_job`` took (in the process that runs the job)."""
        codec = self._plugin if isinstance(self._plugin, StateCodec) else None
        self._state = thawed(state) if codec is None else codec.decode_state(state)
        self._legal = None

    def view(self, local_id: int | None) -> str:
        body: dict[str, Any] = {"game": self.rules, "turn": self.to_move(), **self._public()}
        body["recent"] = [
            {"id": actor, "action": action}
            for actor, action in zip(self._actors[-self.seats :], self.actions[-self.seats :], strict=True)
        ]
        if local_id is not None:
            self._check(local_id)
            body["you"] = {"id": local_id, **self._private(local_id - 1)}
        return _ENCODE(body).decode()

    def outcome(self) -> dict[int, tuple[float, int]] | None:
        if self._seat() is not None:
            return None
        standings = self._standings()
        keys = [key for _, key in standings]
        return {
            seat + 1: (score, 1 + sum(1 for other in keys if other > key))
            for seat, (score, key) in enumerate(standings)
        }

    def remove_seat(self, local_id: int) -> None:
        self._check(local_id)
        if not self._removable:
            raise ValueError(f"{self.rules} seats that leave are played by robots; they cannot be removed")
        if self._seat() is not None and self._remove(local_id - 1):
            self._record(f"remove {local_id}", local_id)

    def snapshot(self) -> bytes | None:
        codec = self._plugin
        if not isinstance(codec, StateCodec):
            return None
        _, words, gauss = self._rng.getstate()
        return _encode_image(
            _Image(
                SNAPSHOT_VERSION,
                len(self.actions),
                codec.encode_state(self._state),
                array("I", words).tobytes(),
                gauss,
                self._actors[-self.seats :],
            )
        )

    def resume(self, snapshot: bytes, actions: Sequence[str]) -> int:
        codec = self._plugin
        if not isinstance(codec, StateCodec):
            return 0
        try:
            image = _decode_image(snapshot)
        except msgspec.DecodeError:
            return 0
        # Another build's encoding, or a record cut shorter than its snapshot: replay it all.
        if image.version != SNAPSHOT_VERSION or not 0 < image.actions <= len(actions):
            return 0
        rng = Random.__new__(Random)  # not Random(): seeding it from the system would be wasted
        rng.setstate((_MT_VERSION, tuple(array("I", image.rng)), image.gauss))
        self._state = codec.decode_state(image.play)
        self._rng = rng
        self.actions = list(actions[: image.actions])
        # Only the last ``seats`` movers are ever shown; the older ones are not known here.
        self._actors = image.actors
        self._legal = None
        return image.actions

    def _check(self, local_id: int) -> None:
        if not 1 <= local_id <= self.seats:
            raise ValueError(f"local id {local_id} is not a seat of this game (1..{self.seats})")


def _decide(
    kind: type[PluginGame[Any, Any]],
    position: tuple[int, int, dict[str, Any], str | None, bytes, int],
    local_id: int,
) -> int:
    """A robot_job's work, in the robots' process: the game rebuilt at the position it was asked
    for, then the same choice robot_action makes there."""
    seats, seed, options, level, state, made = position
    game = kind(seats, seed, options)
    game.level = level
    game._thaw(state)
    return game._robot_index(local_id, made)
