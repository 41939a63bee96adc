"""Runs of moves (schema version 11): the moves of one game in one commit, stored as one row of
``move_runs`` (its game, its first move's number, how many moves, and the moves packed), rather
than a row each in ``moves``.

Why: the key's index of one row a move was most of what a commit wrote. Each game in progress
appends at the end of its own range of that index, so a commit dirtied an index leaf (and split
it again and again) for every game it touched: about two 4 KiB pages of WAL a game for four moves
of 30 bytes. A row a game and commit has a quarter of the index entries and rows
(docs/performance.md, "Where the writer's time still goes").

The core still commits one ``MoveRow`` a move; the packing is the store's (storage/writes.py
packs a commit's moves, the readers unpack them), and every reader reads the rows ``moves``
still holds from before version 11 with the runs: those come first in a game (a run starts
where the game's stored moves end: the trigger of migrations.py, which refuses a move stored
twice now that the key holds only each run's first move).

A run's ``doc`` is msgpack: an array of ``[seat, kind, choice, at]``, one a move, in order.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from parlour.storage.migrations import RUN_LIMIT
from parlour.storage.records import MoveRow

__all__ = ["RUN_LIMIT", "count", "pack", "unpack"]

_encode = msgspec.msgpack.Encoder().encode
#: A move's number among its values (game_id, seq, ...): the key packing sorts by.
_seq = operator.itemgetter(1)
_decode = msgspec.msgpack.Decoder(list[tuple[int, str, int, float]]).decode


def pack(moves: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of ``move_runs`` (game_id, seq, count, doc) holding ``moves``, the column values
    of MoveRows (game_id, seq, seat, kind, choice, at) in any order: each game's moves in order
    of their numbers, a run for each stretch of consecutive numbers, at most RUN_LIMIT each. A
    number twice, or a gap, starts a new run, which the store's trigger then refuses."""
    games: dict[Any, list[tuple[Any, ...]]] = {}
    for move in moves:
        found = games.get(move[0])
        if found is None:
            games[move[0]] = [move]
        else:
            found.append(move)
    runs: list[tuple[Any, ...]] = []
    for game_id, rows in games.items():
        if len(rows) > 1:
            rows.sort(key=_seq)
        first = rows[0][1]
        if rows[-1][1] - first == len(rows) - 1 and len(rows) <= RUN_LIMIT:
            # The usual commit: the game's moves consecutive (sorted numbers spanning one less
            # than their count: no number twice, no gap), one run.
            runs.append((game_id, first, len(rows), _encode([row[2:] for row in rows])))
            continue
        start = 0
        for index in range(1, len(rows) + 1):
            if index < len(rows) and rows[index][1] == first + index - start and index - start < RUN_LIMIT:
                continue
            runs.append((game_id, first, index - start, _encode([row[2:] for row in rows[start:index]])))
            if index < len(rows):
                start, first = index, rows[index][1]
    return runs


def unpack(game_id: str, seq: int, doc: bytes, after: int = 0) -> Iterable[MoveRow]:
    """The moves of the run of ``game_id`` starting at ``seq``, from move ``after`` on."""
    return [
        MoveRow(game_id, seq + index, seat, kind, choice, at)
        for index, (seat, kind, choice, at) in enumerate(_decode(doc))
        if seq + index >= after
    ]


def count(doc: bytes) -> int:
    """How many moves a run's ``doc`` holds (``parlour db check`` compares it with the row's)."""
    return len(_decode(doc))
