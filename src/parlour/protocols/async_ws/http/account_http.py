"""A player's own account over HTTP JSON, beside the routes of account_routes.py:

- ``POST /api/account/password {"password", "new_password"}`` (signed in) -> 200 ``{"token",
  "expires"}``: the new password holds, every other session ends (their tokens are refused
  from now on), and this token is the one that still signs in.
- ``POST /api/account/sign-out {}`` (signed in) -> 200 ``{"signed_out": true}``: every token
  of the account is refused from now on, this one included, and its connection is closed.
- ``POST /api/account/delete {"password"}`` (signed in) -> 200 ``{"deleted": true}``: the
  account's personal data is removed and its name freed (account_actions.delete_account).
- ``POST /api/account/reset {"name", "reset_token", "new_password"}`` -> 200 ``{"token",
  "expires"}``: sets a password with the one-time token an admin handed over
  (``POST /api/admin/reset``); it is refused once used.

"Signed in" is ``Authorization: Bearer <session token>``: 401 without a valid one (expired,
revoked, of a banned account: the answer says which). A wrong password is 403 and counts
against the login limits as a failed sign-in does. Each change is stored before it is answered;
a store that refuses it leaves nothing changed (503).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Final, Protocol, TypeVar

import msgspec

from parlour.accounts.names import password_problem
from parlour.accounts.tokens import TokenError
from parlour.api import ApiResponse, HttpRequest
from parlour.protocols.async_ws.http import account_actions
from parlour.protocols.async_ws.http.account_routes import BoundRoutes, Commits
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.protocols.jsonlimits import MAX_DEPTH, too_deep
from parlour.storage.base import Store, StoreFailure

__all__ = [
    "RESET",
    "AccountSelfRoutes",
    "StoreRuntime",
    "bearer",
    "decoded",
    "error",
    "json_reply",
    "only",
    "posted",
]

T = TypeVar("T")


class StoreRuntime(Commits, Protocol):
    """What these routes and the admin routes need of the runtime
    (``parlour.transport.runtime.Runtime``): the time, commits to wait for, and reads and
    writes on the store's thread (None: no store)."""

    store: Store | None

    async def in_store_thread(self, work: Callable[[], T]) -> T: ...


#: The ``use`` claim of a password reset token (tokens.SessionTokens.issue).
RESET: Final = "reset"


def json_reply(status: HTTPStatus, body: object, headers: tuple[tuple[str, str], ...] = ()) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode(body), headers)


def error(status: HTTPStatus, message: str, **more: object) -> ApiResponse:
    return json_reply(status, {"error": message, **more})


def only(request: HttpRequest, method: str) -> ApiResponse | None:
    if request.method == method or (method == "GET" and request.method == "HEAD"):
        return None
    return json_reply(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"use {method}"}, (("Allow", method),))


def decoded(request: HttpRequest, kind: type[T]) -> T | ApiResponse:
    """The JSON body as ``kind``, or the 4xx that says what is wrong with it."""
    if "json" not in request.headers.get("content-type", "application/json"):
        return error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (Content-Type: application/json)")
    if too_deep(request.body, MAX_DEPTH):
        return error(HTTPStatus.BAD_REQUEST, f"JSON nested more than {MAX_DEPTH} levels deep")
    try:
        return msgspec.json.decode(request.body or b"{}", type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as problem:
        return error(HTTPStatus.BAD_REQUEST, f"bad request body: {problem}")


def posted(request: HttpRequest, kind: type[T]) -> T | ApiResponse:
    """A POST's JSON body as ``kind``, or the answer that refuses it (another method, or a body
    ``decoded`` refuses)."""
    refused = only(request, "POST")
    return refused if refused is not None else decoded(request, kind)


def bearer(request: HttpRequest) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class PasswordChange(msgspec.Struct, forbid_unknown_fields=True):
    password: str
    new_password: str


class PasswordOnly(msgspec.Struct, forbid_unknown_fields=True):
    password: str


class Nothing(msgspec.Struct, forbid_unknown_fields=True):
    pass


class Reset(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    reset_token: str
    new_password: str


class AccountSelfRoutes(BoundRoutes[StoreRuntime]):
    """The handlers, bound to the /async service that owns the accounts."""

    def routes(self) -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
        return {
            "/api/account/password": self.password,
            "/api/account/sign-out": self.sign_out,
            "/api/account/delete": self.delete,
            "/api/account/reset": self.reset,
        }

    def _signed_post(self, request: HttpRequest, kind: type[T]) -> tuple[Account, T] | ApiResponse:
        """A signed-in player's POST with a body of ``kind``; or the answer that refuses it."""
        refused = only(request, "POST")
        if refused is not None:
            return refused
        account = self.signed_in(request)
        if isinstance(account, ApiResponse):
            return account
        body = decoded(request, kind)
        if isinstance(body, ApiResponse):
            return body
        return account, body

    def signed_in(self, request: HttpRequest) -> Account | ApiResponse:
        """The account of the request's session token, or 401 saying why not."""
        token = bearer(request)
        if token is None:
            return error(HTTPStatus.UNAUTHORIZED, "send the session token: Authorization: Bearer <token>")
        try:
            return self.service.token_account(token, self.runtime.clock())
        except TokenError as refused:
            return error(HTTPStatus.UNAUTHORIZED, str(refused))

    async def _password_ok(self, account: Account, password: str, request: HttpRequest) -> ApiResponse | None:
        """None if ``password`` is the account's; else 403 (or 429 past the login limits)."""
        now = self.runtime.clock()
        wait = self.limiter.check(account.name, request.client, now)
        if wait > 0:
            return error(
                HTTPStatus.TOO_MANY_REQUESTS,
                "too many failed sign-ins; try again later",
                retry_after=round(wait),
            )
        ok = bool(account.password_hash) and await asyncio.to_thread(
            self.verify, account.password_hash, password
        )
        if not ok:
            self.limiter.failed(account.name, request.client, self.runtime.clock())
            return error(HTTPStatus.FORBIDDEN, "wrong password")
        return None

    async def _commit(self, account: Account, before: Account) -> ApiResponse | None:
        """Store what the hub's output holds; on a refusal, the account as it was (503)."""
        effects = self.service.effects(self.runtime.clock())
        try:
            await self.runtime.stored(effects, self.service)
        except StoreFailure:
            self.service.hub.accounts.put_back(before.row())
            return error(HTTPStatus.SERVICE_UNAVAILABLE, "the change could not be saved; try again")
        return None

    def _new_session(self, account: Account) -> ApiResponse:
        token, expires = self.tokens.issue(account.id, account.name, self.runtime.clock(), account.revision)
        return json_reply(HTTPStatus.OK, {"token": token, "expires": expires, "name": account.name})

    async def password(self, request: HttpRequest) -> ApiResponse:
        posted = self._signed_post(request, PasswordChange)
        if isinstance(posted, ApiResponse):
            return posted
        account, body = posted
        problem = password_problem(body.new_password)
        if problem is not None:
            return error(HTTPStatus.BAD_REQUEST, problem)
        wrong = await self._password_ok(account, body.password, request)
        if wrong is not None:
            return wrong
        new_hash = await asyncio.to_thread(self.hash, body.new_password)
        before = _copy(account)
        account_actions.set_password(
            self.service, account, new_hash, "the password was changed: sign in again", self.runtime.clock()
        )
        failed = await self._commit(account, before)
        return failed or self._new_session(account)

    async def sign_out(self, request: HttpRequest) -> ApiResponse:
        posted = self._signed_post(request, Nothing)
        if isinstance(posted, ApiResponse):
            return posted
        account, _ = posted
        before = _copy(account)
        account_actions.end_sessions(self.service, account, "signed out everywhere", self.runtime.clock())
        failed = await self._commit(account, before)
        return failed or json_reply(HTTPStatus.OK, {"signed_out": True})

    async def delete(self, request: HttpRequest) -> ApiResponse:
        posted = self._signed_post(request, PasswordOnly)
        if isinstance(posted, ApiResponse):
            return posted
        account, body = posted
        revision = account.revision
        wrong = await self._password_ok(account, body.password, request)
        if wrong is not None:
            return wrong
        # The finished games only the store holds, read and rewritten first (the one commit
        # below then erases everything at once); those in memory are the hub's to rename.
        in_memory = set(self.service.games)
        rewrite = account_actions.seats_renamed(account.id, account_actions.alias_of(account.id))
        store = self.runtime.store
        games: list[tuple[int, bytes]] = []
        if store is not None:
            try:
                games = await self.runtime.in_store_thread(
                    lambda: [
                        (row.id, doc)
                        for row in store.finished_async_games()
                        if row.id not in in_memory and (doc := rewrite(row.doc)) is not None
                    ]
                )
            except StoreFailure:
                return error(
                    HTTPStatus.SERVICE_UNAVAILABLE, "the store cannot be read now; nothing was deleted"
                )
        if account.revision != revision:  # deleted, signed out or banned while this waited
            return error(HTTPStatus.UNAUTHORIZED, "this session ended meanwhile; nothing was deleted")
        before = _copy(account)
        account_actions.delete_account(self.service, account, self.runtime.clock(), games)
        failed = await self._commit(account, before)
        return failed or json_reply(HTTPStatus.OK, {"deleted": True})

    async def reset(self, request: HttpRequest) -> ApiResponse:
        body = posted(request, Reset)
        if isinstance(body, ApiResponse):
            return body
        problem = password_problem(body.new_password)
        if problem is not None:
            return error(HTTPStatus.BAD_REQUEST, problem)
        now = self.runtime.clock()
        try:
            account_id, _, revision = self.tokens.read(body.reset_token, now, body.name, RESET)
        except TokenError as bad:
            return error(HTTPStatus.UNAUTHORIZED, f"the reset token is not valid: {bad}")
        account = self.service.hub.accounts.get(account_id)
        if account is None or account.name.casefold() != body.name.casefold():
            return error(HTTPStatus.UNAUTHORIZED, "the reset token is not valid: no such account")
        if account.revision != revision:
            return error(
                HTTPStatus.UNAUTHORIZED, "the reset token was used already, or replaced by a newer one"
            )
        new_hash = await asyncio.to_thread(self.hash, body.new_password)
        if account.revision != revision:  # used meanwhile, while this one was hashing
            return error(
                HTTPStatus.UNAUTHORIZED, "the reset token was used already, or replaced by a newer one"
            )
        before = _copy(account)
        account_actions.set_password(
            self.service, account, new_hash, "the password was reset: sign in again", now
        )
        failed = await self._commit(account, before)
        return failed or self._new_session(account)


def _copy(account: Account) -> Account:
    return Account(
        account.id,
        account.name,
        account.password_hash,
        dict(account.ratings),
        account.created,
        account.role,
        account.revision,
        account.ban,
        account.last_seen,
    )
