"""Runs of moves (schema version 11, storage/runs.py): a commit's moves of a game in one row of
``move_runs``, read with the rows ``moves`` holds from before version 11, on both backends."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
import pytest

from parlour.storage import MoveRow, StoreFailure
from parlour.storage.runs import RUN_LIMIT, pack, unpack
from parlour.storage.sql import SQLStore
from parlour.storage.sqlite import SQLiteStore
from parlour.storage.tables import MOVE_RUNS, MOVES
from parlour.storage.writes import Cursor
from tests.storage.conftest import open_at
from tests.storage.rows import finished_game, game, game_snapshot, move_rows

REFUSED = "must start where the stored moves of its game end"


def _old_rows(store: SQLStore, moves: Sequence[MoveRow]) -> None:
    """``moves`` as a build before version 11 stored them, one row each in ``moves``."""
    rows = [msgspec.structs.astuple(move) for move in moves]
    store._transaction(lambda cur: cur.executemany(f"{MOVES.insert}(?, ?, ?, ?, ?, ?)", rows))


def _raw_runs(store: SQLStore, rows: list[tuple[str, int, int, bytes]]) -> None:
    """Rows of ``move_runs`` as they are, past the trigger that keeps a game's runs in order
    (dropped, then made again in the same transaction: PostgreSQL's tests share one schema):
    what only a damaged store or a bug could hold."""
    if isinstance(store, SQLiteStore):
        drop = "DROP TRIGGER move_runs_follow"
        (create,) = store._read("SELECT sql FROM sqlite_master WHERE name = 'move_runs_follow'")[0]
    else:
        drop = "DROP TRIGGER move_runs_follow ON move_runs"
        create = (
            "CREATE TRIGGER move_runs_follow BEFORE INSERT ON move_runs "
            "FOR EACH ROW EXECUTE FUNCTION move_runs_follow()"
        )

    def work(cur: Cursor) -> None:
        cur.execute(drop)
        cur.executemany(f"{MOVE_RUNS.insert}(?, ?, ?, ?)", rows)
        cur.execute(create)

    store._transaction(work)


def _runs(store: SQLStore, game_id: str) -> list[tuple[int, int]]:
    rows = store._read("SELECT seq, count FROM move_runs WHERE game_id = ? ORDER BY seq", (game_id,))
    return [(int(seq), int(count)) for seq, count in rows]


def _half_old_half_runs(store: SQLStore) -> list[MoveRow]:
    """A live game migrated mid-way: moves 0-5 in rows of their own, then 6-13 in runs of
    commits of four moves, as the server writes them."""
    moves = move_rows("game-0001", 14)
    store.commit([game(1, moves=6)])
    _old_rows(store, moves[:6])
    store.commit([*moves[6:10], game_snapshot("game-0001", 8)])
    store.commit(moves[10:14])
    return moves


def test_pack_makes_a_run_of_each_games_consecutive_moves_in_order() -> None:
    a, b = move_rows("a", 2 * RUN_LIMIT + 3), move_rows("b", 3)
    values = [msgspec.structs.astuple(m) for m in (a[0], b[2], *a[1:], b[0], b[1])]
    runs = pack(values)
    # Game a's first, as its moves came first; b's sorted; a's split at RUN_LIMIT.
    assert [(game_id, seq, count) for game_id, seq, count, _ in runs] == [
        ("a", 0, RUN_LIMIT),
        ("a", RUN_LIMIT, RUN_LIMIT),
        ("a", 2 * RUN_LIMIT, 3),
        ("b", 0, 3),
    ]
    assert [m for game_id, seq, _, doc in runs for m in unpack(game_id, seq, doc)] == [*a, *b]
    # A move twice, or a gap, starts a new run (which the store refuses: below).
    twice = pack([msgspec.structs.astuple(m) for m in (*b, b[1])])
    assert [(seq, count) for _, seq, count, _ in twice] == [(0, 2), (1, 2)]
    gap = pack([msgspec.structs.astuple(m) for m in (b[0], b[2])])
    assert [(seq, count) for _, seq, count, _ in gap] == [(0, 1), (2, 1)]


def test_a_game_whose_moves_span_old_rows_and_runs_is_read_whole(store: SQLStore) -> None:
    moves = _half_old_half_runs(store)
    assert _runs(store, "game-0001") == [(6, 4), (10, 4)]
    assert store.load_game("game-0001") == (game(1, moves=6), moves)
    # From the snapshot after 8 moves: the middle of a run.
    live = store.load_live()
    assert live.moves["game-0001"] == moves[8:]
    # From a snapshot among the old rows: the rest of them, then every run.
    store.commit([game_snapshot("game-0001", 3)])
    assert store.load_live().moves["game-0001"] == moves[3:]
    report = store.check()
    assert report["ok"] is True
    assert (report["counts"]["moves"], report["counts"]["move_runs"]) == (14, 2)


def test_a_long_commit_is_split_into_runs_and_read_from_any_snapshot(store: SQLStore) -> None:
    moves = move_rows("game-0001", 2 * RUN_LIMIT + 10)
    store.commit([game(1, moves=len(moves)), *moves])
    assert _runs(store, "game-0001") == [(0, RUN_LIMIT), (RUN_LIMIT, RUN_LIMIT), (2 * RUN_LIMIT, 10)]
    for first in (0, 1, RUN_LIMIT - 1, RUN_LIMIT, RUN_LIMIT + 1, 2 * RUN_LIMIT + 9, len(moves)):
        store.commit([game_snapshot("game-0001", first)])
        assert store.load_live().moves["game-0001"] == moves[first:], first


@pytest.mark.parametrize(
    "again",
    [
        lambda moves: [moves[3]],  # a move in the old rows
        lambda moves: [moves[7]],  # a move inside a run
        lambda moves: [moves[10], *move_rows("game-0001", 16, start=14)],  # the last run's first
        lambda moves: move_rows("game-0001", 17, start=15),  # a gap: move 14 never stored
    ],
    ids=["old row", "inside a run", "overlapping the last run", "gap"],
)
def test_a_move_stored_twice_or_out_of_order_fails_its_whole_commit(
    store: SQLStore, again: Callable[[list[MoveRow]], list[MoveRow]]
) -> None:
    moves = _half_old_half_runs(store)
    before = list(store.export())
    with pytest.raises(StoreFailure, match=REFUSED):
        store.commit([game(2), *move_rows("game-0002", 3), *again(moves)])
    assert list(store.export()) == before
    # The next moves in order are stored.
    store.commit(move_rows("game-0001", 16, start=14))
    assert store.load_game("game-0001") == (game(1, moves=6), move_rows("game-0001", 16))


def test_check_finds_runs_that_overlap_leave_gaps_or_miscount(store: SQLStore) -> None:
    for number in (1, 2, 3, 4, 5):
        store.commit([game(number, moves=8), *move_rows(f"game-{number:04}", 4)])
    doc = {m.seq: pack([msgspec.structs.astuple(m)])[0][3] for m in move_rows("x", 8)}
    twice = pack([msgspec.structs.astuple(m) for m in move_rows("game-0001", 6, start=2)])[0]
    four = pack([msgspec.structs.astuple(m) for m in move_rows("game-0004", 8, start=4)])[0]
    _raw_runs(
        store,
        [
            twice,  # moves 2-5 again: 4 + 4 moves in all, but only 0-5
            ("game-0002", 5, 1, doc[5]),  # move 4 missing (with 4 and 7 missing: 5 of 8)
            ("game-0002", 6, 1, doc[6]),
            ("game-0002", 7, 1, doc[7]),
            ("game-0003", 4, 3, doc[4]),  # says three moves, holds one
            ("game-0003", 7, 1, doc[7]),
            four,  # as it should be
        ],
    )
    store.commit(move_rows("game-0005", 8, start=4))  # as it should be too
    report = store.check()
    assert report["ok"] is False
    assert report["games_with_missing_moves"] == 3
    assert report["integrity"] == ["ok"]
    # The trigger is back: a run out of order is refused again.
    with pytest.raises(StoreFailure, match=REFUSED):
        store.commit(move_rows("game-0005", 10, start=9))


def test_a_snapshot_ahead_of_old_rows_and_runs_together_is_found(store: SQLStore) -> None:
    _half_old_half_runs(store)
    store.commit([game_snapshot("game-0001", 14)])
    assert store.check()["snapshots_ahead_of_moves"] == 0
    store.commit([game_snapshot("game-0001", 15)])
    assert store.check()["snapshots_ahead_of_moves"] == 1


def test_purge_forgets_old_rows_and_runs_of_its_games(store: SQLStore) -> None:
    moves = _half_old_half_runs(store)
    done = finished_game(2, finished=100.0, moves=10)
    store.commit([done])
    _old_rows(store, move_rows(done.id, 4))
    store.commit(move_rows(done.id, 10, start=4))
    assert store.purge(finished_before=500.0) == 1
    assert store.load_game(done.id) is None
    report = store.check()
    assert report["ok"] is True
    assert (report["counts"]["moves"], report["counts"]["move_runs"]) == (len(moves), 2)
    assert store._read("SELECT COUNT(*) FROM moves WHERE game_id = ?", (done.id,)) == [(0,)]


def test_an_export_of_old_rows_and_runs_imports_as_runs_and_exports_the_same(
    store: SQLStore, new_location: Callable[[], str]
) -> None:
    moves = _half_old_half_runs(store)
    exported = list(store.export())
    # One "move" a move, whichever table holds it, in order: the export of any version.
    assert [fields for kind, fields in exported if kind == "move"] == [msgspec.to_builtins(m) for m in moves]
    other = open_at(new_location())
    try:
        assert other.import_rows(exported)["move"] == len(moves)
        assert list(other.export()) == exported
        assert other.load_game("game-0001") == (game(1, moves=6), moves)
        # All in runs now; the live game reads from its snapshot as before.
        assert other._read("SELECT COUNT(*) FROM moves") == [(0,)]
        assert _runs(other, "game-0001") == [(0, len(moves))]
        assert other.load_live().moves["game-0001"] == moves[8:]
        assert other.check()["ok"] is True
    finally:
        other.close()
