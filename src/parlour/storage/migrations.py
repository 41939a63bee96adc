"""Versioned schema migrations, applied in order when a store opens.

Each migration is a function of a DB-API cursor inside the opening transaction; the SQL is
portable (types and statements PostgreSQL accepts too), and data migrations are done in Python
rather than with a backend's JSON functions. A store records the version it is at in
``parlour_meta``; a store at a newer version than this build knows is refused, never touched.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

__all__ = ["APPLICATION", "FINISHED_STATES", "LATEST", "MIGRATIONS", "RUN_LIMIT"]

#: The value of ``parlour_meta.application`` that marks a Parlour store.
APPLICATION = "parlour"
FINISHED_STATES = ("COMPLETED", "CANCELLED", "ABORTED")
#: The most moves one row of ``move_runs`` holds (schema version 11, a CHECK of the table): the
#: moves from seq N on are then in the runs starting after N - RUN_LIMIT, a range of the key.
RUN_LIMIT = 64

Cursor = Any


def _v1_base(cur: Cursor) -> None:
    """Players, games (configuration, seats and seed as JSON and numbers) and their moves."""
    cur.execute("CREATE TABLE parlour_meta (key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL)")
    cur.execute(
        "CREATE TABLE players (id VARCHAR(64) PRIMARY KEY, handle TEXT NOT NULL, "
        "registered DOUBLE PRECISION NOT NULL, last_active DOUBLE PRECISION NOT NULL)"
    )
    cur.execute(
        "CREATE TABLE games (id VARCHAR(64) PRIMARY KEY, protocol VARCHAR(32) NOT NULL, "
        "game VARCHAR(32) NOT NULL, name TEXT NOT NULL, state VARCHAR(16) NOT NULL, "
        "created DOUBLE PRECISION NOT NULL, last_active DOUBLE PRECISION NOT NULL, "
        "started DOUBLE PRECISION, finished DOUBLE PRECISION, seed BIGINT NOT NULL, "
        "moves INTEGER NOT NULL, config TEXT NOT NULL, seats TEXT NOT NULL, result TEXT)"
    )
    cur.execute("CREATE INDEX games_by_state ON games (state)")
    cur.execute("CREATE INDEX games_by_finished ON games (finished, id)")
    cur.execute(
        "CREATE TABLE moves (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
        "seq INTEGER NOT NULL, seat INTEGER NOT NULL, kind VARCHAR(16) NOT NULL, "
        "choice INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (game_id, seq))"
    )


def _v2_game_seats(cur: Cursor) -> None:
    """Who sat at each finished game, for GET /api/games?player=: a table with an index,
    filled from the seats of the games already finished."""
    cur.execute(
        "CREATE TABLE game_seats (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
        "seat INTEGER NOT NULL, handle TEXT NOT NULL, robot INTEGER NOT NULL, PRIMARY KEY (game_id, seat))"
    )
    cur.execute("CREATE INDEX game_seats_by_handle ON game_seats (handle)")
    marks = ", ".join("?" for _ in FINISHED_STATES)
    cur.execute(f"SELECT id, seats FROM games WHERE state IN ({marks})", FINISHED_STATES)
    rows = [
        (game_id, index, seat["handle"], int(seat["robot"]))
        for game_id, seats in cur.fetchall()
        for index, seat in enumerate(json.loads(seats))
    ]
    cur.executemany("INSERT INTO game_seats (game_id, seat, handle, robot) VALUES (?, ?, ?, ?)", rows)


def _binary(cur: Cursor) -> str:
    """The column type of opaque bytes: the one type name the two backends spell differently
    (SQLite's BLOB; PostgreSQL's BYTEA, which SQLite would give numeric affinity)."""
    return "BLOB" if isinstance(cur, sqlite3.Cursor) else "BYTEA"


def _v3_async(cur: Cursor) -> None:
    """The /async protocol (docs/async-decisions.md S4, S6, S10, S11): accounts, games with
    every committed turn, and ratings per game type. Ids are allocated by the server core."""
    binary = _binary(cur)
    # name_key is the casefolded name: names are unique whatever their case, portably (no
    # collations or expression indexes, which differ between backends).
    cur.execute(
        "CREATE TABLE accounts (id BIGINT PRIMARY KEY, name TEXT NOT NULL, name_key TEXT NOT NULL, "
        "password_hash TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)"
    )
    cur.execute("CREATE UNIQUE INDEX accounts_by_name_key ON accounts (name_key)")
    cur.execute(
        "CREATE TABLE async_games (id BIGINT PRIMARY KEY, game_type VARCHAR(64) NOT NULL, "
        "status VARCHAR(16) NOT NULL, created DOUBLE PRECISION NOT NULL, "
        f"updated DOUBLE PRECISION NOT NULL, doc {binary} NOT NULL)"
    )
    cur.execute("CREATE INDEX async_games_by_status ON async_games (status)")
    cur.execute(
        "CREATE TABLE async_turns (game_id BIGINT NOT NULL REFERENCES async_games (id) ON DELETE CASCADE, "
        f"turn_index INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL, doc {binary} NOT NULL, "
        "PRIMARY KEY (game_id, turn_index))"
    )
    cur.execute(
        "CREATE TABLE ratings (account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "game_type VARCHAR(64) NOT NULL, mu DOUBLE PRECISION NOT NULL, sigma DOUBLE PRECISION NOT NULL, "
        "games INTEGER NOT NULL, updated DOUBLE PRECISION NOT NULL, ordinal DOUBLE PRECISION NOT NULL, "
        "PRIMARY KEY (account_id, game_type))"
    )
    cur.execute("CREATE INDEX ratings_by_ordinal ON ratings (game_type, ordinal)")


def _v4_social(cur: Cursor) -> None:
    """The /async protocol's social side and push notifications (docs/async-decisions.md S14,
    S15, S16): public chat lines, buddy and ignore lists, reports, linked devices and the
    notification outbox.

    Chat has no foreign key: its scope is 0 (the lobby) or a game id, and a purge deletes the
    lines of the games it deletes. Reports keep the reported name as typed (S14: nothing checks it).
    """
    binary = _binary(cur)
    cur.execute(
        "CREATE TABLE chat (scope BIGINT NOT NULL, seq BIGINT NOT NULL, sender BIGINT NOT NULL, "
        "sender_name TEXT NOT NULL, text TEXT NOT NULL, code INTEGER NOT NULL, "
        "sent_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (scope, seq))"
    )
    cur.execute(
        "CREATE TABLE relations (owner BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "other BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "kind VARCHAR(16) NOT NULL CHECK (kind IN ('buddy', 'ignore')), "
        "added DOUBLE PRECISION NOT NULL, PRIMARY KEY (owner, other, kind))"
    )
    # Who lists an account (the foreign key's other side: deleting an account looks it up).
    cur.execute("CREATE INDEX relations_by_other ON relations (other)")
    cur.execute(
        "CREATE TABLE reports (reporter BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "reported TEXT NOT NULL, scope BIGINT NOT NULL, text TEXT NOT NULL, "
        "at DOUBLE PRECISION NOT NULL, PRIMARY KEY (reporter, at))"
    )
    cur.execute("CREATE INDEX reports_by_at ON reports (at)")
    cur.execute(
        "CREATE TABLE devices (account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "device_type VARCHAR(32) NOT NULL, token TEXT NOT NULL, linked DOUBLE PRECISION NOT NULL, "
        "PRIMARY KEY (account_id, device_type, token))"
    )
    cur.execute(
        "CREATE TABLE notifications (id TEXT PRIMARY KEY, "
        "account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, "
        "device_type VARCHAR(32) NOT NULL, token TEXT NOT NULL, "
        f"payload {binary} NOT NULL, created DOUBLE PRECISION NOT NULL, attempts INTEGER NOT NULL, "
        "next_attempt DOUBLE PRECISION NOT NULL, delivered DOUBLE PRECISION)"
    )
    # The outbox's two questions: what is due (undelivered, by next attempt), what may go.
    cur.execute("CREATE INDEX notifications_due ON notifications (delivered, next_attempt)")
    cur.execute("CREATE INDEX notifications_by_account ON notifications (account_id)")


def _v5_game_snapshots(cur: Cursor) -> None:
    """The latest snapshot of each live game's state, so that a restart replays only the moves
    after it (storage/records.py, GameSnapshotRow). Games live so far have none: they are
    rebuilt from every move once, and snapshotted as they go on."""
    cur.execute(
        "CREATE TABLE game_snapshots (game_id VARCHAR(64) PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE, "
        f"moves INTEGER NOT NULL, version INTEGER NOT NULL, doc {_binary(cur)} NOT NULL)"
    )


def _v6_admin(cur: Cursor) -> None:
    """Operators and moderation: each account's role, revocation counter and ban,
    and the audit log of what admins did (filtered by when, who, what and whom)."""
    cur.execute("ALTER TABLE accounts ADD COLUMN role VARCHAR(16) NOT NULL DEFAULT ''")
    cur.execute("ALTER TABLE accounts ADD COLUMN revision INTEGER NOT NULL DEFAULT 0")
    cur.execute("ALTER TABLE accounts ADD COLUMN ban_reason TEXT NOT NULL DEFAULT ''")
    cur.execute("ALTER TABLE accounts ADD COLUMN ban_until DOUBLE PRECISION")
    cur.execute(
        "CREATE TABLE audit (id VARCHAR(64) PRIMARY KEY, at DOUBLE PRECISION NOT NULL, actor TEXT NOT NULL, "
        "action VARCHAR(32) NOT NULL, target TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL)"
    )
    cur.execute("CREATE INDEX audit_by_at ON audit (at, id)")


def _v7_game_results(cur: Cursor) -> None:
    """Each seat of each /async game that ends: players' profiles read their recent
    games, their record against each opponent and their rating history from it. No foreign keys:
    a result outlives its game's purge (a profile keeps its history; the replay is then gone),
    and robots' seats have no account. Games that ended before this version have no rows: their
    outcome is inside each game's opaque doc, which a migration does not decode."""
    cur.execute(
        "CREATE TABLE game_results (game_id BIGINT NOT NULL, seat INTEGER NOT NULL, "
        "game_type VARCHAR(64) NOT NULL, at DOUBLE PRECISION NOT NULL, account_id BIGINT, "
        "name TEXT NOT NULL, rank INTEGER, score DOUBLE PRECISION, mu DOUBLE PRECISION, "
        "sigma DOUBLE PRECISION, games INTEGER, change DOUBLE PRECISION, PRIMARY KEY (game_id, seat))"
    )
    cur.execute("CREATE INDEX game_results_by_account ON game_results (account_id, at)")


def _v8_last_seen(cur: Cursor) -> None:
    """When each account last signed in or out (the admin's profile of a player),
    kept across restarts; unknown (NULL) for the accounts of before."""
    cur.execute("ALTER TABLE accounts ADD COLUMN last_seen DOUBLE PRECISION")


def _v9_games_ended(cur: Cursor) -> None:
    """Finished games by when they ended (the admin's list of finished games, newest
    first, a page at a time; GET /api/games too): the indexes by state and by status get the
    time the game ended (an /async game's last change) and the id after it, so that the games
    of one state are a range of the index in that order (the state alone made every page read
    and sort every finished game). They replace the indexes by state and by status, whose
    lookups they serve as well."""
    cur.execute("DROP INDEX games_by_state")
    cur.execute("CREATE INDEX games_by_state_finished ON games (state, finished, id)")
    cur.execute("DROP INDEX async_games_by_status")
    cur.execute("CREATE INDEX async_games_by_status_updated ON async_games (status, updated, id)")


def _v10_no_index_by_finished(cur: Cursor) -> None:
    """The index of games by (finished, id), of version 1, serves no query since version 9's
    (state, finished, id) (`EXPLAIN QUERY PLAN` of every read of games): a page of it to write
    in each commit where a game starts or ends, for nothing."""
    cur.execute("DROP INDEX games_by_finished")


def _v11_move_runs(cur: Cursor) -> None:
    """Runs of moves: each commit's moves of one game in one row, keyed by its first move's
    number (storage/runs.py). A commit's moves of a game were as many rows and as many entries
    of the key's index as moves, and the index's pages were most of what a commit wrote to the
    WAL (docs/performance.md). The rows of ``moves`` stay as they are: every reader reads them
    with the runs (a game that was in progress at the migration has its first moves there, the
    next in runs), and nothing writes them any more.

    The key cannot refuse a move stored twice (it holds only each run's first move): the
    trigger ``move_runs_follow`` does, on both backends. A run must start where the game's stored
    moves end (after its last run, else after its ``moves`` rows, else at 0), so a run
    overlapping stored moves, or leaving a gap, fails its commit. Two PostgreSQL transactions
    that both pass the check (neither sees the other's uncommitted run) start at the same move:
    the key then refuses the second."""
    binary = _binary(cur)
    cur.execute(
        "CREATE TABLE move_runs (game_id VARCHAR(64) NOT NULL REFERENCES games (id) ON DELETE CASCADE, "
        f"seq INTEGER NOT NULL, count INTEGER NOT NULL CHECK (count BETWEEN 1 AND {RUN_LIMIT}), "
        f"doc {binary} NOT NULL, PRIMARY KEY (game_id, seq))"
    )
    # Where the game's stored moves end: after its last run, else after its old rows, else 0.
    stored_end = (
        "COALESCE((SELECT r.seq + r.count FROM move_runs r WHERE r.game_id = NEW.game_id "
        "ORDER BY r.seq DESC LIMIT 1), "
        "(SELECT MAX(m.seq) + 1 FROM moves m WHERE m.game_id = NEW.game_id), 0)"
    )
    refusal = "a run of moves must start where the stored moves of its game end"
    if isinstance(cur, sqlite3.Cursor):
        cur.execute(
            "CREATE TRIGGER move_runs_follow BEFORE INSERT ON move_runs "
            f"WHEN NEW.seq IS NOT {stored_end} "
            f"BEGIN SELECT RAISE(ABORT, '{refusal}'); END"
        )
    else:
        cur.execute(
            "CREATE FUNCTION move_runs_follow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.seq IS DISTINCT FROM {stored_end} THEN "
            f"RAISE EXCEPTION '{refusal} (game %, move %)', NEW.game_id, NEW.seq "
            "USING ERRCODE = 'unique_violation'; END IF; RETURN NEW; END $$"
        )
        cur.execute(
            "CREATE TRIGGER move_runs_follow BEFORE INSERT ON move_runs "
            "FOR EACH ROW EXECUTE FUNCTION move_runs_follow()"
        )


#: (version, what it does, the migration). Versions are 1, 2, ... with no gaps.
MIGRATIONS: list[tuple[int, str, Callable[[Cursor], None]]] = [
    (1, "players, games and moves", _v1_base),
    (2, "seats of finished games by handle", _v2_game_seats),
    (3, "accounts, games and turns of /async, ratings", _v3_async),
    (4, "chat, buddy and ignore lists, reports, devices, push notifications", _v4_social),
    (5, "snapshots of live games' states", _v5_game_snapshots),
    (6, "account roles, revocation counters and bans; the audit log", _v6_admin),
    (7, "the seats of ended /async games: ranks, scores and ratings after", _v7_game_results),
    (8, "when each account was last seen", _v8_last_seen),
    (9, "finished games of every protocol by when they ended", _v9_games_ended),
    (10, "no index of games by when they ended alone", _v10_no_index_by_finished),
    (11, "runs of moves: a game's moves of one commit in one row", _v11_move_runs),
]
LATEST = MIGRATIONS[-1][0]
