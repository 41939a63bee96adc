"""The /async protocol's reads of the store (docs/async-decisions.md S4, S10, S11): accounts,
games, ratings, results and the audit log, then its social side and the push outbox (S14-S16).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from parlour.storage.records import (
    ASYNC_FINISHED_STATUSES,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceRow,
    GameResultRow,
    NotificationRow,
    Opponent,
    RatingRow,
    RelationRow,
    ReportRow,
)
from parlour.storage.sqlbase import SQLBase
from parlour.storage.tables import (
    ACCOUNTS,
    ASYNC_GAMES,
    ASYNC_TURNS,
    AUDIT,
    CHAT,
    DEVICES,
    GAME_RESULTS,
    NOTIFICATIONS,
    RATINGS,
    RELATIONS,
    REPORTS,
)
from parlour.storage.writes import MAX_VALUES, Cursor, write_records

__all__ = ["AsyncQueries"]


class AsyncQueries(SQLBase):
    """What the /async services read, in portable SQL."""

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
