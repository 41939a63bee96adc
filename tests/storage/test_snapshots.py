"""Game snapshots through a store (SQLite and PostgreSQL): written in the commits of the moves
they follow, read back by load_live with only the later moves, forgotten when the game ends; the
moves all stay, the game's replay."""

from __future__ import annotations

from parlour.core.records import GameState
from parlour.games.apologies.model import Mode
from parlour.storage import GameSnapshotRow, MoveRow
from parlour.storage.sql import SQLStore
from tests.core.snapshots import T0, played, restored, rows_of, same_game


def test_a_live_game_restarts_from_its_stored_snapshot_as_from_every_move(store: SQLStore) -> None:
    _, game, records = played(21, 4, Mode.STANDARD, 90, every=16, commit=store.commit)
    assert game.state is GameState.PLAYING
    stored = store.load_game(game.id)
    assert stored is not None
    moves = stored[1]
    assert moves == [r for r in records if isinstance(r, MoveRow)]  # the replay, whole
    store.heartbeat(T0)
    live = store.load_live()
    # The latest snapshot, as written, and only the moves after it.
    latest = [r for r in records if isinstance(r, GameSnapshotRow)][-1]
    assert latest.moves == len(moves) // 16 * 16
    assert live.states == {game.id: latest}
    assert live.moves[game.id] == moves[latest.moves :]
    assert store.check()["ok"] is True
    after = restored(live, 21)
    same_game(after.games[game.id], restored(rows_of(records, latest_snapshot=False), 21).games[game.id])


def test_an_ended_game_loses_its_snapshot_and_keeps_its_moves(store: SQLStore) -> None:
    lobby, game, records = played(8, 2, Mode.STANDARD, 40, every=8, commit=store.commit)
    assert store.load_live().states.keys() == {game.id}
    # Its human quits, as advertiser: the game is cancelled (its row says so) in the next commit.
    player = game.seats[0].player
    assert player is not None
    lobby.unregister(player, 2e9)
    store.commit(lobby.journal.take())
    assert store.load_live().states == {}
    assert store.check()["counts"]["game_snapshots"] == 0
    stored = store.load_game(game.id)
    assert stored is not None
    assert stored[0].state == "CANCELLED"
    assert stored[1] == [r for r in records if isinstance(r, MoveRow)]


def test_a_snapshot_and_the_end_of_its_game_in_one_commit_leave_no_snapshot(store: SQLStore) -> None:
    lobby, game, records = played(8, 2, Mode.STANDARD, 40, every=8)
    player = game.seats[0].player
    assert player is not None
    lobby.unregister(player, 2e9)
    store.commit([*records, *lobby.journal.take()])
    assert any(isinstance(r, GameSnapshotRow) for r in records)
    assert store.check()["counts"]["game_snapshots"] == 0
