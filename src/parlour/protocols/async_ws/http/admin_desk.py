"""What every admin route shares (docs/operations.md): who asks (signed in, an admin by the
store's word, else 403 and an audit record), the audit record of each request, the commit of a
change with its record, the account an admin acts on, and the requests' bodies and queries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from http import HTTPStatus
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

import msgspec

from parlour.accounts.moderation import ADMIN, MAX_REASON, acting_on_admin, audit_id
from parlour.accounts.tokens import SessionTokens
from parlour.api import ApiResponse, HttpRequest
from parlour.core.effects import Store as Remember
from parlour.protocols.async_ws.http.account_http import AccountSelfRoutes, StoreRuntime, error, posted
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.storage import AuditRow
from parlour.storage.base import StoreFailure

__all__ = [
    "Abort",
    "Act",
    "AdminDesk",
    "AdminRuntime",
    "Named",
    "OtherGames",
    "Timed",
    "action",
    "query_of",
    "whole_number",
]

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


def action(request: HttpRequest, kind: type[Posted]) -> Posted | ApiResponse:
    """An admin action's body as ``kind``, with a reason its audit record can keep; or the
    answer that refuses it (not a POST, not that body, no reason)."""
    body = posted(request, kind)
    if isinstance(body, ApiResponse):
        return body
    bad = _reason(body.reason)
    return body if bad is None else bad


def query_of(request: HttpRequest, allowed: set[str]) -> dict[str, str] | ApiResponse:
    query = parse_qs(urlsplit(request.target).query, keep_blank_values=True)
    unknown = set(query) - allowed
    if unknown:
        return error(HTTPStatus.BAD_REQUEST, f"unknown parameter '{sorted(unknown)[0]}'")
    return {key: values[0] for key, values in query.items()}


def whole_number(text: str, low: int, high: int, what: str) -> int | ApiResponse:
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not low <= int(text) <= high:
        return error(HTTPStatus.BAD_REQUEST, f"'{what}' must be a whole number from {low} to {high}")
    return int(text)


def _reason(reason: str) -> ApiResponse | None:
    if not reason.strip():
        return error(HTTPStatus.BAD_REQUEST, "give a reason: it goes to the audit log")
    if len(reason) > MAX_REASON:
        return error(HTTPStatus.BAD_REQUEST, f"a reason has at most {MAX_REASON} characters")
    return None


class AdminDesk:
    """The admin routes' shared state and prelude, bound to the /async service that owns the
    accounts."""

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
