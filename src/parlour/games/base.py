"""The small interface every game plugin meets (DESIGN.md, "Game plugins").

A plugin is a stateless object whose methods are pure functions of a game state and an
injected random source. The core never looks inside a state or a move: it asks the plugin
whose turn it is, which moves are legal, and what the outcome is. Protocol adapters, which
are game-specific, turn states, views and moves into their wire forms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["GamePlugin", "Outcome", "Robot", "Seat", "StateCodec"]

#: Seats are numbered 0..n-1 in the order the players were seated.
Seat = int

S = TypeVar("S")
M = TypeVar("M")
V = TypeVar("V", covariant=True)
S_in = TypeVar("S_in", contravariant=True)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended: the winning seats (several on a tie) and a short reason."""

    winners: tuple[Seat, ...]
    #: How many moves the (first) winner played, for announcements like "won after 32 turns".
    turns: int = 0
    reason: str = "completed"


class GamePlugin(Protocol[S, M, V]):
    """Rules of one game. Every method is pure given its arguments (the rng is injected)."""

    #: Registry key, also used in logs and on the command line ("apologies", "fish", "tsuro").
    name: str
    min_seats: int
    max_seats: int

    def new_game(self, seats: int, options: Mapping[str, Any], rng: Random) -> S:
        """A fresh game for ``seats`` players; ``options`` are game-specific (e.g. mode)."""
        ...

    def to_move(self, state: S) -> Seat | None:
        """The seat that must act now, or None when the game is over."""
        ...

    def legal_moves(self, state: S, seat: Seat) -> Sequence[M]:
        """Every legal move of ``seat`` now, in a stable order (empty if it is not to move)."""
        ...

    def apply(self, state: S, move: M, rng: Random) -> S:
        """The state after ``move`` (which must be legal). May reuse ``state``'s storage."""
        ...

    def view(self, state: S, seat: Seat) -> V:
        """What ``seat`` may see of the state: hidden information removed."""
        ...

    def outcome(self, state: S) -> Outcome | None:
        """None while the game goes on."""
        ...

    def remove_seat(self, state: S, seat: Seat) -> S:
        """Take a seat out of play (a kicked player in Fish or Tsuro).

        Games whose abandoned seats are played by robots instead (Apologies) never call this.
        """
        ...

    def public_json(self, state: S, move: M | None) -> dict[str, Any]:
        """What anyone may see of ``state`` as JSON (hidden information left out), with
        ``move``, the move that led to it, if given: the view of the game records (replays)."""
        ...


@runtime_checkable
class StateCodec(Protocol[S]):
    """What a plugin adds for its live games to be snapshotted in the store (core/durable.py),
    so that a restart replays only the moves after the snapshot: a state as bytes and back.
    Decoding gives a state the game goes on from exactly as from the one encoded."""

    def encode_state(self, state: S) -> bytes: ...

    def decode_state(self, data: bytes) -> S: ...


class Robot(Protocol[S_in, M]):
    """A move chooser. It may only use what ``seat`` is allowed to see of ``state``."""

    name: str

    def choose(self, state: S_in, seat: Seat, moves: Sequence[M], rng: Random) -> M: ...
