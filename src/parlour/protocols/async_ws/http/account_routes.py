"""The account routes of the HTTP API (docs/async-decisions.md S4):

- ``POST /api/accounts {"name", "password"}`` -> 201 ``{"player_id", "name"}``; 409 when the name
  is taken (names compare case-insensitively), 400 naming what is wrong with the name or password.
- ``POST /api/sessions {"name", "password"}`` -> 200 ``{"token", "expires", "player_id", "name"}``;
  401 for a wrong name or password (the same answer for both), 429 with ``Retry-After`` once a
  name or an address failed too often, 403 ``{"error", "reason", "until"}`` for a banned
  account (the right password: why, and until when; ``until`` null: for good).
- ``GET /api/players?name=`` -> 200 ``{"player_id", "name"}`` (names compare case-insensitively),
  404 when nobody has that name: how a client finds whom to invite.
- ``GET /api/leaderboard?game_type=&limit=`` -> 200 ``{"game_type", "players": [{"player_id",
  "name", "rating", "provisional", "ordinal", "mu", "sigma", "games"}]}``: ``rating`` is the
  rating people see (parlour.core.rating_scale, docs/ratings.md), ``provisional`` until 5 games;
  settled players first, then provisional ones, each best rating first (ties: the higher
  ordinal, mu - 3 sigma, then the lower id).

Hashing runs on a worker thread (Argon2id takes tens of milliseconds on purpose), and an account
is answered only once it is stored. Passwords and tokens never reach a log.

The routes live with /async, whose service holds the accounts; ``parlour.accounts`` keeps the
account logic they use (names, passwords, tokens, limits). What they need of the runtime is
declared here (``Commits``), so that nothing here imports the transport above it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Final, Generic, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

import msgspec

from parlour.accounts.limits import LoginLimiter
from parlour.accounts.moderation import ban_words
from parlour.accounts.names import name_problem, password_problem
from parlour.accounts.passwords import hash_password, verify_password
from parlour.accounts.tokens import SessionTokens
from parlour.api import ApiResponse, HttpRequest
from parlour.core.effects import ConnId, Effect
from parlour.core.rating_scale import shown_rating
from parlour.core.service import Service
from parlour.protocols.async_ws.players.ratings import ordinal
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.protocols.jsonlimits import MAX_DEPTH, too_deep
from parlour.storage.base import StoreFailure

__all__ = ["AccountRoutes", "BoundRoutes", "Commits"]

MAX_LEADERS: Final = 200


class Credentials(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    password: str


def _json(status: HTTPStatus, body: object, headers: tuple[tuple[str, str], ...] = ()) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode(body), headers)


def _error(status: HTTPStatus, message: str, headers: tuple[tuple[str, str], ...] = ()) -> ApiResponse:
    return _json(status, {"error": message}, headers)


def _only(request: HttpRequest, method: str) -> ApiResponse | None:
    if request.method == method or (method == "GET" and request.method == "HEAD"):
        return None
    return _error(HTTPStatus.METHOD_NOT_ALLOWED, f"use {method}", (("Allow", method),))


def named_account(request: HttpRequest, service: AsyncService) -> Account | ApiResponse:
    """The account named by a GET's one parameter, ``name``; or the answer that refuses it."""
    refused = _only(request, "GET")
    if refused is not None:
        return refused
    query = parse_qs(urlsplit(request.target).query, keep_blank_values=True)
    unknown = set(query) - {"name"}
    if unknown:
        return _error(HTTPStatus.BAD_REQUEST, f"unknown parameter '{sorted(unknown)[0]}'")
    name = (query.get("name") or [""])[0]
    if not name:
        return _error(HTTPStatus.BAD_REQUEST, "'name' is required")
    account = service.account_named(name)
    if account is None:
        return _error(HTTPStatus.NOT_FOUND, f"nobody is named {name!r}")
    return account


def _credentials(request: HttpRequest) -> Credentials | ApiResponse:
    if "json" not in request.headers.get("content-type", "application/json"):
        return _error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (Content-Type: application/json)")
    if too_deep(request.body, MAX_DEPTH):
        return _error(HTTPStatus.BAD_REQUEST, f"JSON nested more than {MAX_DEPTH} levels deep")
    try:
        return msgspec.json.decode(request.body, type=Credentials)
    except msgspec.DecodeError as error:
        return _error(HTTPStatus.BAD_REQUEST, f'expected {{"name": ..., "password": ...}}: {error}')


class Commits(Protocol):
    """What the routes need of the runtime (``parlour.transport.runtime.Runtime`` is one): the
    time, and the commit of an account before it is answered (stored before shown)."""

    clock: Callable[[], float]

    async def stored(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None: ...


R = TypeVar("R", bound=Commits)


class BoundRoutes(Generic[R]):
    """Routes bound to the /async service that owns the accounts: what every account route
    needs (the runtime, the tokens, the login limits, and the password hashing, swappable so
    that tests need not wait for Argon2id)."""

    def __init__(
        self,
        service: AsyncService,
        runtime: R,
        tokens: SessionTokens,
        limiter: LoginLimiter,
        hash_with: Callable[[str], str] = hash_password,
        verify_with: Callable[[str, str], bool] = verify_password,
    ) -> None:
        self.service = service
        self.runtime = runtime
        self.tokens = tokens
        self.limiter = limiter
        self.hash = hash_with
        self.verify = verify_with


class AccountRoutes(BoundRoutes[Commits]):
    """The handlers, bound to the /async service that owns the accounts."""

    #: Compared against when the name is unknown, so both failures take the same time.
    _decoy: str | None = None

    def routes(self) -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
        return {
            "/api/accounts": self.accounts,
            "/api/sessions": self.sessions,
            "/api/leaderboard": self.leaderboard,
            "/api/players": self.players,
        }

    async def accounts(self, request: HttpRequest) -> ApiResponse:
        refused = _only(request, "POST")
        if refused is not None:
            return refused
        found = _credentials(request)
        if isinstance(found, ApiResponse):
            return found
        problem = name_problem(found.name) or password_problem(found.password)
        if problem is not None:
            return _error(HTTPStatus.BAD_REQUEST, problem)
        if self.service.account_named(found.name) is not None:
            return _error(HTTPStatus.CONFLICT, "this name is taken")
        password_hash = await asyncio.to_thread(self.hash, found.password)
        # The name may have been taken while the hash was computed: the service decides.
        account, effects = self.service.create_account(found.name, password_hash, self.runtime.clock())
        if account is None:
            return _error(HTTPStatus.CONFLICT, "this name is taken")
        try:
            await self.runtime.stored(effects, self.service)
        except StoreFailure:
            self.service.forget_account(account.id)
            return _error(HTTPStatus.SERVICE_UNAVAILABLE, "the account could not be saved; try again")
        return _json(HTTPStatus.CREATED, {"player_id": account.id, "name": account.name})

    async def sessions(self, request: HttpRequest) -> ApiResponse:
        refused = _only(request, "POST")
        if refused is not None:
            return refused
        found = _credentials(request)
        if isinstance(found, ApiResponse):
            return found
        now = self.runtime.clock()
        wait = self.limiter.check(found.name, request.client, now)
        if wait > 0:
            return _error(
                HTTPStatus.TOO_MANY_REQUESTS,
                "too many failed sign-ins; try again later",
                (("Retry-After", str(max(1, round(wait)))),),
            )
        account = self.service.account_named(found.name)
        stored_hash = account.password_hash if account is not None else ""
        if not stored_hash:
            # Unknown name, or an account of an external provider: never signed in with a
            # password. Spend the same time as a real check so the answer reveals nothing.
            if self._decoy is None:
                self._decoy = await asyncio.to_thread(self.hash, "decoy password")
            await asyncio.to_thread(self.verify, self._decoy, found.password)
            ok = False
        else:
            ok = await asyncio.to_thread(self.verify, stored_hash, found.password)
        now = self.runtime.clock()
        if not ok or account is None:
            self.limiter.failed(found.name, request.client, now)
            return _error(HTTPStatus.UNAUTHORIZED, "wrong name or password")
        self.limiter.succeeded(found.name, request.client, now)
        if account.ban is not None and account.ban.active(now):
            # The right password: the player may know why, and until when.
            return _json(
                HTTPStatus.FORBIDDEN,
                {"error": ban_words(account.ban), "reason": account.ban.reason, "until": account.ban.until},
            )
        # The token holds while the account's revocation counter stays where it is now.
        token, expires = self.tokens.issue(account.id, account.name, now, account.revision)
        return _json(
            HTTPStatus.OK, {"token": token, "expires": expires, "player_id": account.id, "name": account.name}
        )

    async def players(self, request: HttpRequest) -> ApiResponse:
        account = named_account(request, self.service)
        if isinstance(account, ApiResponse):
            return account
        return _json(HTTPStatus.OK, {"player_id": account.id, "name": account.name})

    async def leaderboard(self, request: HttpRequest) -> ApiResponse:
        refused = _only(request, "GET")
        if refused is not None:
            return refused
        query = parse_qs(urlsplit(request.target).query, keep_blank_values=True)
        unknown = set(query) - {"game_type", "limit"}
        if unknown:
            return _error(HTTPStatus.BAD_REQUEST, f"unknown parameter '{sorted(unknown)[0]}'")
        game_type = (query.get("game_type") or [""])[0]
        if not game_type:
            return _error(HTTPStatus.BAD_REQUEST, "'game_type' is required")
        limit_text = (query.get("limit") or ["50"])[0]
        # ASCII digits only, and few of them: int() refuses "²" and numbers past 4,300 digits.
        if not (limit_text.isascii() and limit_text.isdigit() and len(limit_text) <= 6) or not (
            1 <= int(limit_text) <= MAX_LEADERS
        ):
            return _error(HTTPStatus.BAD_REQUEST, f"'limit' must be a whole number from 1 to {MAX_LEADERS}")
        rated = [
            (shown_rating(mu, games), ordinal(mu, sigma), account.id, account.name, mu, sigma, games)
            for account in self.service.hub.accounts.values()
            if game_type in account.ratings
            for mu, sigma, games in [account.ratings[game_type]]
        ]
        rated.sort(key=lambda entry: (entry[0].provisional, -entry[0].rating, -entry[1], entry[2]))
        players = [
            {
                "player_id": pid,
                "name": name,
                "rating": seen.rating,
                "provisional": seen.provisional,
                "ordinal": round(rating, 3),
                "mu": round(mu, 3),
                "sigma": round(sigma, 3),
                "games": games,
            }
            for seen, rating, pid, name, mu, sigma, games in rated[: int(limit_text)]
        ]
        return _json(HTTPStatus.OK, {"game_type": game_type, "players": players})
