"""The admin routes, HTTP JSON under ``/api/admin/`` (issue 27; docs/operations.md has every
route with examples).

Every request is signed in with a session token (``Authorization: Bearer``), as a player's;
its account's role is read from the store at each request (``parlour admin grant|revoke``
changes it there, on a running server too), and a request of an account that is not an admin
is answered 403 on every route. Each admin request writes an audit record (who, what, when,
why, to whom) in the same transaction as the change it makes; a refused one (403) is audited
too. A change is answered once it is stored; a store that refuses it leaves nothing changed.

The rule for an admin acting on an admin: refused (``moderation.acting_on_admin``, 403).

Routes that need the accounts, sessions and games are the /async hub's: in a cluster they are
forwarded to its owner like the other account routes (docs/cluster.md), so a ban there closes
the player's connection whichever node holds it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from contextlib import suppress
from http import HTTPStatus
from typing import Any, Final, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

import msgspec

from parlour.accounts.moderation import ADMIN, MAX_REASON, acting_on_admin, audit_id
from parlour.accounts.tokens import SessionTokens
from parlour.api import ApiResponse, HttpRequest
from parlour.core.effects import Store as Remember
from parlour.core.rating_scale import shown_rating
from parlour.protocols.async_ws import moderation
from parlour.protocols.async_ws.aborts import UNKNOWN
from parlour.protocols.async_ws.account_http import (
    RESET,
    AccountSelfRoutes,
    StoreRuntime,
    decoded,
    error,
    json_reply,
    only,
)
from parlour.protocols.async_ws.accounts import Account
from parlour.protocols.async_ws.finished_games import PROTOCOLS, BadCursor, Cursor, decode_cursor, read_page
from parlour.protocols.async_ws.model import LIVE
from parlour.protocols.async_ws.placement import MOVING, NOT_SAVED
from parlour.protocols.async_ws.placing import Placing
from parlour.protocols.async_ws.ratings import ordinal
from parlour.protocols.async_ws.service import AsyncService
from parlour.storage import AuditRow, ChatRow, ReportRow
from parlour.storage.base import StoreFailure

__all__ = ["REPORTS_READ", "RESET_TTL", "AdminRoutes", "AdminRuntime", "OtherGames", "report_id"]

#: How long a password reset token lasts (a day: the operator hands it over by hand).
RESET_TTL: Final = 86_400.0
#: How many of the latest reports the queue and a profile read.
REPORTS_READ: Final = 500
#: The chat lines before a report (in its scope) shown with it.
CONTEXT_LINES: Final = 8
#: The audit action that closes a report (its target is the report's id).
REPORT_ACTION: Final = "report"
#: How long an abort waits for the owner of the game's shard, in a cluster.
SHARD_SECONDS: Final = 5.0
#: What an abort is answered when that owner does not answer in time.
NO_ANSWER: Final = "the node running this game did not answer in time; look at the games list before retrying"
#: How many finished games a page lists by default, and at most (``limit``).
FINISHED_PAGE: Final = 50
FINISHED_MAX: Final = 500
#: The longest ban or mute, in minutes (ten years; a ban for good has none).
MAX_MINUTES: Final = 10 * 366 * 24 * 60


#: What the admin routes need of the runtime: the same as a player's own account routes.
AdminRuntime = StoreRuntime


class OtherGames(Protocol):
    """The games of the other protocols (Apologies, Fish, Tsuro), as the app reaches them (in
    a cluster, on every node)."""

    async def live(self) -> list[dict[str, Any]]:
        """Every live game: ``{"protocol", "game_id", "game", "state", "players"}`` (and the
        ``node`` that runs it, in a cluster)."""
        ...

    async def abort(self, protocol: str, game_id: str, reason: str) -> str | None:
        """Abort one (its players told the reason), answered once stored: None, or why it
        cannot be (unknown game, over already). StoreFailure if it could not be stored."""
        ...


class Named(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    reason: str


class Timed(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    reason: str
    #: None: for good (bans only); 0 lifts a mute.
    minutes: int | None = None


class Act(msgspec.Struct, forbid_unknown_fields=True):
    report: str
    action: str
    reason: str
    minutes: int | None = None


class Abort(msgspec.Struct, forbid_unknown_fields=True):
    protocol: str
    game_id: str
    reason: str


Posted = TypeVar("Posted", Named, Timed, Act, Abort)


def posted(request: HttpRequest, kind: type[Posted]) -> Posted | ApiResponse:
    """An admin action's body as ``kind``, with a reason its audit record can keep; or the
    answer that refuses it (not a POST, not that body, no reason)."""
    refused = only(request, "POST")
    if refused is not None:
        return refused
    body = decoded(request, kind)
    if isinstance(body, ApiResponse):
        return body
    bad = _reason(body.reason)
    return body if bad is None else bad


def report_id(report: ReportRow) -> str:
    """A report's id in the API: its reporter and its time (the store's key)."""
    return f"{report.reporter}@{report.at!r}"


def _query(request: HttpRequest, allowed: set[str]) -> dict[str, str] | ApiResponse:
    query = parse_qs(urlsplit(request.target).query, keep_blank_values=True)
    unknown = set(query) - allowed
    if unknown:
        return error(HTTPStatus.BAD_REQUEST, f"unknown parameter '{sorted(unknown)[0]}'")
    return {key: values[0] for key, values in query.items()}


def _whole(text: str, low: int, high: int, what: str) -> int | ApiResponse:
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not low <= int(text) <= high:
        return error(HTTPStatus.BAD_REQUEST, f"'{what}' must be a whole number from {low} to {high}")
    return int(text)


def _reason(reason: str) -> ApiResponse | None:
    if not reason.strip():
        return error(HTTPStatus.BAD_REQUEST, "give a reason: it goes to the audit log")
    if len(reason) > MAX_REASON:
        return error(HTTPStatus.BAD_REQUEST, f"a reason has at most {MAX_REASON} characters")
    return None


def _refused(problem: str) -> ApiResponse:
    """An abort not done: over already (409), no answer, not stored or a game moving between
    nodes (503), else unknown (404)."""
    if "already" in problem:
        return error(HTTPStatus.CONFLICT, problem)
    if problem in (MOVING, NO_ANSWER, NOT_SAVED):
        return error(HTTPStatus.SERVICE_UNAVAILABLE, problem)
    return error(HTTPStatus.NOT_FOUND, problem)


def _line(row: ChatRow, reported: str) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "sender": row.sender_name,
        "text": row.text,
        "at": row.sent_at,
        "reported": row.sender_name.casefold() == reported.casefold(),
    }


class AdminRoutes:
    """The handlers, bound to the /async service that owns the accounts."""

    def __init__(
        self,
        service: AsyncService,
        runtime: AdminRuntime,
        tokens: SessionTokens,
        own: AccountSelfRoutes,
        other_games: OtherGames | None = None,
        dashboard: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.service = service
        self.runtime = runtime
        self.tokens = tokens
        self.own = own
        self.other_games = other_games
        #: The last hour of this node's figures as columns (metrics/history.py), if sampled.
        self.dashboard_columns = dashboard
        #: Reports being closed right now, by the admin closing each (two admins at once: the
        #: first one wins, the other is told who did).
        self._closing: dict[str, str] = {}

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

    # -- Who asks --------------------------------------------------------------------------------

    def _guarded(
        self, path: str, handler: Callable[[Account, HttpRequest], Awaitable[ApiResponse]]
    ) -> Callable[[HttpRequest], Awaitable[ApiResponse]]:
        async def guarded(request: HttpRequest) -> ApiResponse:
            admin = self.own.signed_in(request)
            if isinstance(admin, ApiResponse):
                return admin
            role = await self._role(admin)
            if role != ADMIN:
                await self._audit_alone(admin, "denied", path, "", {"method": request.method})
                return error(HTTPStatus.FORBIDDEN, "admins only")
            return await handler(admin, request)

        return guarded

    async def _role(self, account: Account) -> str:
        """The account's role as the store holds it now (the hub's copy without a store)."""
        store = self.runtime.store
        if store is None:
            return account.role
        try:
            row = await self.runtime.in_store_thread(lambda: store.account(account.id))
        except StoreFailure:
            return ""  # unknown: no admin powers while the store cannot say
        return row.role if row is not None else ""

    def _audit(
        self, admin: Account, action: str, target: str, reason: str, detail: dict[str, Any]
    ) -> AuditRow:
        now = self.runtime.clock()
        return AuditRow(
            id=audit_id(now),
            at=now,
            actor=admin.name,
            action=action,
            target=target,
            reason=reason,
            detail=msgspec.json.encode(detail).decode(),
        )

    async def _audit_alone(
        self, admin: Account, action: str, target: str, reason: str, detail: dict[str, Any]
    ) -> None:
        """An audit record of a request that changes nothing (a read, a refusal)."""
        # A read is answered all the same when its record cannot be stored (the store's failure
        # has its own log line).
        with suppress(StoreFailure):
            await self.runtime.stored([Remember([self._audit(admin, action, target, reason, detail)])])

    async def _commit(self, record: AuditRow) -> ApiResponse | None:
        """The hub's changes, with their audit record, stored in one transaction; 503 if not."""
        self.service.hub.store(record)
        effects = self.service.effects(self.runtime.clock())
        try:
            await self.runtime.stored(effects, self.service)
        except StoreFailure:
            return error(HTTPStatus.SERVICE_UNAVAILABLE, "the change could not be saved; nothing was done")
        return None

    def _target(self, admin: Account, name: str) -> Account | ApiResponse:
        """The account an admin acts on: 404 unknown, 403 an admin (the rule above)."""
        account = self.service.account_named(name)
        if account is None:
            return error(HTTPStatus.NOT_FOUND, f"no player is named {name!r}")
        refused = acting_on_admin(admin.id, account.id, account.role)
        if refused is not None:
            return error(HTTPStatus.FORBIDDEN, refused)
        return account

    async def _target_checked(self, admin: Account, name: str) -> Account | ApiResponse:
        """``_target``, with the target's role read from the store (granted meanwhile?)."""
        account = self._target(admin, name)
        if isinstance(account, ApiResponse):
            return account
        role = await self._role(account)
        refused = acting_on_admin(admin.id, account.id, role)
        return error(HTTPStatus.FORBIDDEN, refused) if refused is not None else account

    # -- Dashboard -------------------------------------------------------------------------------

    async def dashboard(self, admin: Account, request: HttpRequest) -> ApiResponse:
        """The last hour of this node's own figures, sampled every few seconds, as columns
        (``at``, ``connections``, ``players``, ``games``, ``moves_per_second``...)."""
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = _query(request, set())
        if isinstance(query, ApiResponse):
            return query
        columns = self.dashboard_columns() if self.dashboard_columns is not None else {}
        return json_reply(HTTPStatus.OK, {"samples": columns})

    # -- Players ---------------------------------------------------------------------------------

    async def players(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = _query(request, {"q", "limit"})
        if isinstance(query, ApiResponse):
            return query
        limit = _whole(query.get("limit", "50"), 1, 500, "limit")
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
        query = _query(request, {"name"})
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
        body = posted(request, Timed)
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
        moderation.mute(self.service, account, until, now)
        record = self._audit(admin, action, target, reason, {**detail, "name": account.name, "until": until})
        failed = await self._commit(record)
        return failed or json_reply(
            HTTPStatus.OK, {"name": account.name, "muted_until": until if minutes else None}
        )

    async def ban(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = posted(request, Timed)
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
        moderation.ban(self.service, account, reason, until, now)
        record = self._audit(admin, action, target, reason, {**detail, "name": account.name, "until": until})
        failed = await self._commit(record)
        if failed is not None:
            account.ban, account.revision = before
            return failed
        return json_reply(HTTPStatus.OK, {"name": account.name, "banned_until": until, "reason": reason})

    async def unban(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = posted(request, Named)
        if isinstance(body, ApiResponse):
            return body
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        if account.ban is None or not account.ban.active(self.runtime.clock()):
            return error(HTTPStatus.CONFLICT, f"{account.name} is not banned")
        before = account.ban
        moderation.unban(self.service, account)
        failed = await self._commit(
            self._audit(admin, "unban", account.name, body.reason, {"was": list(before)})
        )
        if failed is not None:
            account.ban = before
            return failed
        return json_reply(HTTPStatus.OK, {"name": account.name, "banned": False})

    async def reset(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = posted(request, Named)
        if isinstance(body, ApiResponse):
            return body
        account = await self._target_checked(admin, body.name)
        if isinstance(account, ApiResponse):
            return account
        now = self.runtime.clock()
        before = (account.password_hash, account.revision)
        moderation.set_password(self.service, account, "", "an admin asked for a new password", now)
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
        query = _query(request, {"status", "limit"})
        if isinstance(query, ApiResponse):
            return query
        status = query.get("status", "open")
        if status not in ("open", "closed", "all"):
            return error(HTTPStatus.BAD_REQUEST, "'status' is open, closed or all")
        limit = _whole(query.get("limit", "50"), 1, REPORTS_READ, "limit")
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
        body = posted(request, Act)
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

    # -- Games -----------------------------------------------------------------------------------

    async def games(self, admin: Account, request: HttpRequest) -> ApiResponse:
        """The live games (``state=live``, the default: in memory, every node's in a cluster),
        or the finished ones (``state=finished``: from the store, newest first, a page of
        ``limit`` at a time, ``before`` the ``next`` of the page before)."""
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = _query(request, {"protocol", "state", "limit", "before"})
        if isinstance(query, ApiResponse):
            return query
        protocol = query.get("protocol", "")
        if protocol not in ("", *PROTOCOLS):
            return error(HTTPStatus.BAD_REQUEST, f"'protocol' is one of {', '.join(PROTOCOLS)}")
        state = query.get("state", "live")
        if state not in ("live", "finished"):
            return error(HTTPStatus.BAD_REQUEST, "'state' is live or finished")
        if state == "finished":
            return await self._finished(admin, query, protocol)
        if "limit" in query or "before" in query:
            return error(HTTPStatus.BAD_REQUEST, "'limit' and 'before' page the finished games only")
        found: list[dict[str, Any]] = []
        if protocol in ("", "async"):
            hub = self.service.hub
            for game in self.service.games.values():
                if game.status not in LIVE:
                    continue
                found.append(
                    {
                        "protocol": "async",
                        "game_id": str(game.id),
                        "game": game.config.game_type,
                        "state": game.status,
                        "players": [
                            seat.name if seat.player_id is None else hub.accounts.name(seat.player_id)
                            for seat in game.seats
                        ],
                    }
                )
        if protocol != "async" and self.other_games is not None:
            found += [game for game in await self.other_games.live() if protocol in ("", game["protocol"])]
        await self._audit_alone(admin, "games.list", "", "", {"protocol": protocol, "state": state})
        return json_reply(HTTPStatus.OK, {"games": found})

    async def _finished(self, admin: Account, query: dict[str, str], protocol: str) -> ApiResponse:
        limit = _whole(query.get("limit", str(FINISHED_PAGE)), 1, FINISHED_MAX, "limit")
        if isinstance(limit, ApiResponse):
            return limit
        try:
            cursor = decode_cursor(query["before"]) if "before" in query else Cursor(None, None)
        except BadCursor as bad:
            return error(HTTPStatus.BAD_REQUEST, str(bad))
        found: list[dict[str, Any]] = []
        after: str | None = None
        store = self.runtime.store
        if store is not None:
            try:
                found, after = await self.runtime.in_store_thread(
                    lambda: read_page(store, protocol, limit, cursor)
                )
            except StoreFailure:
                return error(HTTPStatus.SERVICE_UNAVAILABLE, "the store cannot be read; try again")
        await self._audit_alone(
            admin,
            "games.list",
            "",
            "",
            {"protocol": protocol, "state": "finished", "before": query.get("before")},
        )
        return json_reply(HTTPStatus.OK, {"games": found, "next": after})

    async def abort(self, admin: Account, request: HttpRequest) -> ApiResponse:
        body = posted(request, Abort)
        if isinstance(body, ApiResponse):
            return body
        target = f"{body.protocol}:{body.game_id}"
        if body.protocol == "async":
            if not (body.game_id.isascii() and body.game_id.isdigit() and len(body.game_id) <= 18):
                return error(HTTPStatus.NOT_FOUND, UNKNOWN)
            game_id = int(body.game_id)
            placing = self.service.placing
            if placing is not None and self.service.games.is_placed(game_id):
                problem = await self._abort_on_shard(placing, game_id, body.reason)
            else:
                problem = moderation.abort_game(self.service, game_id, body.reason, self.runtime.clock())
            if problem is not None:
                self.service.effects(self.runtime.clock())  # nothing was changed: nothing to keep
                return _refused(problem)
            failed = await self._commit(self._audit(admin, "abort", target, body.reason, {}))
            return failed or json_reply(
                HTTPStatus.OK, {"protocol": "async", "game_id": body.game_id, "aborted": True}
            )
        if self.other_games is None or body.protocol not in ("apologies", "fish", "tsuro"):
            return error(HTTPStatus.BAD_REQUEST, "'protocol' is async, apologies, fish or tsuro")
        try:
            problem = await self.other_games.abort(body.protocol, body.game_id, body.reason)
            if problem is not None:
                return error(HTTPStatus.CONFLICT if "already" in problem else HTTPStatus.NOT_FOUND, problem)
            await self.runtime.stored([Remember([self._audit(admin, "abort", target, body.reason, {})])])
        except StoreFailure:
            return error(HTTPStatus.SERVICE_UNAVAILABLE, "the abort could not be saved; try again")
        return json_reply(
            HTTPStatus.OK, {"protocol": body.protocol, "game_id": body.game_id, "aborted": True}
        )

    async def _abort_on_shard(self, placing: Placing, game_id: int, reason: str) -> str | None:
        """A cluster's started game runs on its shard's owner: the abort goes there as a note,
        and is answered once stored there (None), or refused with why."""
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def answered(problem: str | None) -> None:
            if not answer.done():
                answer.set_result(problem)

        call = placing.abort(game_id, reason, answered)
        await self.runtime.stored(self.service.effects(self.runtime.clock()), self.service)
        try:
            return await asyncio.wait_for(answer, SHARD_SECONDS)
        except TimeoutError:
            return NO_ANSWER
        finally:
            placing.forget(call)

    # -- Audit -----------------------------------------------------------------------------------

    async def audit(self, admin: Account, request: HttpRequest) -> ApiResponse:
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = _query(request, {"actor", "action", "target", "since", "before", "limit"})
        if isinstance(query, ApiResponse):
            return query
        limit = _whole(query.get("limit", "100"), 1, 1000, "limit")
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
