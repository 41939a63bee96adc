"""SQLite's writer process writes each row in a statement of its own (storage/writes.py,
``insert_rows``), the server's own connection writes them in multi-row statements: both must
store exactly the same rows, and a commit that fails half-way must store nothing either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from parlour.storage import PlayerGone
from parlour.storage.base import StoreFailure
from parlour.storage.pipe import _open
from parlour.storage.sqlite import SQLiteStore
from tests.storage.rows import (
    finished_game,
    game,
    game_snapshot,
    move_rows,
    player,
    populate,
    populate_async,
    populate_social,
)


def test_the_writer_process_writes_one_row_a_statement_and_the_server_groups_them(tmp_path: Path) -> None:
    server = SQLiteStore(tmp_path / "p.db")
    writer = _open(str(tmp_path / "p.db"), "normal")
    try:
        assert server.group_rows and not writer.group_rows
    finally:
        writer.close()
        server.close()


def test_grouped_and_one_row_statements_store_the_same_rows(tmp_path: Path) -> None:
    live = game(20, state="PLAYING", moves=3)
    batches = [
        [*populate(games=7, moves=5), game_snapshot("game-0002", 3), *populate_async(), *populate_social()],
        # Upserts of rows already stored (a player's registration is kept), deletes, a game that
        # ends (its snapshot goes, its seats are written), and more moves than one grouped
        # statement holds.
        [
            player(1, "renamed"),
            PlayerGone("player-2"),
            live,
            *move_rows(live.id, 3),
            game_snapshot(live.id, 3),
            finished_game(2, finished=950.0, moves=5),
            *[move for number in range(30, 40) for move in move_rows(game(number).id, 30)],
            *[game(number, moves=30) for number in range(30, 40)],
        ],
    ]
    exports = []
    for grouped in (True, False):
        store = SQLiteStore(tmp_path / f"grouped-{grouped}.db", group_rows=grouped)
        try:
            for batch in batches:
                store.commit(batch)
            exports.append(list(store.export()))
            assert store.check()["games_with_missing_moves"] == 0
        finally:
            store.close()
    assert exports[0] == exports[1]
    assert sum(1 for kind, _ in exports[1] if kind == "move") == 25 + 3 + 10 * 30


@pytest.mark.parametrize("grouped", [True, False])
def test_a_commit_that_fails_on_its_last_row_stores_none_of_its_rows(tmp_path: Path, grouped: bool) -> None:
    store = SQLiteStore(tmp_path / "p.db", group_rows=grouped)
    try:
        row = game(1, moves=4)
        store.commit([row, *move_rows(row.id, 2)])
        before = list(store.export())
        again = move_rows(row.id, 2)[1]  # a move already stored: its game's moves end after it
        with pytest.raises(StoreFailure, match="must start where the stored moves of its game end"):
            store.commit([player(5), game(2), *move_rows(row.id, 4, start=2), again])
        assert list(store.export()) == before
    finally:
        store.close()
