"""What the SQLite and PostgreSQL stores share: every statement, written once in portable SQL.

A backend subclasses ``SQLStore`` and supplies the hooks of ``SQLBase`` (storage/sqlbase.py).
Everything else is shared, so that the two backends cannot drift apart: here the schema's
migrations, commits (through storage/writes.py, which batches them into few statements) and the
reads of games and moves; the /async protocol's reads in storage/async_queries.py; purge, check,
export and import in storage/operations.py. The statements that write or read whole rows are
built from the tables' declarations (storage/tables.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from parlour.storage.async_queries import AsyncQueries
from parlour.storage.base import Fenced, StoreFailure, StoreRefused
from parlour.storage.migrations import APPLICATION, FINISHED_STATES, LATEST, MIGRATIONS, RUN_LIMIT
from parlour.storage.operations import Operations
from parlour.storage.records import (
    LIVE_STATES,
    SNAPSHOT_VERSION,
    Fence,
    GameRow,
    GameSnapshotRow,
    Heartbeat,
    MetaRow,
    MoveRow,
    PlayerRow,
    Record,
    Snapshot,
)
from parlour.storage.runs import unpack
from parlour.storage.sqlbase import TABLES, SQLBase
from parlour.storage.tables import GAMES, META, MOVES, PLAYERS, SNAPSHOTS
from parlour.storage.writes import Cursor, write_records

__all__ = ["TABLES", "Cursor", "SQLBase", "SQLStore"]

#: The store's own values (version, application) are written as a MetaRow's, without its checks.
_META_UPSERT = f"{META.insert}(?, ?){META.upsert}"
#: The bytes of a secret made by ``ensure_secret`` (HS256 wants a key of at least 32).
SECRET_BYTES = 32


class SQLStore(AsyncQueries, Operations):
    """The store interface in portable SQL; a backend supplies the hooks of SQLBase."""

    def _migrate(self) -> None:
        """Bring the store to the latest schema (a new store: create it), or refuse it."""
        cur = self.cursor()
        if self._version(cur) == LATEST:
            return
        cur.execute(self.BEGIN_WRITE)
        try:
            self._lock_for_migration(cur)
            # Read again under the lock: another process opening the same store may have
            # migrated it since, and running the migrations twice would fail half-way.
            version = self._version(cur)
            for number, _, migrate in MIGRATIONS:
                if number > version:
                    migrate(cur)
            cur.execute(_META_UPSERT, ("application", APPLICATION))
            cur.execute(_META_UPSERT, ("schema_version", str(LATEST)))
            cur.execute("COMMIT")
        except BaseException:
            if self.in_transaction():
                cur.execute("ROLLBACK")
            raise

    def _version(self, cur: Cursor) -> int:
        """The store's schema version (0 for an empty store); refuses what is not ours to open."""
        tables = self._tables(cur)
        version = 0
        if tables:
            if "parlour_meta" not in tables:
                raise StoreRefused(
                    f"{self.location}: not a Parlour store ({self.DATABASE} of something else)"
                )
            meta = dict(cur.execute("SELECT key, value FROM parlour_meta", ()).fetchall())
            if meta.get("application") != APPLICATION or not meta.get("schema_version", "").isdigit():
                raise StoreRefused(f"{self.location}: not a Parlour store (no Parlour schema version)")
            version = int(meta["schema_version"])
            if version > LATEST:
                raise StoreRefused(
                    f"{self.location}: the store has schema version {version}, newer than this "
                    f"build's {LATEST}; run a newer Parlour"
                )
        return version

    # -----------------------------------------------------------------------------------------
    # Writing

    def commit(self, records: Sequence[Record]) -> None:
        if not records:
            return
        if any(type(record) is Fence for record in records):
            self._transaction(self._fenced_write, records)
        else:
            self._transaction(self._write, records, self.group_rows)

    def _fenced_write(self, cur: Cursor, records: Sequence[Record]) -> None:
        """Check every Fence (first, and reading the row with a lock where the backend has
        row locks: a claim of the key then waits for this transaction, or this one sees the
        claim), then write the rest."""
        rows: list[Record] = []
        fences: list[Fence] = []
        for record in records:
            if type(record) is Fence:
                fences.append(record)
            else:
                rows.append(record)
        # One statement for every fence: a node in a sharded cluster holds a lease, so a fence,
        # per shard, and a round trip each made every writer round (which every turn waits
        # for) grow with the shards (bench/cluster.py's open loop).
        keys = sorted({fence.key for fence in fences})
        sql = self.FENCE_READ.format(keys=", ".join("?" for _ in keys))
        held = {row[0]: row[1] for row in cur.execute(sql, keys).fetchall()}
        for fence in fences:
            if held.get(fence.key) != fence.value:
                raise Fenced(f"{self.location}: {fence.key} was claimed by another node; nothing stored")
        self._write(cur, rows, self.group_rows)

    def heartbeat(self, now: float) -> None:
        self._transaction(write_records, [Heartbeat(now)])

    # -----------------------------------------------------------------------------------------
    # Reading

    def load_live(self) -> Snapshot:
        marks = ", ".join("?" for _ in LIVE_STATES)
        players = self._load(PLAYERS)
        games = self._load(GAMES, f"WHERE state IN ({marks}) ORDER BY created, id", LIVE_STATES)
        states: dict[str, GameSnapshotRow] = {}
        for row in self._read(
            f"SELECT {SNAPSHOTS.prefixed('s')} FROM game_snapshots s JOIN games g ON g.id = s.game_id "
            f"WHERE g.state IN ({marks}) AND s.version = ?",
            (*LIVE_STATES, SNAPSHOT_VERSION),
        ):
            state = SNAPSHOTS.load(row)
            states[state.game_id] = state
        # Only the moves after a game's snapshot: what a restart reads and replays does not grow
        # with the length of the games. Each live game's first move to read is known before its
        # moves are looked up, so that they are a range of the moves' key (game_id, seq), not
        # every move of the game filtered one by one.
        moves: dict[str, list[MoveRow]] = {game.id: [] for game in games}
        live = (
            "(SELECT g.id AS id, COALESCE(s.moves, 0) AS first FROM games g LEFT JOIN game_snapshots s "
            f"ON s.game_id = g.id AND s.version = ? WHERE g.state IN ({marks})) AS live"
        )
        params = (SNAPSHOT_VERSION, *LIVE_STATES)
        # The rows of before schema version 11 first: a game's runs follow them.
        for row in self._read(
            f"SELECT {MOVES.prefixed('m')} FROM {live} "
            "JOIN moves m ON m.game_id = live.id AND m.seq >= live.first ORDER BY m.game_id, m.seq",
            params,
        ):
            move = MOVES.load(row)
            moves[move.game_id].append(move)
        # A run holding a move from ``first`` on starts after first - RUN_LIMIT: a range too.
        for game_id, seq, doc, first in self._read(
            f"SELECT r.game_id, r.seq, r.doc, live.first FROM {live} JOIN move_runs r ON r.game_id = live.id "
            f"AND r.seq > live.first - {RUN_LIMIT} AND r.seq + r.count > live.first ORDER BY r.game_id, r.seq",
            params,
        ):
            moves[game_id].extend(unpack(game_id, seq, doc, first))
        beat = self._read("SELECT value FROM parlour_meta WHERE key = 'heartbeat'")
        return Snapshot(players, games, moves, float(beat[0][0]) if beat else None, states)

    def load_player(self, player_id: str) -> PlayerRow | None:
        rows = self._load(PLAYERS, "WHERE id = ?", (player_id,))
        return rows[0] if rows else None

    def load_game(self, game_id: str) -> tuple[GameRow, list[MoveRow]] | None:
        rows = self._load(GAMES, "WHERE id = ?", (game_id,))
        if not rows:
            return None
        return rows[0], self._game_moves(game_id)

    def _game_moves(self, game_id: str) -> list[MoveRow]:
        """Every move of a game: its rows of before schema version 11, then its runs."""
        moves = self._load(MOVES, "WHERE game_id = ? ORDER BY seq", (game_id,))
        for seq, doc in self._read(
            "SELECT seq, doc FROM move_runs WHERE game_id = ? ORDER BY seq", (game_id,)
        ):
            moves.extend(unpack(game_id, seq, doc))
        return moves

    def list_games(
        self,
        game_type: str | None = None,
        player: str | None = None,
        limit: int = 50,
        before: tuple[float, str] | None = None,
        state: str | None = None,
        protocol: str | None = None,
    ) -> list[GameRow]:
        if limit < 0:
            raise ValueError(f"a list of games' limit must not be negative, not {limit}")
        states = (state,) if state is not None else FINISHED_STATES
        where: list[str] = []
        params: list[Any] = []
        if player is not None:
            # A human of that handle sat at the game (robots share handles across games).
            where.append(
                "AND EXISTS (SELECT 1 FROM game_seats s WHERE s.game_id = g.id AND s.handle = ? AND s.robot = 0)"
            )
            params.append(player)
        if game_type is not None:
            where.append("AND g.game = ?")
            params.append(game_type)
        if protocol is not None:
            where.append("AND g.protocol = ?")
            params.append(protocol)
        if before is not None:
            # A range of the index (``finished <= ?``) as well as the page's exact bound.
            where.append("AND g.finished <= ? AND (g.finished < ? OR g.id < ?)")
            params.extend((before[0], before[0], before[1]))
        # The newest ``limit`` of each state, each a range of the index on (state, finished, id)
        # read from its newest end (an IN over the states read and sorted every finished game
        # on each page), then the newest ``limit`` of them.
        newest = "ORDER BY finished DESC, id DESC LIMIT ?"
        parts = [
            f"SELECT {GAMES.select} FROM (SELECT {GAMES.prefixed('g')} FROM games g WHERE g.state = ? "
            f"{' '.join(where)} ORDER BY g.finished DESC, g.id DESC LIMIT ?) AS finished_{number}"
            for number in range(len(states))
        ]
        values = [value for each in states for value in (each, *params, limit)]
        return self._load_rows(GAMES, f"{' UNION ALL '.join(parts)} {newest}", (*values, limit))

    def ensure_secret(self, key: str) -> bytes:
        MetaRow(key, "")  # the same keys as a MetaRow: ValueError for the store's own

        def work(cur: Cursor) -> str:
            # Two processes opening a new store at once must end up with the same secret: the
            # first insert wins (PostgreSQL's waits for a concurrent one to commit, SQLite's
            # holds the write lock), and what is kept is read back.
            value = secrets.token_bytes(SECRET_BYTES).hex()
            cur.execute(
                "INSERT INTO parlour_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, value),
            )
            row = cur.execute("SELECT value FROM parlour_meta WHERE key = ?", (key,)).fetchone()
            return str(row[0])

        text: str = self._transaction(work)
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            secret = b""
        if len(secret) < SECRET_BYTES:
            # Never echo the value: it is (meant to be) a secret.
            raise StoreFailure(
                f"{self.location}: the value kept under {key!r} is not a secret of {SECRET_BYTES} hex bytes"
            )
        return secret

    def meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM parlour_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def settled_meta(self, key: str) -> str | None:
        """``meta``, once no transaction that writes ``key`` is under way: a commit whose
        connection was lost may still be finishing on the database server, and the value it
        writes must not be read before it ends (see MARK_READ)."""

        if not self.MARK_WAIT:
            return self.meta(key)  # a commit of this process's own: over once its answer came

        def work(cur: Cursor) -> str | None:
            cur.execute(self.MARK_WAIT)
            rows = cur.execute(self.MARK_READ, (key,)).fetchall()
            return str(rows[0][0]) if rows else None

        value: str | None = self._transaction(work)
        return value
