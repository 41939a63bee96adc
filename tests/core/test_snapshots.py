"""Snapshots of live games (core/durable.py): a game restored from its latest snapshot and the
moves after it is the game restored from every move, and goes on the same."""

from __future__ import annotations

from array import array

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parlour.core.durable import _from_snapshot, codec_of, snapshot_row
from parlour.core.records import GameState
from parlour.games.apologies.model import Mode
from parlour.games.registry import plugin
from parlour.storage import SNAPSHOT_VERSION, GameSnapshotRow, MoveRow
from tests.core.snapshots import continue_both, played, restored, rows_of, same_game


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    seats=st.integers(2, 4),
    mode=st.sampled_from(Mode),
    stop=st.integers(0, 160),
    every=st.integers(1, 40),
)
def test_a_game_restored_from_its_snapshot_is_the_game_restored_from_every_move(
    seed: int, seats: int, mode: Mode, stop: int, every: int
) -> None:
    _, game, records = played(seed, seats, mode, stop, every)
    moves = [r for r in records if isinstance(r, MoveRow)]
    snapshots = [r for r in records if isinstance(r, GameSnapshotRow)]
    # One snapshot every ``every`` moves, each after the move it follows.
    assert [s.moves for s in snapshots] == [n for n in range(1, len(moves) + 1) if n % every == 0]
    if game.state is not GameState.PLAYING:
        return  # over before the stop: nothing to restore
    from_snapshot = restored(rows_of(records, latest_snapshot=True), seed)
    from_moves = restored(rows_of(records, latest_snapshot=False), seed)
    same_game(from_snapshot.games[game.id], from_moves.games[game.id])
    # The same random draws to come, the same move ids: the two go on as one game.
    continue_both(from_snapshot, from_moves, game.id, 40, seed)


def test_a_restore_given_every_move_starts_from_the_snapshot_all_the_same() -> None:
    _, game, records = played(11, 4, Mode.ADULT, 64, every=8)
    assert game.state is GameState.PLAYING
    moves = [r for r in records if isinstance(r, MoveRow)]
    latest = [r for r in records if isinstance(r, GameSnapshotRow)][-1]
    assert latest.version == SNAPSHOT_VERSION and 0 < latest.moves <= len(moves)
    snapshot = rows_of(records, latest_snapshot=True)
    # Every move (as load_game reads them), not only those after the snapshot: the ones it holds
    # are skipped, not played twice.
    snapshot.moves[game.id] = moves
    after = restored(snapshot, 11)
    same_game(after.games[game.id], restored(rows_of(records, latest_snapshot=False), 11).games[game.id])


def test_a_snapshot_that_does_not_hold_its_moves_is_refused() -> None:
    _, game, records = played(3, 2, Mode.STANDARD, 20, every=10)
    latest = [r for r in records if isinstance(r, GameSnapshotRow)][-1]
    snapshot = rows_of(records, latest_snapshot=True)
    snapshot.states[game.id] = GameSnapshotRow(game.id, latest.moves + 1, latest.version, latest.doc)
    with pytest.raises(ValueError, match="does not hold"):
        restored(snapshot, 3)


def test_the_random_source_comes_back_with_a_pending_normal_variate() -> None:
    _, game, _ = played(5, 3, Mode.STANDARD, 10, every=1000)
    codec = codec_of(plugin("apologies"))
    assert game.rng is not None and codec is not None
    game.rng.gauss(0.0, 1.0)  # keeps its pair's second value for the next call
    _, copy, _ = _from_snapshot(snapshot_row(game, codec), codec)
    assert copy.getstate() == game.rng.getstate()
    assert copy.gauss(0.0, 1.0) == game.rng.gauss(0.0, 1.0)


def test_the_random_source_is_stored_as_the_snapshots_of_earlier_builds_hold_it() -> None:
    # Earlier builds wrote the words with array("I"): their snapshots must read back the same.
    _, game, _ = played(5, 3, Mode.STANDARD, 10, every=1000)
    codec = codec_of(plugin("apologies"))
    assert game.rng is not None and codec is not None
    _, words, _ = game.rng.getstate()
    image = msgspec.msgpack.decode(snapshot_row(game, codec).doc)
    assert image[1] == array("I", words).tobytes()
