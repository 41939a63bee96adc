"""An Apologies game state as bytes and back (msgpack, through msgspec), for the snapshots a
live game keeps in the store (core/durable.py): decoding gives the same state, history included,
so that the game goes on from it exactly as from the state it was encoded from.

A game's history only grows, by an entry a move, and a live game is snapshotted every 64 moves:
each state's history is encoded once, entry by entry as they come, and kept with the state (its
``memo``), so that a snapshot's cost does not grow with the game's length. The bytes are the
same as encoding the whole history at once.
"""

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


class _Encoding(msgspec.Struct, array_like=True):
    """_Stored as encode_state writes it: the same fields in the same order, the history
    encoded already (a msgpack array)."""

    mode: Mode
    colors: tuple[Color, ...]
    pawns: list[list[int]]
    hands: list[list[Card]]
    draw_pile: list[Card]
    discard: list[Card]
    drawn_card: Card | None
    to_move: Color | None
    turns: list[int]
    history: msgspec.Raw
    winner: Color | None


class _History:
    """The msgpack of the first ``count`` entries of the list ``entries`` (without the array's
    header), the last of them ``last``."""

    __slots__ = ("count", "data", "entries", "last")

    def __init__(self, entries: list[HistoryEntry]) -> None:
        self.entries = entries
        self.count = 0
        self.data = b""
        self.last: HistoryEntry | None = None


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(_Stored).decode


def _array_header(count: int) -> bytes:
    """A msgpack array's header (fixarray, array 16 or array 32), as msgspec writes it."""
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def _encoded_history(state: GameState) -> msgspec.Raw:
    """``state.history`` as a msgpack array, encoding only the entries added since the last call."""
    entries = state.history
    count = len(entries)
    known = state.memo
    # The engine only appends: anything else (another list, fewer entries, an entry replaced)
    # starts the encoding over.
    if (
        not isinstance(known, _History)
        or known.entries is not entries
        or known.count > count
        or (known.count > 0 and entries[known.count - 1] is not known.last)
    ):
        known = _History(entries)
        state.memo = known
    if known.count < count:
        added = _encode(entries[known.count :])
        known.data += added[len(_array_header(count - known.count)) :]
        known.count = count
        known.last = entries[-1]
    return msgspec.Raw(_array_header(count) + known.data)


def encode_state(state: GameState) -> bytes:
    return _encode(
        _Encoding(
            state.mode,
            state.colors,
            state.pawns,
            state.hands,
            state.draw_pile,
            state.discard,
            state.drawn_card,
            state.to_move,
            state.turns,
            _encoded_history(state),
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
