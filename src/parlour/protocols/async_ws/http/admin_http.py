"""The admin routes, HTTP JSON under ``/api/admin/`` (docs/operations.md has every
route with examples).

Every request is signed in with a session token (``Authorization: Bearer``), as a player's;
its account's role is read from the store at each request (``parlour admin grant|revoke``
changes it there, on a running server too), and a request of an account that is not an admin
is answered 403 on every route. Each admin request writes an audit record (who, what, when,
why, to whom) in the same transaction as the change it makes; a refused one (403) is audited
too. A change is answered once it is stored; a store that refuses it leaves nothing changed.

The rule for an admin acting on an admin: refused
(``parlour.accounts.moderation.acting_on_admin``, 403).

Routes that need the accounts, sessions and games are the /async hub's: in a cluster they are
forwarded to its owner like the other account routes (docs/cluster.md), so a ban there closes
the player's connection whichever node holds it.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, Final

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.core.rating_scale import shown_rating
from parlour.protocols.async_ws.http import account_actions
from parlour.protocols.async_ws.http.account_http import (
    RESET,
    error,
    json_reply,
    only,
)
from parlour.protocols.async_ws.http.admin_desk import (
    Act,
    AdminRuntime,
    Named,
    OtherGames,
    Timed,
    action,
    query_of,
    whole_number,
)
from parlour.protocols.async_ws.http.admin_games import AdminGames
from parlour.protocols.async_ws.players.ratings import ordinal
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.storage import AuditRow, ChatRow, ReportRow

__all__ = ["REPORTS_READ", "RESET_TTL", "AdminRoutes", "AdminRuntime", "OtherGames", "report_id"]

#: How long a password reset token lasts (a day: the operator hands it over by hand).
RESET_TTL: Final = 86_400.0
#: How many of the latest reports the queue and a profile read.
REPORTS_READ: Final = 500
#: The chat lines before a report (in its scope) shown with it.
CONTEXT_LINES: Final = 8
#: The audit action that closes a report (its target is the report's id).
REPORT_ACTION: Final = "report"
#: The longest ban or mute, in minutes (ten years; a ban for good has none).
MAX_MINUTES: Final = 10 * 366 * 24 * 60


def report_id(report: ReportRow) -> str:
    """A report's id in the API: its reporter and its time (the store's key)."""
    return f"{report.reporter}@{report.at!r}"


def _line(row: ChatRow, reported: str) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "sender": row.sender_name,
        "text": row.text,
        "at": row.sent_at,
        "reported": row.sender_name.casefold() == reported.casefold(),
    }


class AdminRoutes(AdminGames):
    """The handlers, bound to the /async service that owns the accounts."""

    def routes(self) -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
        table: dict[str, Callable[[Account, HttpRequest], Awaitable[ApiResponse]]] = {
            "/api/admin/dashboard": self.dashboard,
            "/api/admin/players": self.players,
            "/api/admin/player": self.player,
            "/api/admin/mute": self.mute,
            "/api/admin/ban": self.ban,
            "/api/admin/unban": self.unban,
            "/api/admin/reset": self.reset,
            "/api/admin/reports": self.reports,
            "/api/admin/reports/act": self.act,
            "/api/admin/games": self.games,
            "/api/admin/games/abort": self.abort,
            "/api/admin/audit": self.audit,
        }
        return {path: self._guarded(path, handler) for path, handler in table.items()}

    # -- Dashboard -------------------------------------------------------------------------------

    async def dashboard(self, admin: Account, request: HttpRequest) -> ApiResponse:
        """The last hour of this node's own figures, sampled every few seconds, as columns
        (``at``, ``connections``, ``players``, ``games``, ``moves_per_second``...)."""
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, set())
        if isinstance(query, ApiResponse):
            return query
        columns = self.dashboard_columns() if self.dashboard_columns is not None else {}
        return json_reply(HTTPStatus.OK, {"samples": columns})

    # -- Players ---------------------------------------------------------------------------------

    async def players(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, {"q", "limit"})
        if isinstance(query, ApiResponse):
            return query
        limit = whole_number(query.get("limit", "50"), 1, 500, "limit")
        if isinstance(limit, ApiResponse):
            return limit
        wanted = query.get("q", "").casefold()
        now = self.runtime.clock()
        found = [
            self._summary(account, now)
            for account in self.service.hub.accounts.values()
            if wanted in account.name.casefold()
        ]
        found.sort(key=lambda entry: (entry["name"].casefold() != wanted, entry["name"].casefold()))
        await self._audit_alone(admin, "players.search", "", "", {"q": wanted})
        return json_reply(HTTPStatus.OK, {"players": found[:limit]})

    def _summary(self, account: Account, now: float) -> dict[str, Any]:
        ban = account.ban if account.ban is not None and account.ban.active(now) else None
        return {
            "player_id": account.id,
            "name": account.name,
            "created": account.created,
            "online": account.id in self.service.hub.online,
            "banned": ban is not None,
        }

    async def player(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, {"name"})
        if isinstance(query, ApiResponse):
            return query
        account = self.service.account_named(query.get("name", ""))
        if account is None:
            return error(HTTPStatus.NOT_FOUND, f"no player is named {query.get('name', '')!r}")
        hub = self.service.hub
        now = self.runtime.clock()
        reports = await self._read_reports()
        ban = account.ban if account.ban is not None and account.ban.active(now) else None
        online = account.id in hub.online
        profile = {
            **self._summary(account, now),
            "role": await self._role(account),
            "last_seen": now if online else account.last_seen,
            "ban": None if ban is None else {"reason": ban.reason, "until": ban.until},
            "muted_until": hub.chat_log.muted_until(account.id, now),
            "ratings": {
                game_type: {
                    "rating": round(ordinal(mu, sigma), 3),
                    "mu": mu,
                    "sigma": sigma,
                    "games": games,
                    # As players see it (docs/ratings.md): "1520", "1480?" while provisional.
                    "shown": shown_rating(mu, games).text(),
                }
                for game_type, (mu, sigma, games) in sorted(account.ratings.items())
            },
            "games": {
                "rated": sum(games for _, _, games in account.ratings.values()),
                "live": [game.record.id for game in self.service.games.live(account.id)],
            },
            # Which kinds of device, never their tokens (secrets of the push services).
            "devices": [device_type for device_type, _ in hub.devices.linked(account.id)],
            "reports_by": [self._report(r) for r in reports if r.reporter == account.id],
            "reports_against": [
                self._report(r) for r in reports if r.reported.casefold() == account.name.casefold()
            ],
        }
        await self._audit_alone(admin, "players.view", account.name, "", {})
        return json_reply(HTTPStatus.OK, profile)

    async def _read_reports(self) -> list[ReportRow]:
        store = self.runtime.store
        if store is None:
            return []
        return await self.runtime.in_store_thread(lambda: store.reports(REPORTS_READ))

    def _report(self, report: ReportRow) -> dict[str, Any]:
        return {
            "id": report_id(report),
            "reporter": self.service.hub.accounts.name(report.reporter),
            "reported": report.reported,
            "scope": report.scope,
            "text": report.text,
            "at": report.at,
        }

    async def mute(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = action(request, Timed)
        if isinstance(body, ApiResponse):
            return body
        if body.minutes is None or not 0 <= body.minutes <= MAX_MINUTES:
            return error(
                HTTPStatus.BAD_REQUEST, f"'minutes' is a whole number from 0 (unmute) to {MAX_MINUTES}"
            )
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        return await self._mute(admin, account, body.minutes, body.reason, "mute", account.name, {})

    async def _mute(
        self,
        admin: Account,
        account: Account,
        minutes: int,
        reason: str,
        action: str,
        target: str,
        detail: dict[str, Any],
    ) -> ApiResponse:
        now = self.runtime.clock()
        until = now + minutes * 60.0
        account_actions.mute(self.service, account, until, now)
        record = self._audit(admin, action, target, reason, {**detail, "name": account.name, "until": until})
        failed = await self._commit(record)
        return failed or json_reply(
            HTTPStatus.OK, {"name": account.name, "muted_until": until if minutes else None}
        )

    async def ban(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = action(request, Timed)
        if isinstance(body, ApiResponse):
            return body
        if body.minutes is not None and not 1 <= body.minutes <= MAX_MINUTES:
            return error(
                HTTPStatus.BAD_REQUEST,
                f"'minutes' is a whole number from 1 to {MAX_MINUTES}, or null: for good",
            )
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        return await self._ban(admin, account, body.minutes, body.reason, "ban", account.name, {})

    async def _ban(
        self,
        admin: Account,
        account: Account,
        minutes: int | None,
        reason: str,
        action: str,
        target: str,
        detail: dict[str, Any],
    ) -> ApiResponse:
        now = self.runtime.clock()
        until = None if minutes is None else now + minutes * 60.0
        before = (account.ban, account.revision)
        account_actions.ban(self.service, account, reason, until, now)
        record = self._audit(admin, action, target, reason, {**detail, "name": account.name, "until": until})
        failed = await self._commit(record)
        if failed is not None:
            account.ban, account.revision = before
            return failed
        return json_reply(HTTPStatus.OK, {"name": account.name, "banned_until": until, "reason": reason})

    async def unban(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = action(request, Named)
        if isinstance(body, ApiResponse):
            return body
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        if account.ban is None or not account.ban.active(self.runtime.clock()):
            return error(HTTPStatus.CONFLICT, f"{account.name} is not banned")
        before = account.ban
        account_actions.unban(self.service, account)
        failed = await self._commit(
            self._audit(admin, "unban", account.name, body.reason, {"was": list(before)})
        )
        if failed is not None:
            account.ban = before
            return failed
        return json_reply(HTTPStatus.OK, {"name": account.name, "banned": False})

    async def reset(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = action(request, Named)
        if isinstance(body, ApiResponse):
            return body
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        now = self.runtime.clock()
        before = (account.password_hash, account.revision)
        account_actions.set_password(self.service, account, "", "an admin asked for a new password", now)
        failed = await self._commit(self._audit(admin, "reset", account.name, body.reason, {}))
        if failed is not None:
            account.password_hash, account.revision = before
            return failed
        token, expires = self.tokens.issue(account.id, account.name, now, account.revision, RESET, RESET_TTL)
        return json_reply(HTTPStatus.OK, {"name": account.name, "reset_token": token, "expires": expires})

    # -- Reports ---------------------------------------------------------------------------------

    async def _closed(self) -> dict[str, AuditRow]:
        store = self.runtime.store
        if store is None:
            return {}
        rows = await self.runtime.in_store_thread(
            lambda: store.audit_log(REPORTS_READ * 4, action=REPORT_ACTION)
        )
        return {row.target: row for row in rows}

    async def reports(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, {"status", "limit"})
        if isinstance(query, ApiResponse):
            return query
        status = query.get("status", "open")
        if status not in ("open", "closed", "all"):
            return error(HTTPStatus.BAD_REQUEST, "'status' is open, closed or all")
        limit = whole_number(query.get("limit", "50"), 1, REPORTS_READ, "limit")
        if isinstance(limit, ApiResponse):
            return limit
        reports = await self._read_reports()
        closed = await self._closed()
        chosen = [
            report
            for report in reports
            if status == "all" or (report_id(report) in closed) == (status == "closed")
        ][:limit]
        scopes = sorted({report.scope for report in chosen})
        store = self.runtime.store
        chat: dict[int, list[ChatRow]] = {}
        if store is not None and scopes:
            chat = await self.runtime.in_store_thread(lambda: store.load_chat(scopes, 200))
        listed = []
        for report in chosen:
            lines = [line for line in chat.get(report.scope, []) if line.sent_at <= report.at][
                -CONTEXT_LINES:
            ]
            decision = closed.get(report_id(report))
            listed.append(
                {
                    **self._report(report),
                    "context": [_line(line, report.reported) for line in lines],
                    "closed": None
                    if decision is None
                    else {
                        "by": decision.actor,
                        "at": decision.at,
                        "decision": msgspec.json.decode(decision.detail),
                    },
                }
            )
        await self._audit_alone(admin, "reports.list", "", "", {"status": status})
        return json_reply(HTTPStatus.OK, {"reports": listed})

    async def act(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = action(request, Act)
        if isinstance(body, ApiResponse):
            return body
        if body.action not in ("dismiss", "mute", "ban"):
            return error(HTTPStatus.BAD_REQUEST, "'action' is dismiss, mute or ban")
        reports = {report_id(report): report for report in await self._read_reports()}
        report = reports.get(body.report)
        if report is None:
            return error(HTTPStatus.NOT_FOUND, "no report has this id")
        # Checked and taken with no await between: two admins at once, the first one wins.
        taken = self._closing.get(body.report)
        if taken is not None:
            return error(HTTPStatus.CONFLICT, f"{taken} is closing this report right now", closed_by=taken)
        self._closing[body.report] = admin.name
        try:
            decision = (await self._closed()).get(body.report)
            if decision is not None:
                return error(
                    HTTPStatus.CONFLICT,
                    f"this report was closed already by {decision.actor}",
                    closed_by=decision.actor,
                    decision=msgspec.json.decode(decision.detail),
                )
            detail = {"action": body.action, "reported": report.reported}
            if body.action == "dismiss":
                failed = await self._commit(
                    self._audit(admin, REPORT_ACTION, body.report, body.reason, detail)
                )
                return failed or json_reply(HTTPStatus.OK, {"report": body.report, "action": "dismiss"})
            account = await self._target_checked(admin, report.reported)
            if isinstance(account, ApiResponse):
                return account  # an unknown name (reports keep the name as typed) or an admin
            if body.action == "mute":
                if body.minutes is None or not 1 <= body.minutes <= MAX_MINUTES:
                    return error(
                        HTTPStatus.BAD_REQUEST, f"'minutes' is a whole number from 1 to {MAX_MINUTES}"
                    )
                return await self._mute(
                    admin, account, body.minutes, body.reason, REPORT_ACTION, body.report, detail
                )
            if body.minutes is not None and not 1 <= body.minutes <= MAX_MINUTES:
                return error(
                    HTTPStatus.BAD_REQUEST, f"'minutes' is a whole number from 1 to {MAX_MINUTES}, or null"
                )
            return await self._ban(
                admin, account, body.minutes, body.reason, REPORT_ACTION, body.report, detail
            )
        finally:
            del self._closing[body.report]

    # -- Audit -----------------------------------------------------------------------------------

    async def audit(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, {"actor", "action", "target", "since", "before", "limit"})
        if isinstance(query, ApiResponse):
            return query
        limit = whole_number(query.get("limit", "100"), 1, 1000, "limit")
        if isinstance(limit, ApiResponse):
            return limit
        times: dict[str, float | None] = {}
        for key in ("since", "before"):
            text = query.get(key)
            try:
                times[key] = None if text is None else float(text)
            except ValueError:
                times[key] = math.nan
            if times[key] is not None and not math.isfinite(times[key] or 0.0):
                return error(HTTPStatus.BAD_REQUEST, f"'{key}' is a time in seconds since the epoch")
        store = self.runtime.store
        rows: list[AuditRow] = []
        if store is not None:
            rows = await self.runtime.in_store_thread(
                lambda: store.audit_log(
                    limit,
                    query.get("actor"),
                    query.get("action"),
                    query.get("target"),
                    times["since"],
                    times["before"],
                )
            )
        records = [
            {
                "id": row.id,
                "at": row.at,
                "actor": row.actor,
                "action": row.action,
                "target": row.target,
                "reason": row.reason,
                "detail": msgspec.json.decode(row.detail),
            }
            for row in rows
        ]
        await self._audit_alone(admin, "audit.view", "", "", {key: value for key, value in query.items()})
        return json_reply(HTTPStatus.OK, {"audit": records})
