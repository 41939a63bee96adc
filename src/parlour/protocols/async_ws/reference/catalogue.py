"""What a client needs to know before it plays: the games, their seats and the words for codes.

``GET /api/async/catalogue`` -> 200 ``{"games": [{"rules", "name", "min_seats", "max_seats"}],
"errors": {code: words}, "join_denied": {cause: words}, "start_denied": {cause: words},
"observe_denied": {status: words}, "connection_errors": {reason: words}}``.

The games are the server-rules plugins (``rules.RULES``), their seat ranges the plugins' own
(``rules.seat_range``), so a client never keeps a copy that could drift from what the server
accepts. The words are English sentences for each code the messages declare (``ErrorRequest.code``,
``LobbyJoinDeniedRequest.cause``, ``LobbyStartGameDeniedRequest.cause``,
``GameObservedRequest.status`` and ``AsyncConnectionErrorRequest.reason``): they live here, next
to the server that sends the codes, and a test checks that every declared code has its words.
The answer is the same for everyone and needs no account.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from http import HTTPStatus
from types import MappingProxyType
from typing import Any, Final

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.protocols.async_ws.game.rules import RULES, seat_range

__all__ = [
    "CATALOGUE_PATH",
    "CONNECTION_ERRORS",
    "ERRORS",
    "JOIN_DENIED",
    "OBSERVE_DENIED",
    "START_DENIED",
    "catalogue",
    "catalogue_routes",
]

CATALOGUE_PATH: Final = "/api/async/catalogue"

#: ErrorRequest.code: a title for the error (the server's message says the rest).
ERRORS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "BAD_REQUEST": "The server refused this",
        "INDEX_CONFLICT": "That turn was already played",
        "INTERNAL_ERROR": "Server error",
        "NOT_YOUR_TURN": "It is not your turn",
        "PLAYER_ALREADY_IN_LOBBY": "You are in the lobby already",
        "RATE_LIMITED": "Too many requests",
        "TOO_LARGE": "Too large",
        "TOO_MANY_OFFERS": "Too many games",
        "TRY_AGAIN": "Nothing changed: try again in a moment",
        "UNAUTHENTICATED": "Not signed in",
        "UNKNOWN_GAME": "No such game",
        "UNKNOWN_PLAYER": "Unknown player",
        "YOU_FORFEITED": "You forfeited this game",
        "YOU_LEFT": "You left this game",
        "YOU_RAN_OUT_OF_TIME": "You ran out of time in this game",
        "ALREADY_QUEUED": "You are waiting for that game already",
        "NOT_QUEUED": "You are not waiting for that game",
    }
)
#: LobbyJoinDeniedRequest.cause, to follow "Cannot join: ".
JOIN_DENIED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "ALREADY_JOINED": "you are in it already",
        "ALREADY_STARTED": "it has started",
        "GAME_FULL": "it is full",
        "TOO_MANY_GAMES": "you are in too many games",
        "UNKNOWN_GAME": "it is no longer open",
        "WRONG_PASSWORD": "the password is wrong",
    }
)
#: LobbyStartGameDeniedRequest.cause, to follow "Cannot start: ".
START_DENIED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "ALREADY_STARTED": "it has started already",
        "NOT_CREATOR": "only its creator can start it",
        "NOT_ENOUGH_PLAYERS": "not enough players have joined yet",
        "UNKNOWN_GAME": "it is no longer open",
    }
)
#: GameObservedRequest.status other than OK, to follow "Cannot watch: ".
OBSERVE_DENIED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "BUDDIES_ONLY": "only its players' buddies may watch it",
        "GAME_NOT_RUNNING": "it is not being played",
        "NOT_IN_LOBBY": "enter the lobby first",
        "NOT_OBSERVABLE": "its players do not allow watching",
        "PLAYING_IN_GAME": "you play in it",
        "PRIVATE_GAME": "it is private",
        "UNKNOWN_GAME": "it is over",
    }
)
#: AsyncConnectionErrorRequest.reason: what the player should do now.
CONNECTION_ERRORS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "BAD_CREDENTIALS": "Your session is no longer valid: sign in again.",
        "EXPIRED_TOKEN": "Your session has expired: sign in again.",
        "RATE_LIMITED": "Too many failed sign-ins: wait a little and sign in again.",
        "REPLACED": "You signed in on another page or device: this page stopped. Reload it to play here.",
    }
)


def catalogue() -> dict[str, Any]:
    """The body of GET /api/async/catalogue (a fresh dict: cheap, and nothing cached to go stale)."""
    games = []
    for rules in RULES:
        low, high = seat_range(rules)
        games.append({"rules": rules, "name": rules.capitalize(), "min_seats": low, "max_seats": high})
    return {
        "games": games,
        "errors": dict(ERRORS),
        "join_denied": dict(JOIN_DENIED),
        "start_denied": dict(START_DENIED),
        "observe_denied": dict(OBSERVE_DENIED),
        "connection_errors": dict(CONNECTION_ERRORS),
    }


async def serve_catalogue(request: HttpRequest) -> ApiResponse:
    if request.method not in ("GET", "HEAD"):
        body = msgspec.json.encode({"error": "use GET"})
        return ApiResponse(HTTPStatus.METHOD_NOT_ALLOWED, body, (("Allow", "GET"),))
    return ApiResponse(HTTPStatus.OK, msgspec.json.encode(catalogue()))


def catalogue_routes() -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
    """The route to merge into the port's HTTP handlers (app.py)."""
    return {CATALOGUE_PATH: serve_catalogue}
