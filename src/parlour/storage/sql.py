"""What the SQLite and PostgreSQL stores share: every statement, written once in portable SQL.

A backend subclasses ``SQLStore`` and supplies its connection (a DB-API cursor whose parameters
are ``?``), how a write transaction begins, the table listing and locking of its migrations,
its integrity check, and its backup. Everything else (the batching of a commit into few
multi-row statements, the reads, purge, export and import) is here, so that the two backends
cannot drift apart.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import msgspec

from parlour.storage.base import Fenced, StoreFailure, StoreRefused
from parlour.storage.migrations import APPLICATION, FINISHED_STATES, LATEST, MIGRATIONS
from parlour.storage.records import (
    ASYNC_FINISHED_STATUSES,
    EXPORT_KINDS,
    LIVE_STATES,
    STORE_META_KEYS,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    ChatRow,
    DeviceGone,
    DeviceRow,
    Fence,
    GameRow,
    Heartbeat,
    MetaRow,
    MoveRow,
    NotificationRow,
    PlayerGone,
    PlayerRow,
    RatingRow,
    Record,
    RelationGone,
    RelationRow,
    ReportRow,
    SeatRow,
    Snapshot,
)

__all__ = ["Cursor", "SQLStore"]

_GAME_COLUMNS = (
    "id, protocol, game, name, state, created, last_active, started, finished, seed, moves, "
    "config, seats, result"
)
_GAME_INSERT = f"INSERT INTO games ({_GAME_COLUMNS}) VALUES "
_GAME_CONFLICT = (
    " ON CONFLICT (id) DO UPDATE SET state = excluded.state, name = excluded.name, "
    "last_active = excluded.last_active, started = excluded.started, finished = excluded.finished, "
    "moves = excluded.moves, config = excluded.config, seats = excluded.seats, "
    "result = excluded.result"
)
_PLAYER_UPSERT = (
    "INSERT INTO players (id, handle, registered, last_active) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET handle = excluded.handle, last_active = excluded.last_active"
)
_MOVE_INSERT = "INSERT INTO moves (game_id, seq, seat, kind, choice, at) VALUES "
_SEAT_INSERT = "INSERT INTO game_seats (game_id, seat, handle, robot) VALUES "
#: Bound values per statement, under SQLite's oldest default limit (999).
MAX_VALUES = 990
_META_UPSERT = "INSERT INTO parlour_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"

# The /async tables (schema v3). Upserts keep a row's first ``created``, as players keep theirs.
_ACCOUNT_COLUMNS = "id, name, password_hash, created"
_ACCOUNT_INSERT = "INSERT INTO accounts (id, name, name_key, password_hash, created) VALUES "
_ACCOUNT_CONFLICT = (
    " ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, "
    "password_hash = excluded.password_hash"
)
_ASYNC_GAME_COLUMNS = "id, game_type, status, created, updated, doc"
_ASYNC_GAME_INSERT = f"INSERT INTO async_games ({_ASYNC_GAME_COLUMNS}) VALUES "
_ASYNC_GAME_CONFLICT = (
    " ON CONFLICT (id) DO UPDATE SET game_type = excluded.game_type, status = excluded.status, "
    "updated = excluded.updated, doc = excluded.doc"
)
_ASYNC_TURN_COLUMNS = "game_id, turn_index, at, doc"
_ASYNC_TURN_INSERT = f"INSERT INTO async_turns ({_ASYNC_TURN_COLUMNS}) VALUES "
_ASYNC_TURN_CONFLICT = " ON CONFLICT (game_id, turn_index) DO UPDATE SET at = excluded.at, doc = excluded.doc"
_RATING_COLUMNS = "account_id, game_type, mu, sigma, games, updated, ordinal"
_RATING_INSERT = f"INSERT INTO ratings ({_RATING_COLUMNS}) VALUES "
_RATING_CONFLICT = (
    " ON CONFLICT (account_id, game_type) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
    "games = excluded.games, updated = excluded.updated, ordinal = excluded.ordinal"
)
_META_INSERT = "INSERT INTO parlour_meta (key, value) VALUES "
_META_CONFLICT = " ON CONFLICT (key) DO UPDATE SET value = excluded.value"

# The social side of /async and the push outbox (schema v4). Chat lines and reports are only
# ever inserted; a relation keeps its first ``added``, a device its last ``linked``.
_CHAT_COLUMNS = "scope, seq, sender, sender_name, text, code, sent_at"
_CHAT_INSERT = f"INSERT INTO chat ({_CHAT_COLUMNS}) VALUES "
_RELATION_COLUMNS = "owner, other, kind, added"
_RELATION_INSERT = f"INSERT INTO relations ({_RELATION_COLUMNS}) VALUES "
_RELATION_CONFLICT = " ON CONFLICT (owner, other, kind) DO NOTHING"
_RELATION_DELETE = "DELETE FROM relations WHERE owner = ? AND other = ? AND kind = ?"
_REPORT_COLUMNS = "reporter, reported, scope, text, at"
_REPORT_INSERT = f"INSERT INTO reports ({_REPORT_COLUMNS}) VALUES "
_DEVICE_COLUMNS = "account_id, device_type, token, linked"
_DEVICE_INSERT = f"INSERT INTO devices ({_DEVICE_COLUMNS}) VALUES "
_DEVICE_CONFLICT = " ON CONFLICT (account_id, device_type, token) DO UPDATE SET linked = excluded.linked"
_DEVICE_DELETE = "DELETE FROM devices WHERE account_id = ? AND device_type = ? AND token = ?"
_NOTIFICATION_COLUMNS = (
    "id, account_id, device_type, token, payload, created, attempts, next_attempt, delivered"
)
_NOTIFICATION_INSERT = f"INSERT INTO notifications ({_NOTIFICATION_COLUMNS}) VALUES "
_NOTIFICATION_CONFLICT = (
    " ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, "
    "device_type = excluded.device_type, token = excluded.token, payload = excluded.payload, "
    "attempts = excluded.attempts, next_attempt = excluded.next_attempt, delivered = excluded.delivered"
)

#: The tables ``check`` counts rows of.
TABLES = (
    "players",
    "games",
    "moves",
    "game_seats",
    "accounts",
    "async_games",
    "async_turns",
    "ratings",
    "chat",
    "relations",
    "reports",
    "devices",
    "notifications",
)
#: The bytes of a secret made by ``ensure_secret`` (HS256 wants a key of at least 32).
SECRET_BYTES = 32


class Cursor(Protocol):
    """The part of a DB-API cursor the statements use, with ``?`` parameters on both backends."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


_encode = msgspec.json.encode
_seats = msgspec.json.Decoder(list[SeatRow])
_json = msgspec.json.Decoder(dict[str, Any])


def _insert(cur: Cursor, head: str, rows: Sequence[tuple[Any, ...]], tail: str = "") -> None:
    """Many rows in few statements (``INSERT ... VALUES (...), (...)``, portable SQL).

    The writer thread lets go of the interpreter lock for every statement it steps, and must
    wait for it again each time while the event loop is busy: one statement per group of rows,
    rather than one per row, is what keeps a commit short under load.
    """
    if not rows:
        return
    width = len(rows[0])
    group = max(1, MAX_VALUES // width)
    one = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), group):
        chunk = rows[start : start + group]
        values = [value for row in chunk for value in row]
        cur.execute(head + ", ".join([one] * len(chunk)) + tail, values)


def _game_params(row: GameRow) -> tuple[Any, ...]:
    return (
        row.id,
        row.protocol,
        row.game,
        row.name,
        row.state,
        row.created,
        row.last_active,
        row.started,
        row.finished,
        row.seed,
        row.moves,
        _encode(row.config).decode(),
        _encode(row.seats).decode(),
        None if row.result is None else _encode(row.result).decode(),
    )


def _game_row(values: Sequence[Any]) -> GameRow:
    (gid, protocol, game, name, state, created, last_active, started, finished, seed, moves) = values[:11]
    config, seats, result = values[11:14]
    return GameRow(
        id=gid,
        protocol=protocol,
        game=game,
        name=name,
        state=state,
        created=created,
        last_active=last_active,
        started=started,
        finished=finished,
        seed=seed,
        moves=moves,
        config=_json.decode(config),
        seats=_seats.decode(seats),
        result=None if result is None else _json.decode(result),
    )


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
    #: Reads a Fence's meta value in a write transaction (SQLite's lock is the whole database).
    FENCE_READ = "SELECT value FROM parlour_meta WHERE key = ?"
    #: What the backend's databases are called in messages ("an SQLite database").
    DATABASE = "a database"

    def cursor(self) -> Cursor:
        raise NotImplementedError

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
            self._transaction(self._write, records)

    def _fenced_write(self, cur: Cursor, records: Sequence[Record]) -> None:
        """Check every Fence (first, and reading the row with a lock where the backend has
        row locks: a claim of the key then waits for this transaction, or this one sees the
        claim), then write the rest."""
        rows: list[Record] = []
        for record in records:
            if type(record) is Fence:
                found = cur.execute(self.FENCE_READ, (record.key,)).fetchone()
                if found is None or found[0] != record.value:
                    raise Fenced(f"{self.location}: {record.key} was claimed by another node; nothing stored")
            else:
                rows.append(record)
        self._write(cur, rows)

    @staticmethod
    def _write(cur: Cursor, records: Sequence[Record]) -> None:
        games: dict[str, GameRow] = {}
        moves: list[tuple[Any, ...]] = []
        # Upserted rows by key, each as it was last: one multi-row upsert may not touch a row
        # twice (PostgreSQL refuses it), and parents are written before the rows that refer to them.
        accounts: dict[int, tuple[Any, ...]] = {}
        async_games: dict[int, tuple[Any, ...]] = {}
        turns: dict[tuple[int, int], tuple[Any, ...]] = {}
        ratings: dict[tuple[int, str], tuple[Any, ...]] = {}
        meta: dict[str, tuple[Any, ...]] = {}
        chat: list[tuple[Any, ...]] = []
        reports: list[tuple[Any, ...]] = []
        notifications: dict[str, tuple[Any, ...]] = {}
        # Relations and devices by key, as the batch leaves them (None: deleted), and the keys
        # the batch deleted at some point: those are deleted first, then what remains is written.
        relations: dict[tuple[int, int, str], tuple[Any, ...] | None] = {}
        relations_gone: set[tuple[int, int, str]] = set()
        devices: dict[tuple[int, str, str], tuple[Any, ...] | None] = {}
        devices_gone: set[tuple[int, str, str]] = set()
        for record in records:
            if type(record) is MoveRow:
                moves.append((record.game_id, record.seq, record.seat, record.kind, record.choice, record.at))
            elif type(record) is GameRow:
                games.pop(record.id, None)
                games[record.id] = record  # saved once, as it was last
            elif type(record) is PlayerRow:
                cur.execute(_PLAYER_UPSERT, (record.id, record.handle, record.registered, record.last_active))
            elif type(record) is PlayerGone:
                cur.execute("DELETE FROM players WHERE id = ?", (record.id,))
            elif type(record) is AsyncTurnRow:
                turns[record.game_id, record.turn_index] = (
                    record.game_id,
                    record.turn_index,
                    record.at,
                    record.doc,
                )
            elif type(record) is AsyncGameRow:
                async_games.pop(record.id, None)
                async_games[record.id] = (
                    record.id,
                    record.game_type,
                    record.status,
                    record.created,
                    record.updated,
                    record.doc,
                )
            elif type(record) is AccountRow:
                accounts.pop(record.id, None)
                accounts[record.id] = (
                    record.id,
                    record.name,
                    record.name.casefold(),
                    record.password_hash,
                    record.created,
                )
            elif type(record) is RatingRow:
                ratings[record.account_id, record.game_type] = (
                    record.account_id,
                    record.game_type,
                    record.mu,
                    record.sigma,
                    record.games,
                    record.updated,
                    record.ordinal,
                )
            elif type(record) is MetaRow:
                if record.key in STORE_META_KEYS:  # a row built without its checks
                    raise ValueError(f"parlour_meta key {record.key!r} belongs to the store")
                meta[record.key] = (record.key, record.value)
            elif type(record) is Heartbeat:
                meta["heartbeat"] = ("heartbeat", repr(record.at))
            elif type(record) is ChatRow:
                chat.append(
                    (
                        record.scope,
                        record.seq,
                        record.sender,
                        record.sender_name,
                        record.text,
                        record.code,
                        record.sent_at,
                    )
                )
            elif type(record) is RelationRow:
                relation = (record.owner, record.other, record.kind)
                if relations.get(relation) is None:  # added twice in one batch: the first time counts
                    relations[relation] = (*relation, record.added)
            elif type(record) is RelationGone:
                relation = (record.owner, record.other, record.kind)
                relations[relation] = None
                relations_gone.add(relation)
            elif type(record) is ReportRow:
                reports.append((record.reporter, record.reported, record.scope, record.text, record.at))
            elif type(record) is DeviceRow:
                device = (record.account_id, record.device_type, record.token)
                devices[device] = (*device, record.linked)
            elif type(record) is DeviceGone:
                device = (record.account_id, record.device_type, record.token)
                devices[device] = None
                devices_gone.add(device)
            elif type(record) is NotificationRow:
                notifications.pop(record.id, None)
                notifications[record.id] = (
                    record.id,
                    record.account_id,
                    record.device_type,
                    record.token,
                    record.payload,
                    record.created,
                    record.attempts,
                    record.next_attempt,
                    record.delivered,
                )
        if games:
            _insert(cur, _GAME_INSERT, [_game_params(game) for game in games.values()], _GAME_CONFLICT)
            ended = [game for game in games.values() if game.state in FINISHED_STATES]
            if ended:
                marks = ", ".join("?" for _ in ended)
                cur.execute(f"DELETE FROM game_seats WHERE game_id IN ({marks})", [game.id for game in ended])
                seats = [
                    (game.id, i, seat.handle, int(seat.robot))
                    for game in ended
                    for i, seat in enumerate(game.seats)
                ]
                _insert(cur, _SEAT_INSERT, seats)
        _insert(cur, _MOVE_INSERT, moves)
        _insert(cur, _ACCOUNT_INSERT, list(accounts.values()), _ACCOUNT_CONFLICT)
        _insert(cur, _ASYNC_GAME_INSERT, list(async_games.values()), _ASYNC_GAME_CONFLICT)
        _insert(cur, _ASYNC_TURN_INSERT, list(turns.values()), _ASYNC_TURN_CONFLICT)
        _insert(cur, _RATING_INSERT, list(ratings.values()), _RATING_CONFLICT)
        _insert(cur, _META_INSERT, list(meta.values()), _META_CONFLICT)
        _insert(cur, _CHAT_INSERT, chat)
        if relations_gone:
            cur.executemany(_RELATION_DELETE, sorted(relations_gone))
        _insert(cur, _RELATION_INSERT, [row for row in relations.values() if row], _RELATION_CONFLICT)
        _insert(cur, _REPORT_INSERT, reports)
        if devices_gone:
            cur.executemany(_DEVICE_DELETE, sorted(devices_gone))
        _insert(cur, _DEVICE_INSERT, [row for row in devices.values() if row], _DEVICE_CONFLICT)
        _insert(cur, _NOTIFICATION_INSERT, list(notifications.values()), _NOTIFICATION_CONFLICT)

    def heartbeat(self, now: float) -> None:
        self._transaction(lambda cur: cur.execute(_META_UPSERT, ("heartbeat", repr(now))))

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

    def load_live(self) -> Snapshot:
        marks = ", ".join("?" for _ in LIVE_STATES)
        players = [
            PlayerRow(*row) for row in self._read("SELECT id, handle, registered, last_active FROM players")
        ]
        games = [
            _game_row(row)
            for row in self._read(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE state IN ({marks}) ORDER BY created, id",
                LIVE_STATES,
            )
        ]
        moves: dict[str, list[MoveRow]] = {game.id: [] for game in games}
        for row in self._read(
            "SELECT m.game_id, m.seq, m.seat, m.kind, m.choice, m.at FROM moves m JOIN games g ON g.id = m.game_id "
            f"WHERE g.state IN ({marks}) ORDER BY m.game_id, m.seq",
            LIVE_STATES,
        ):
            moves[row[0]].append(MoveRow(*row))
        beat = self._read("SELECT value FROM parlour_meta WHERE key = 'heartbeat'")
        return Snapshot(players, games, moves, float(beat[0][0]) if beat else None)

    def load_player(self, player_id: str) -> PlayerRow | None:
        rows = self._read(
            "SELECT id, handle, registered, last_active FROM players WHERE id = ?", (player_id,)
        )
        return PlayerRow(*rows[0]) if rows else None

    def load_game(self, game_id: str) -> tuple[GameRow, list[MoveRow]] | None:
        rows = self._read(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game_id,))
        if not rows:
            return None
        moves = [
            MoveRow(*row)
            for row in self._read(
                "SELECT game_id, seq, seat, kind, choice, at FROM moves WHERE game_id = ? ORDER BY seq",
                (game_id,),
            )
        ]
        return _game_row(rows[0]), moves

    def list_games(
        self,
        game_type: str | None = None,
        player: str | None = None,
        limit: int = 50,
        before: tuple[float, str] | None = None,
        state: str | None = None,
    ) -> list[GameRow]:
        columns = ", ".join(f"g.{name.strip()}" for name in _GAME_COLUMNS.split(","))
        states = (state,) if state is not None else FINISHED_STATES
        sql = [f"SELECT {columns} FROM games g WHERE g.state IN ({', '.join('?' for _ in states)})"]
        params: list[Any] = list(states)
        if player is not None:
            # A human of that handle sat at the game (robots share handles across games).
            sql.append(
                "AND EXISTS (SELECT 1 FROM game_seats s WHERE s.game_id = g.id AND s.handle = ? AND s.robot = 0)"
            )
            params.append(player)
        if game_type is not None:
            sql.append("AND g.game = ?")
            params.append(game_type)
        if before is not None:
            sql.append("AND (g.finished < ? OR (g.finished = ? AND g.id < ?))")
            params.extend((before[0], before[0], before[1]))
        sql.append("ORDER BY g.finished DESC, g.id DESC LIMIT ?")
        params.append(limit)
        return [_game_row(row) for row in self._read(" ".join(sql), params)]

    # -----------------------------------------------------------------------------------------
    # The /async protocol (scalable-server-notes.md S4, S10, S11)

    def accounts(self) -> list[AccountRow]:
        return [
            AccountRow(*row) for row in self._read(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts ORDER BY id")
        ]

    def account_by_name(self, name: str) -> AccountRow | None:
        rows = self._read(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE name_key = ?", (name.casefold(),))
        return AccountRow(*rows[0]) if rows else None

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
        return [
            AsyncGameRow(*row)
            for row in self._read(
                f"SELECT {_ASYNC_GAME_COLUMNS} FROM async_games WHERE status NOT IN ({over}) ORDER BY id",
                ASYNC_FINISHED_STATUSES,
            )
        ]

    def load_async_game(self, game_id: int) -> AsyncGameRow | None:
        rows = self._read(f"SELECT {_ASYNC_GAME_COLUMNS} FROM async_games WHERE id = ?", (game_id,))
        return AsyncGameRow(*rows[0]) if rows else None

    def async_turns(self, game_id: int) -> list[AsyncTurnRow]:
        return [
            AsyncTurnRow(*row)
            for row in self._read(
                f"SELECT {_ASYNC_TURN_COLUMNS} FROM async_turns WHERE game_id = ? ORDER BY turn_index",
                (game_id,),
            )
        ]

    def ratings(self) -> list[RatingRow]:
        return [
            RatingRow(*row)
            for row in self._read(f"SELECT {_RATING_COLUMNS} FROM ratings ORDER BY account_id, game_type")
        ]

    def leaderboard(self, game_type: str, limit: int) -> list[tuple[RatingRow, str]]:
        if limit < 0:
            raise ValueError(f"a leaderboard's limit must not be negative, not {limit}")
        columns = ", ".join(f"r.{name.strip()}" for name in _RATING_COLUMNS.split(","))
        rows = self._read(
            f"SELECT {columns}, a.name FROM ratings r JOIN accounts a ON a.id = r.account_id "
            "WHERE r.game_type = ? ORDER BY r.ordinal DESC, r.account_id LIMIT ?",
            (game_type, limit),
        )
        return [(RatingRow(*row[:-1]), str(row[-1])) for row in rows]

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
                f"SELECT {_CHAT_COLUMNS} FROM (SELECT {_CHAT_COLUMNS}, ROW_NUMBER() OVER "
                f"(PARTITION BY scope ORDER BY seq DESC) AS recent FROM chat WHERE scope IN ({marks})) "
                "AS latest WHERE recent <= ? ORDER BY scope, seq",
                [*chunk, limit],
            )
            for row in rows:
                found[row[0]].append(ChatRow(*row))
        return found

    def relations(self) -> list[RelationRow]:
        return [
            RelationRow(*row)
            for row in self._read(f"SELECT {_RELATION_COLUMNS} FROM relations ORDER BY owner, other, kind")
        ]

    def reports(self, limit: int) -> list[ReportRow]:
        if limit < 0:
            raise ValueError(f"a list of reports' limit must not be negative, not {limit}")
        return [
            ReportRow(*row)
            for row in self._read(
                f"SELECT {_REPORT_COLUMNS} FROM reports ORDER BY at DESC, reporter DESC LIMIT ?", (limit,)
            )
        ]

    def devices(self) -> list[DeviceRow]:
        return [
            DeviceRow(*row)
            for row in self._read(
                f"SELECT {_DEVICE_COLUMNS} FROM devices ORDER BY account_id, device_type, token"
            )
        ]

    def pending_notifications(self, now: float, limit: int) -> list[NotificationRow]:
        if limit < 0:
            raise ValueError(f"a list of notifications' limit must not be negative, not {limit}")
        return [
            NotificationRow(*row)
            for row in self._read(
                f"SELECT {_NOTIFICATION_COLUMNS} FROM notifications "
                "WHERE delivered IS NULL AND next_attempt <= ? ORDER BY created, id LIMIT ?",
                (now, limit),
            )
        ]

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
        ok = integrity == ["ok"] and not foreign and not gaps
        return {
            "ok": ok,
            "schema_version": self.schema_version,
            "integrity": integrity,
            "foreign_key_problems": foreign,
            "games_with_missing_moves": len(gaps),
            "counts": counts,
            "games_by_state": states,
            "async_games_by_status": statuses,
        }

    def export(self) -> Iterator[tuple[str, dict[str, Any]]]:
        # Every table is read in one transaction, so from one snapshot: read one after the
        # other while a server commits, the moves could belong to games the export has not got
        # (and the import would fail), or disagree with their game's count of moves.
        owned = ", ".join("?" for _ in STORE_META_KEYS)
        queries = [
            ("player", "SELECT id, handle, registered, last_active FROM players ORDER BY registered, id", ()),
            ("game", f"SELECT {_GAME_COLUMNS} FROM games ORDER BY created, id", ()),
            ("move", "SELECT game_id, seq, seat, kind, choice, at FROM moves ORDER BY game_id, seq", ()),
            ("account", f"SELECT {_ACCOUNT_COLUMNS} FROM accounts ORDER BY id", ()),
            ("async_game", f"SELECT {_ASYNC_GAME_COLUMNS} FROM async_games ORDER BY id", ()),
            (
                "async_turn",
                f"SELECT {_ASYNC_TURN_COLUMNS} FROM async_turns ORDER BY game_id, turn_index",
                (),
            ),
            ("rating", f"SELECT {_RATING_COLUMNS} FROM ratings ORDER BY account_id, game_type", ()),
            ("chat", f"SELECT {_CHAT_COLUMNS} FROM chat ORDER BY scope, seq", ()),
            ("relation", f"SELECT {_RELATION_COLUMNS} FROM relations ORDER BY owner, other, kind", ()),
            ("report", f"SELECT {_REPORT_COLUMNS} FROM reports ORDER BY at, reporter", ()),
            (
                "device",
                f"SELECT {_DEVICE_COLUMNS} FROM devices ORDER BY account_id, device_type, token",
                (),
            ),
            (
                "notification",
                f"SELECT {_NOTIFICATION_COLUMNS} FROM notifications ORDER BY created, id",
                (),
            ),
            # The store's own keys (version, heartbeat) belong to the store the rows go into.
            (
                "meta",
                f"SELECT key, value FROM parlour_meta WHERE key NOT IN ({owned}) ORDER BY key",
                tuple(sorted(STORE_META_KEYS)),
            ),
        ]
        try:
            cur = self.cursor()
            cur.execute(self.BEGIN_SNAPSHOT)
            try:
                tables = [(kind, cur.execute(sql, params).fetchall()) for kind, sql, params in queries]
            finally:
                cur.execute("COMMIT")
        except self.errors as error:
            raise StoreFailure(f"{self.location}: {_one_line(error)}") from error
        for kind, rows in tables:
            for row in rows:
                record = _game_row(row) if kind == "game" else EXPORT_KINDS[kind](*row)
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
