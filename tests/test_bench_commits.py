"""bench/commits.py on a small seeded slice: its commits are valid rows for the store (games
started, moved, snapshotted, finished and replaced), stored alike by both ways of writing them
and in both layouts of moves (runs, and a row a move as before schema version 11), and its WAL
pages are counted."""

from __future__ import annotations

from pathlib import Path

from bench.commits import MOVES_PER_GAME, Load, measure, open_store, wal_pages

from parlour.storage import GameRow, MoveRow
from parlour.storage.records import GameSnapshotRow


def test_the_commits_are_stored_alike_grouped_or_not_in_runs_or_rows(tmp_path: Path) -> None:
    load = Load(games=3, touched=2, seed=1)
    first = load.games[:]
    commits = [load.commit() for _ in range(MOVES_PER_GAME // 2)]
    records = [record for batch in commits for record in batch]
    # Games ended (and new ones began), snapshots were taken on the way.
    assert any(type(r) is GameRow and r.state == "COMPLETED" for r in records)
    assert sum(type(r) is GameSnapshotRow for r in records) >= MOVES_PER_GAME // 32
    exports = []
    for grouped, layout in ((True, ""), (False, ""), (False, "rows")):
        store = open_store(tmp_path, f"grouped-{grouped}-{layout}", grouped, layout)
        try:
            store.commit(first)
            cpu, pages = measure(store, layout, commits)
            assert cpu > 0 and pages >= 1
            assert len(wal_pages(store)) == round(pages * len(commits))
            exports.append(list(store.export()))
            assert store.check()["games_with_missing_moves"] == 0
        finally:
            store.close()
    assert exports[0] == exports[1] == exports[2]
    assert sum(kind == "move" for kind, _ in exports[0]) == sum(type(r) is MoveRow for r in records)
