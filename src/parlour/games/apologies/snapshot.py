"""An Apologies game state as bytes and back (msgpack, through msgspec), for the snapshots a
live game keeps in the store (core/durable.py): decoding gives the same state, history included,
so that the game goes on from it exactly as from the state it was encoded from."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import msgspec

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import Card, Color, HistoryEntry, Mode

__all__ = ["decode_state", "encode_state"]


#: A history entry as stored. Not the HistoryEntry named tuple itself: compiled by mypyc (setup.py),
#: its annotations no longer tell msgspec the fields' types.
_Entry = tuple[str, Color | None, Card | None]
#: A HistoryEntry of a stored entry, made as the engine makes its moves: ``tuple.__new__``, not
#: the named tuple's own Python-level ``__new__``.
_history_entry = partial(tuple.__new__, HistoryEntry)


class _Stored(msgspec.Struct, array_like=True):
    """The fields of GameState but its square cache (which the constructor derives), in order;
    enums as their values, history entries as arrays."""

    mode: Mode
    colors: tuple[Color, ...]
    pawns: list[list[int]]
    hands: list[list[Card]]
    draw_pile: list[Card]
    discard: list[Card]
    drawn_card: Card | None
    to_move: Color | None
    turns: list[int]
    #: A Sequence (decoded as a list): the engine's own entries are encoded as they are.
    history: Sequence[_Entry]
    winner: Color | None


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(_Stored).decode


def encode_state(state: GameState) -> bytes:
    return _encode(
        _Stored(
            state.mode,
            state.colors,
            state.pawns,
            state.hands,
            state.draw_pile,
            state.discard,
            state.drawn_card,
            state.to_move,
            state.turns,
            state.history,
            state.winner,
        )
    )


def decode_state(data: bytes) -> GameState:
    stored = _decode(data)
    return GameState(
        stored.mode,
        stored.colors,
        stored.pawns,
        stored.hands,
        stored.draw_pile,
        stored.discard,
        stored.drawn_card,
        stored.to_move,
        stored.turns,
        list(map(_history_entry, stored.history)),
        stored.winner,
    )
