"""What the SQLite and PostgreSQL stores share: every statement, written once in portable SQL.

A backend subclasses ``SQLStore`` and supplies its connection (a DB-API cursor whose parameters
are ``?``), how a write transaction begins, the table listing and locking of its migrations,
its integrity check, and its backup. Everything else (the reads, purge, export and import, and
through storage/writes.py the batching of a commit into few multi-row statements) is here, so
that the two backends cannot drift apart. The statements that write or read whole rows are
built from the tables' declarations (storage/tables.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

import msgspec

from parlour.storage.base import Fenced, StoreFailure, StoreRefused
from parlour.storage.migrations import APPLICATION, FINISHED_STATES, LATEST, MIGRATIONS
from parlour.storage.records import (
    ASYNC_FINISHED_STATUSES,
    EXPORT_KINDS,
    LIVE_STATES,
    SNAPSHOT_VERSION,
    STORE_META_KEYS,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceRow,
    Fence,
    GameResultRow,
    GameRow,
    GameSnapshotRow,
    Heartbeat,
    MetaRow,
    MoveRow,
    NotificationRow,
    Opponent,
    PlayerRow,
    RatingRow,
    Record,
    RelationRow,
    ReportRow,
    Snapshot,
)
from parlour.storage.tables import (
    ACCOUNTS,
    ASYNC_GAMES,
    ASYNC_TURNS,
    AUDIT,
    CHAT,
    DECLARED,
    DEVICES,
    GAME_RESULTS,
    GAMES,
    META,
    MOVES,
    NOTIFICATIONS,
    PLAYERS,
    RATINGS,
    RELATIONS,
    REPORTS,
    SNAPSHOTS,
    TABLE_OF,
    Table,
)
from parlour.storage.writes import MAX_VALUES, Cursor, write_records

__all__ = ["TABLES", "Cursor", "SQLStore"]

R = TypeVar("R", bound=msgspec.Struct)

#: The store's own values (version, application) are written as a MetaRow's, without its checks.
_META_UPSERT = f"{META.insert}(?, ?){META.upsert}"
#: The tables of rows (all but the metadata), parents first: ``check`` counts them, an import
#: wants them empty.
TABLES = tuple(table.name for table in DECLARED if table is not META)
#: The bytes of a secret made by ``ensure_secret`` (HS256 wants a key of at least 32).
SECRET_BYTES = 32


class SQLStore:
    """The store interface in portable SQL; a backend supplies the hooks below."""

    location: str
    #: What the writer process opens (``python -m parlour.storage.pipe``): the file's path, or
    #: the full URL, password included (``location`` hides it).
    connect_to: str
    sync: str
    #: The backend driver's exceptions: any of them in a read or a commit is a StoreFailure.
    errors: tuple[type[Exception], ...] = ()
    #: Opens a write transaction (SQLite's takes the write lock at once: no deadlock later).
    BEGIN_WRITE = "BEGIN"
    #: Opens a read-only transaction that reads one snapshot of every table (export).
    BEGIN_SNAPSHOT = "BEGIN"
    #: Reads the meta values of a commit's fences in a write transaction, in one statement
    #: (SQLite's lock is the whole database); ``{keys}`` becomes one ``?`` per key.
    FENCE_READ = "SELECT key, value FROM parlour_meta WHERE key IN ({keys})"
    #: What the backend's databases are called in messages ("an SQLite database").
    DATABASE = "a database"
    #: Whether a commit writes its rows in multi-row statements (writes.insert_rows).
    group_rows = True

    def cursor(self) -> Cursor:
        raise NotImplementedError

    def process_writer(self) -> tuple[str, str] | None:
        """Every SQL backend can commit from a writer process: it opens ``connect_to`` there."""
        return self.connect_to, self.sync

    def in_transaction(self) -> bool:
        raise NotImplementedError

    def _tables(self, cur: Cursor) -> set[str]:
        """The names of the tables in the store's database (or schema)."""
        raise NotImplementedError

    def _lock_for_migration(self, cur: Cursor) -> None:
        """Inside the migrating transaction: keep any other opener out until it ends."""

    def _integrity(self) -> tuple[list[str], int]:
        """The backend's own integrity check ("ok" when sound) and its foreign key problems."""
        raise NotImplementedError

    def checkpoint(self) -> None:
        """Nothing to fold for a backend that keeps no separate log file of its own."""

    def backup(self, target: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

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

    @property
    def schema_version(self) -> int:
        rows = self._read("SELECT value FROM parlour_meta WHERE key = 'schema_version'")
        return int(rows[0][0])

    # -----------------------------------------------------------------------------------------
    # Writing

    def _transaction(self, work: Any, *args: Any) -> Any:
        """Run ``work(cursor, *args)`` in one write transaction; any failure is a StoreFailure."""
        try:
            cur = self.cursor()
            cur.execute(self.BEGIN_WRITE)
            try:
                result = work(cur, *args)
                cur.execute("COMMIT")
            except BaseException:
                if self.in_transaction():
                    cur.execute("ROLLBACK")
                raise
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {_one_line(error)}") from error
        return result

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

    @staticmethod
    def _write(cur: Cursor, records: Sequence[Record], grouped: bool = True) -> None:
        write_records(cur, records, grouped)

    def heartbeat(self, now: float) -> None:
        self._transaction(write_records, [Heartbeat(now)])

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

    # -----------------------------------------------------------------------------------------
    # Reading

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            rows: list[Any] = self.cursor().execute(sql, params).fetchall()
            return rows
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {_one_line(error)}") from error

    def _load(self, table: Table[R], rest: str = "", params: Sequence[Any] = ()) -> list[R]:
        """The records of ``table`` that ``rest`` selects (its WHERE, ORDER BY and LIMIT)."""
        rows = self._read(f"SELECT {table.select} FROM {table.name} {rest}", params)
        return [table.load(row) for row in rows]

    def _load_rows(self, table: Table[R], sql: str, params: Sequence[Any] = ()) -> list[R]:
        """The records of ``table`` that a whole statement of its columns reads."""
        return [table.load(row) for row in self._read(sql, params)]

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
        for row in self._read(
            f"SELECT {MOVES.prefixed('m')} FROM (SELECT g.id AS id, COALESCE(s.moves, 0) AS first "
            "FROM games g LEFT JOIN game_snapshots s ON s.game_id = g.id AND s.version = ? "
            f"WHERE g.state IN ({marks})) AS live "
            "JOIN moves m ON m.game_id = live.id AND m.seq >= live.first ORDER BY m.game_id, m.seq",
            (SNAPSHOT_VERSION, *LIVE_STATES),
        ):
            move = MOVES.load(row)
            moves[move.game_id].append(move)
        beat = self._read("SELECT value FROM parlour_meta WHERE key = 'heartbeat'")
        return Snapshot(players, games, moves, float(beat[0][0]) if beat else None, states)

    def load_player(self, player_id: str) -> PlayerRow | None:
        rows = self._load(PLAYERS, "WHERE id = ?", (player_id,))
        return rows[0] if rows else None

    def load_game(self, game_id: str) -> tuple[GameRow, list[MoveRow]] | None:
        rows = self._load(GAMES, "WHERE id = ?", (game_id,))
        if not rows:
            return None
        return rows[0], self._load(MOVES, "WHERE game_id = ? ORDER BY seq", (game_id,))

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

    # -----------------------------------------------------------------------------------------
    # The /async protocol (scalable-server-notes.md S4, S10, S11)

    def accounts(self) -> list[AccountRow]:
        return self._load(ACCOUNTS, f"ORDER BY {ACCOUNTS.order}")

    def account_by_name(self, name: str) -> AccountRow | None:
        rows = self._load(ACCOUNTS, "WHERE name_key = ?", (name.casefold(),))
        return rows[0] if rows else None

    def account(self, account_id: int) -> AccountRow | None:
        rows = self._load(ACCOUNTS, "WHERE id = ?", (account_id,))
        return rows[0] if rows else None

    def set_role(self, name: str, role: str, audit: AuditRow) -> AccountRow | None:
        def work(cur: Cursor) -> AccountRow | None:
            cur.execute("UPDATE accounts SET role = ? WHERE name_key = ?", (role, name.casefold()))
            if cur.rowcount != 1:
                return None
            row = cur.execute(
                f"SELECT {ACCOUNTS.select} FROM accounts WHERE name_key = ?", (name.casefold(),)
            ).fetchone()
            account = ACCOUNTS.load(row)
            # The audit names the account as it is spelled, whatever the case it was given in.
            write_records(cur, [msgspec.structs.replace(audit, target=account.name)])
            return account

        found: AccountRow | None = self._transaction(work)
        return found

    def finished_async_games(self) -> list[AsyncGameRow]:
        over = ", ".join("?" for _ in ASYNC_FINISHED_STATUSES)
        return self._load(ASYNC_GAMES, f"WHERE status IN ({over}) ORDER BY id", ASYNC_FINISHED_STATUSES)

    def ended_async_games(self, limit: int, before: tuple[float, int] | None = None) -> list[AsyncGameRow]:
        if limit < 0:
            raise ValueError(f"a list of games' limit must not be negative, not {limit}")
        # The latest ``limit`` of each ended status, each a range of the index on (status,
        # updated, id) read from its newest end (an IN over both statuses would read and sort
        # every ended game), then the newest ``limit`` of the two. The page's bound is also a
        # range of that index (``updated <= ?``), not only an OR it cannot seek to.
        after = "" if before is None else " AND updated <= ? AND (updated < ? OR id < ?)"
        bound: tuple[Any, ...] = () if before is None else (before[0], before[0], before[1])
        newest = "ORDER BY updated DESC, id DESC LIMIT ?"
        parts: list[str] = []
        params: list[Any] = []
        for status in ASYNC_FINISHED_STATUSES:
            parts.append(
                f"SELECT {ASYNC_GAMES.select} FROM (SELECT {ASYNC_GAMES.select} FROM async_games "
                f"WHERE status = ?{after} {newest}) AS ended_{status.lower()}"
            )
            params.extend((status, *bound, limit))
        return self._load_rows(ASYNC_GAMES, f"{' UNION ALL '.join(parts)} {newest}", (*params, limit))

    def audit_log(
        self,
        limit: int,
        actor: str | None = None,
        action: str | None = None,
        target: str | None = None,
        since: float | None = None,
        before: float | None = None,
    ) -> list[AuditRow]:
        if limit < 0:
            raise ValueError(f"an audit log's limit must not be negative, not {limit}")
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("actor", actor), ("action", action), ("target", target)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if since is not None:
            where.append("at >= ?")
            params.append(since)
        if before is not None:
            where.append("at < ?")
            params.append(before)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        return self._load(AUDIT, f"{clause}ORDER BY at DESC, id DESC LIMIT ?", (*params, limit))

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

    def load_async_games(self) -> list[AsyncGameRow]:
        over = ", ".join("?" for _ in ASYNC_FINISHED_STATUSES)
        return self._load(ASYNC_GAMES, f"WHERE status NOT IN ({over}) ORDER BY id", ASYNC_FINISHED_STATUSES)

    def load_async_shard(self, shard: int, shards: int) -> list[AsyncGameRow]:
        waiting = (*ASYNC_FINISHED_STATUSES, "NOT_STARTED")
        skipped = ", ".join("?" for _ in waiting)
        return self._load(
            ASYNC_GAMES,
            f"WHERE status NOT IN ({skipped}) AND id % ? = ? ORDER BY id",
            (*waiting, shards, shard),
        )

    def load_async_game(self, game_id: int) -> AsyncGameRow | None:
        rows = self._load(ASYNC_GAMES, "WHERE id = ?", (game_id,))
        return rows[0] if rows else None

    def async_turns(self, game_id: int) -> list[AsyncTurnRow]:
        return self._load(ASYNC_TURNS, "WHERE game_id = ? ORDER BY turn_index", (game_id,))

    def ratings(self) -> list[RatingRow]:
        return self._load(RATINGS, f"ORDER BY {RATINGS.order}")

    def leaderboard(self, game_type: str, limit: int) -> list[tuple[RatingRow, str]]:
        if limit < 0:
            raise ValueError(f"a leaderboard's limit must not be negative, not {limit}")
        rows = self._read(
            f"SELECT {RATINGS.prefixed('r')}, a.name FROM ratings r JOIN accounts a ON a.id = r.account_id "
            "WHERE r.game_type = ? ORDER BY r.ordinal DESC, r.account_id LIMIT ?",
            (game_type, limit),
        )
        return [(RATINGS.load(row[:-1]), str(row[-1])) for row in rows]

    def recent_results(self, account_id: int, games: int) -> list[GameResultRow]:
        if games < 0:
            raise ValueError(f"a number of games must not be negative, not {games}")
        # Two steps rather than IN (SELECT ... LIMIT): the account's games by the index on
        # (account_id, at), then their seats by the primary key.
        ids = [
            int(row[0])
            for row in self._read(
                "SELECT game_id FROM game_results WHERE account_id = ? ORDER BY at DESC, game_id DESC LIMIT ?",
                (account_id, games),
            )
        ]
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        return self._load(
            GAME_RESULTS, f"WHERE game_id IN ({marks}) ORDER BY at DESC, game_id DESC, seat", ids
        )

    def rating_history(self, account_id: int, limit: int) -> list[GameResultRow]:
        if limit < 0:
            raise ValueError(f"a history's limit must not be negative, not {limit}")
        newest = self._load(
            GAME_RESULTS,
            "WHERE account_id = ? AND mu IS NOT NULL ORDER BY at DESC, game_id DESC LIMIT ?",
            (account_id, limit),
        )
        return newest[::-1]

    def opponents(self, account_id: int, limit: int) -> list[Opponent]:
        if limit < 0:
            raise ValueError(f"a number of opponents must not be negative, not {limit}")
        # An account is named as it is now (its row), a robot by its seat's name.
        rows = self._read(
            "SELECT o.account_id, COALESCE(a.name, o.name) AS who, "
            "SUM(CASE WHEN m.rank < o.rank THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN m.rank > o.rank THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN m.rank = o.rank THEN 1 ELSE 0 END), COUNT(*) AS played "
            "FROM game_results m JOIN game_results o ON o.game_id = m.game_id AND o.seat <> m.seat "
            "LEFT JOIN accounts a ON a.id = o.account_id "
            "WHERE m.account_id = ? AND m.rank IS NOT NULL AND o.rank IS NOT NULL "
            "AND (o.account_id IS NULL OR o.account_id <> m.account_id) "
            "GROUP BY o.account_id, COALESCE(a.name, o.name) "
            "ORDER BY played DESC, who LIMIT ?",
            (account_id, limit),
        )
        return [
            Opponent(
                account_id=None if row[0] is None else int(row[0]),
                name=str(row[1]),
                wins=int(row[2]),
                losses=int(row[3]),
                draws=int(row[4]),
            )
            for row in rows
        ]

    # -----------------------------------------------------------------------------------------
    # The social side of /async and the push outbox (S14, S15, S16)

    def load_chat(self, scopes: Sequence[int], limit: int) -> dict[int, list[ChatRow]]:
        if limit < 0:
            raise ValueError(f"a chat history's limit must not be negative, not {limit}")
        wanted = list(dict.fromkeys(scopes))
        found: dict[int, list[ChatRow]] = {scope: [] for scope in wanted}
        if limit == 0:
            return found
        # The last ``limit`` of each scope in one statement per group of scopes (a window
        # function: SQLite 3.25+ and PostgreSQL), oldest first.
        group = MAX_VALUES - 1
        for start in range(0, len(wanted), group):
            chunk = wanted[start : start + group]
            marks = ", ".join("?" for _ in chunk)
            rows = self._read(
                f"SELECT {CHAT.select} FROM (SELECT {CHAT.select}, ROW_NUMBER() OVER "
                f"(PARTITION BY scope ORDER BY seq DESC) AS recent FROM chat WHERE scope IN ({marks})) "
                "AS latest WHERE recent <= ? ORDER BY scope, seq",
                [*chunk, limit],
            )
            for row in rows:
                line = CHAT.load(row)
                found[line.scope].append(line)
        return found

    def relations(self) -> list[RelationRow]:
        return self._load(RELATIONS, f"ORDER BY {RELATIONS.order}")

    def reports(self, limit: int) -> list[ReportRow]:
        if limit < 0:
            raise ValueError(f"a list of reports' limit must not be negative, not {limit}")
        return self._load(REPORTS, "ORDER BY at DESC, reporter DESC LIMIT ?", (limit,))

    def devices(self) -> list[DeviceRow]:
        return self._load(DEVICES, f"ORDER BY {DEVICES.order}")

    def pending_notifications(self, now: float, limit: int) -> list[NotificationRow]:
        if limit < 0:
            raise ValueError(f"a list of notifications' limit must not be negative, not {limit}")
        return self._load(
            NOTIFICATIONS,
            "WHERE delivered IS NULL AND next_attempt <= ? ORDER BY created, id LIMIT ?",
            (now, limit),
        )

    # -----------------------------------------------------------------------------------------
    # Operations

    def check(self) -> dict[str, Any]:
        integrity, foreign = self._integrity()
        counts = {table: int(self._read(f"SELECT COUNT(*) FROM {table}")[0][0]) for table in TABLES}
        states = dict(self._read("SELECT state, COUNT(*) FROM games GROUP BY state ORDER BY state"))
        statuses = dict(
            self._read("SELECT status, COUNT(*) FROM async_games GROUP BY status ORDER BY status")
        )
        # Every game's move rows are numbered 0, 1, 2... with no gap; a finished game has all
        # the moves its row counts, a live one at least those (its row is not rewritten per move).
        marks = ", ".join("?" for _ in FINISHED_STATES)
        gaps = self._read(
            "SELECT g.id FROM games g LEFT JOIN moves m ON m.game_id = g.id GROUP BY g.id, g.moves, g.state "
            "HAVING COALESCE(MAX(m.seq), -1) <> COUNT(m.seq) - 1 OR COUNT(m.seq) < g.moves "
            f"OR (g.state IN ({marks}) AND COUNT(m.seq) <> g.moves)",
            FINISHED_STATES,
        )
        # A snapshot is written with the move it follows: never ahead of its game's moves.
        ahead = self._read(
            "SELECT s.game_id FROM game_snapshots s "
            "WHERE s.moves > (SELECT COUNT(*) FROM moves m WHERE m.game_id = s.game_id)"
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
            finally:
                cur.execute("COMMIT")
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {_one_line(error)}") from error
        for kind, table, rows in tables:
            for row in rows:
                record = table.load(row)
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


def _one_line(error: BaseException) -> str:
    """A driver's message on one line (PostgreSQL's add DETAIL and HINT lines)."""
    return " ".join(str(error).split())
