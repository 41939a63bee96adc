"""The HTTP API over the store: game records and replays.

- ``GET /api/games?game_type=&player=&state=&limit=&before=``: finished games (``state``:
  COMPLETED, CANCELLED or ABORTED; all three by default), newest first.
  ``limit`` is 1-200 (default 50); ``next`` in the answer is the ``before`` of the next page.
- ``GET /api/games/{id}``: one game with every move and what a spectator could see after it.

Handlers are plain functions of the store and the request (run on the store's thread by the
transport); bad parameters get 400 with a JSON ``error`` naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from parlour.games.registry import GAMES
from parlour.replays import game_json, summary_json
from parlour.storage import Store
from parlour.storage.migrations import FINISHED_STATES

__all__ = ["ApiResponse", "HttpRequest", "handle_api"]

MAX_LIMIT = 200
DEFAULT_LIMIT = 50


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request as the transport read it, for handlers that need more than a GET path."""

    method: str
    #: The request target as sent (path and query).
    target: str
    #: The path alone, without the query.
    path: str
    #: Header names in lower case.
    headers: Mapping[str, str]
    body: bytes
    #: The peer's address (for per-address limits; never logged with secrets).
    client: str


@dataclass(frozen=True, slots=True)
class ApiResponse:
    status: HTTPStatus
    body: bytes
    #: Extra headers (e.g. Retry-After); Content-Type and Content-Length are the transport's.
    headers: tuple[tuple[str, str], ...] = field(default=())


class BadParameter(ValueError):
    pass


def _error(status: HTTPStatus, message: str) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode({"error": message}))


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise BadParameter(f"'{name}' may be given once")
    return values[0]


def _cursor(text: str) -> tuple[float, str]:
    finished, _, game_id = text.partition("_")
    try:
        return float(finished), game_id
    except ValueError:
        raise BadParameter("'before' must be the 'next' of a previous page") from None


def handle_api(store: Store | None, target: str) -> ApiResponse:
    """The answer to ``GET target`` (a path under /api/ with its query)."""
    if store is None:
        return _error(HTTPStatus.SERVICE_UNAVAILABLE, "this server keeps no records (--store none)")
    parts = urlsplit(target)
    path = parts.path.rstrip("/")
    try:
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
        if path == "/api/games":
            return _list(store, query)
        if path.startswith("/api/games/") and path.count("/") == 3:
            return _one_game(store, unquote(path.rsplit("/", 1)[1]))
    except BadParameter as error:
        return _error(HTTPStatus.BAD_REQUEST, str(error))
    return _error(HTTPStatus.NOT_FOUND, "no such API path")


def _list(store: Store, query: dict[str, list[str]]) -> ApiResponse:
    unknown = set(query) - {"game_type", "player", "state", "limit", "before"}
    if unknown:
        raise BadParameter(f"unknown parameter '{sorted(unknown)[0]}'")
    game_type = _one(query, "game_type") or None
    if game_type is not None and game_type not in GAMES:
        raise BadParameter(f"'game_type' must be one of {', '.join(sorted(GAMES))}")
    player = _one(query, "player") or None
    state = _one(query, "state") or None
    if state is not None and state not in FINISHED_STATES:
        raise BadParameter(f"'state' must be one of {', '.join(FINISHED_STATES)}")
    limit_text = _one(query, "limit")
    limit = DEFAULT_LIMIT
    if limit_text is not None:
        # ASCII digits only, and few of them: int() refuses "²" and numbers past 4,300 digits.
        if not (limit_text.isascii() and limit_text.isdigit() and len(limit_text) <= 6) or not (
            1 <= int(limit_text) <= MAX_LIMIT
        ):
            raise BadParameter(f"'limit' must be a whole number from 1 to {MAX_LIMIT}")
        limit = int(limit_text)
    before_text = _one(query, "before")
    before = _cursor(before_text) if before_text else None
    rows = store.list_games(game_type, player, limit + 1, before, state)
    page = rows[:limit]
    following = None
    if len(rows) > limit and page[-1].finished is not None:
        following = f"{page[-1].finished!r}_{page[-1].id}"
    body = msgspec.json.encode({"games": [summary_json(row) for row in page], "next": following})
    return ApiResponse(HTTPStatus.OK, body)


def _one_game(store: Store, game_id: str) -> ApiResponse:
    found = store.load_game(game_id)
    if found is None:
        return _error(HTTPStatus.NOT_FOUND, "no game with this id")
    return ApiResponse(HTTPStatus.OK, game_json(*found))
