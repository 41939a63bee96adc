"""The operator's work on a store (``parlour db``): purging finished games, checking the
store's soundness, and exporting and importing every row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from parlour.storage.base import StoreFailure
from parlour.storage.migrations import FINISHED_STATES
from parlour.storage.records import ASYNC_FINISHED_STATUSES, EXPORT_KINDS, STORE_META_KEYS, MoveRow, Record
from parlour.storage.runs import count as runs_count
from parlour.storage.runs import unpack
from parlour.storage.sqlbase import TABLES, SQLBase, one_line
from parlour.storage.tables import META, MOVES, TABLE_OF, Table
from parlour.storage.writes import Cursor

__all__ = ["Operations"]


class Operations(SQLBase):
    """Purge, check, export and import, in portable SQL."""

    def purge(self, finished_before: float) -> int:
        marks = ", ".join("?" for _ in FINISHED_STATES)
        where = f"state IN ({marks}) AND finished < ?"
        params = (*FINISHED_STATES, finished_before)

        over = ", ".join("?" for _ in ASYNC_FINISHED_STATUSES)
        async_where = f"status IN ({over}) AND updated < ?"
        async_params = (*ASYNC_FINISHED_STATUSES, finished_before)

        def work(cur: Cursor) -> int:
            cur.execute(f"DELETE FROM moves WHERE game_id IN (SELECT id FROM games WHERE {where})", params)
            cur.execute(
                f"DELETE FROM move_runs WHERE game_id IN (SELECT id FROM games WHERE {where})", params
            )
            cur.execute(
                f"DELETE FROM game_snapshots WHERE game_id IN (SELECT id FROM games WHERE {where})", params
            )
            cur.execute(
                f"DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE {where})", params
            )
            cur.execute(f"DELETE FROM games WHERE {where}", params)
            count = int(cur.rowcount)
            cur.execute(
                f"DELETE FROM async_turns WHERE game_id IN (SELECT id FROM async_games WHERE {async_where})",
                async_params,
            )
            # A game's chat goes with it (game ids are never reused; the lobby's scope 0 is no game).
            cur.execute(
                f"DELETE FROM chat WHERE scope IN (SELECT id FROM async_games WHERE {async_where})",
                async_params,
            )
            cur.execute(f"DELETE FROM async_games WHERE {async_where}", async_params)
            count += int(cur.rowcount)
            # The lobby's chat (scope 0) lives on: its lines older than the cutoff go.
            cur.execute("DELETE FROM chat WHERE scope = 0 AND sent_at < ?", (finished_before,))
            cur.execute(
                "DELETE FROM notifications WHERE delivered IS NOT NULL AND delivered < ?", (finished_before,)
            )
            return count

        count: int = self._transaction(work)
        return count

    def check(self) -> dict[str, Any]:
        integrity, foreign = self._integrity()
        counts = {table: int(self._read(f"SELECT COUNT(*) FROM {table}")[0][0]) for table in TABLES}
        # "moves" counts the moves, whether in rows of their own (before schema version 11) or
        # in runs; "move_runs" the rows of runs.
        counts["moves"] += int(self._read("SELECT COALESCE(SUM(count), 0) FROM move_runs")[0][0])
        states = dict(self._read("SELECT state, COUNT(*) FROM games GROUP BY state ORDER BY state"))
        statuses = dict(
            self._read("SELECT status, COUNT(*) FROM async_games GROUP BY status ORDER BY status")
        )
        # Every game's moves are numbered 0, 1, 2... with no gap: its rows of before version 11
        # (at most one each, by their key) are the first, its runs follow them end to start (the
        # first where the rows end, each next where the one before ends). A finished game has
        # all the moves its row counts, a live one at least those (its row is not rewritten per
        # move).
        marks = ", ".join("?" for _ in FINISHED_STATES)
        stored = "(SELECT game_id, COUNT(*) AS n, MAX(seq) AS top FROM moves GROUP BY game_id)"
        runs = "(SELECT game_id, SUM(count) AS n FROM move_runs GROUP BY game_id)"
        total = "COALESCE(m.n, 0) + COALESCE(r.n, 0)"
        gaps = {
            row[0]
            for row in self._read(
                f"SELECT g.id FROM games g LEFT JOIN {stored} AS m ON m.game_id = g.id "
                f"LEFT JOIN {runs} AS r ON r.game_id = g.id "
                f"WHERE COALESCE(m.top, -1) <> COALESCE(m.n, 0) - 1 OR {total} < g.moves "
                f"OR (g.state IN ({marks}) AND {total} <> g.moves)",
                FINISHED_STATES,
            )
        }
        gaps.update(
            row[0]
            for row in self._read(
                "SELECT r.game_id FROM (SELECT game_id, seq, "
                "LAG(seq + count) OVER (PARTITION BY game_id ORDER BY seq) AS after FROM move_runs) AS r "
                f"LEFT JOIN {stored} AS m ON m.game_id = r.game_id WHERE r.seq <> COALESCE(r.after, m.n, 0)"
            )
        )
        # And each run holds as many moves as its row says.
        gaps.update(
            game_id
            for game_id, count, doc in self._read("SELECT game_id, count, doc FROM move_runs")
            if runs_count(doc) != count
        )
        # A snapshot is written with the move it follows: never ahead of its game's moves.
        ahead = self._read(
            "SELECT s.game_id FROM game_snapshots s "
            "WHERE s.moves > (SELECT COUNT(*) FROM moves m WHERE m.game_id = s.game_id) "
            "+ (SELECT COALESCE(SUM(r.count), 0) FROM move_runs r WHERE r.game_id = s.game_id)"
        )
        ok = integrity == ["ok"] and not foreign and not gaps and not ahead
        return {
            "ok": ok,
            "schema_version": self.schema_version,
            "integrity": integrity,
            "foreign_key_problems": foreign,
            "games_with_missing_moves": len(gaps),
            "snapshots_ahead_of_moves": len(ahead),
            "counts": counts,
            "games_by_state": states,
            "async_games_by_status": statuses,
        }

    def export(self) -> Iterator[tuple[str, dict[str, Any]]]:
        # Every table is read in one transaction, so from one snapshot: read one after the
        # other while a server commits, the moves could belong to games the export has not got
        # (and the import would fail), or disagree with their game's count of moves.
        owned = ", ".join("?" for _ in STORE_META_KEYS)
        queries: list[tuple[str, Table[Any], str, tuple[str, ...]]] = [
            # The store's own keys (version, heartbeat) belong to the store the rows go into.
            (kind, table, f"WHERE key NOT IN ({owned})", tuple(sorted(STORE_META_KEYS)))
            if table is META
            else (kind, table, "", ())
            for kind, table in ((kind, TABLE_OF[record]) for kind, record in EXPORT_KINDS.items())
        ]
        try:
            cur = self.cursor()
            cur.execute(self.BEGIN_SNAPSHOT)
            try:
                tables = [
                    (
                        kind,
                        table,
                        cur.execute(
                            f"SELECT {table.select} FROM {table.name} {where} ORDER BY {table.order}", params
                        ).fetchall(),
                    )
                    for kind, table, where, params in queries
                ]
                runs = cur.execute("SELECT game_id, seq, doc FROM move_runs").fetchall()
            finally:
                cur.execute("COMMIT")
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {one_line(error)}") from error
        for kind, table, rows in tables:
            records: Iterable[Any] = (table.load(row) for row in rows)
            if table is MOVES:
                # One "move" a move, from its own row or from a run: an export of any version
                # reads the same, and an import packs the moves into runs again.
                moves = list(records)
                for game_id, seq, doc in runs:
                    moves.extend(unpack(game_id, seq, doc))
                records = sorted(moves, key=_move_key)
            for record in records:
                # to_builtins: nested rows as dicts, bytes as base64 text (JSON has no bytes).
                fields: dict[str, Any] = msgspec.to_builtins(record)
                yield kind, fields

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        records: list[Record] = []
        counts = dict.fromkeys(EXPORT_KINDS, 0)
        for kind, fields in rows:
            if kind not in EXPORT_KINDS:
                raise ValueError(f"unknown kind of row {kind!r}")
            records.append(msgspec.convert(fields, EXPORT_KINDS[kind]))
            counts[kind] += 1

        def work(cur: Cursor) -> None:
            # The metadata does not count: a server that ran once on a new store made its secret.
            for table in TABLES:
                if cur.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]:
                    raise ValueError("the store is not empty: import only into a new store")
            # Whatever the order of the file: _write puts the rows every other refers to first.
            self._write(cur, records)

        self._transaction(work)
        return counts


def _move_key(move: MoveRow) -> tuple[str, int]:
    return move.game_id, move.seq
