"""The replay of a finished ``/async`` game under server rules, over HTTP.

``GET /api/async/replay?game_id=N[&name=NAME]`` (with ``Authorization: Bearer <session token>``
when ``name`` is given) -> 200 ``{"game_id", "rules", "status", "players": [{"local_id",
"name", "robot"}], "initial": view, "moves": [{"index", "seat", "action", "view"}], "outcome"}``.

Every ``view`` is the spectator view (``ServerGame.view(None)``): what an observer saw after that
move, never a seat's hand. The game is rebuilt from its record (rules, seats, seed, actions: the
same record a restart replays, S10), so the last view is the final board.

Who may read it: anyone, for a game that was open in the lobby without a password (anyone could
have watched it); otherwise only an account seated in it, or an admin (the admin
page's finished games open their replays; the role as the store holds it now), signed in with
its session token.
Games still waiting or running are refused (409): a replay is for finished games, and a running
game is watched through StartObserveGameRequest instead. Client-rules games (the server does not
know their moves) get 404, as do unknown ids.

A restart brings back only the live games (S10), so a game finished before it is read from the
store (its row holds the whole record: seats, seed and actions), off the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec

from parlour.accounts.moderation import ADMIN
from parlour.accounts.tokens import TokenError
from parlour.api import ApiResponse, HttpRequest
from parlour.protocols.async_ws.game.lifecycle import PLAYED
from parlour.protocols.async_ws.game.model import AsyncGame, decode_game
from parlour.protocols.async_ws.game.rules import IllegalAction, ServerGame, start
from parlour.protocols.async_ws.service import AsyncService

__all__ = [
    "REPLAY_PATH",
    "ReplayRoutes",
    "StoredGame",
    "StoredRole",
    "is_public",
    "replay_of",
    "stored_games",
]

REPLAY_PATH = "/api/async/replay"

#: The largest game id there can be (the store's INTEGER is a signed 64-bit number).
_MAX_ID = 2**63 - 1

#: Reads one game from the store by id (None when the store has no such game).
StoredGame = Callable[[int], Awaitable[AsyncGame | None]]
#: Reads an account's role from the store by id ("" for none, or when the store cannot say).
StoredRole = Callable[[int], Awaitable[str]]


def stored_games(
    in_store_thread: Callable[[Callable[[], bytes | None]], Awaitable[bytes | None]],
    load_doc: Callable[[int], bytes | None],
) -> StoredGame:
    """A StoredGame reading ``load_doc(game_id)`` (the game row's doc, or None) through
    ``in_store_thread``: store reads block, and the event loop must not wait on them."""

    async def load(game_id: int) -> AsyncGame | None:
        doc = await in_store_thread(lambda: load_doc(game_id))
        return None if doc is None else decode_game(doc)

    return load


def _json(status: HTTPStatus, body: object) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode(body))


def _error(status: HTTPStatus, message: str) -> ApiResponse:
    return _json(status, {"error": message})


def is_public(game: AsyncGame) -> bool:
    """An open lobby game without a password: anyone could join or watch it. Invitations are
    between their players."""
    return game.invited_by is None and not game.config.private


def _view(rules: ServerGame) -> Any:
    return msgspec.json.decode(rules.view(None))


def replay_of(game: AsyncGame) -> dict[str, Any]:
    """The game's public view before the first move and after each one.

    IllegalAction (or ValueError) if the record does not fit its rules: a corrupt record.
    """
    rules = start(game.config.rules, len(game.seats), game.seed, game.config.options)
    initial = _view(rules)
    moves: list[dict[str, Any]] = []
    for index, action in enumerate(game.actions, start=1):
        if action.startswith("remove "):
            seat = int(action.split()[1])
            rules.remove_seat(seat)
        else:
            seat = rules.to_move() or 0
            rules.apply(action)
        moves.append({"index": index, "seat": seat, "action": action, "view": _view(rules)})
    return {
        "game_id": game.id,
        "rules": game.config.rules,
        "status": game.status,
        "players": [{"local_id": s.local_id, "name": s.name, "robot": s.robot} for s in game.seats],
        "initial": initial,
        "moves": moves,
        "outcome": [msgspec.to_builtins(entry) for entry in game.outcome or []],
    }


class ReplayRoutes:
    """The handler, bound to the /async service that holds the games and checks the tokens,
    and to the store's games (``stored``; None without a store) for those no longer in memory."""

    def __init__(
        self,
        service: AsyncService,
        clock: Callable[[], float],
        stored: StoredGame | None = None,
        role: StoredRole | None = None,
    ) -> None:
        self.service = service
        self.clock = clock
        self.stored = stored
        #: The role of an account as stored (None: the hub's copy, for a server without a store).
        self.role = role

    async def _admin(self, account_id: int) -> bool:
        if self.role is not None:
            return await self.role(account_id) == ADMIN
        account = self.service.hub.accounts.get(account_id)
        return account is not None and account.role == ADMIN

    def routes(self) -> dict[str, Callable[[HttpRequest], Awaitable[ApiResponse]]]:
        return {REPLAY_PATH: self.replay}

    def _reader(self, request: HttpRequest, name: str) -> int | ApiResponse | None:
        """The account id the request is signed in as (None when it gives no name), or a 401."""
        if not name:
            return None
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return _error(HTTPStatus.UNAUTHORIZED, "send the session token: Authorization: Bearer <token>")
        now = self.clock()
        try:
            external = self.service.external
            if external is not None:
                account = self.service.account_named(external.verify(token, name, now))
                if account is None:
                    raise TokenError("no such account")
                return account.id
            # Signature, expiry, revocation counter and ban, as a sign-in checks them.
            account_id = self.service.token_account(token, now, name).id
        except TokenError:
            return _error(HTTPStatus.UNAUTHORIZED, "the session token is not valid for this name")
        return account_id

    async def replay(self, request: HttpRequest) -> ApiResponse:
        if request.method not in ("GET", "HEAD"):
            return ApiResponse(
                HTTPStatus.METHOD_NOT_ALLOWED, msgspec.json.encode({"error": "use GET"}), (("Allow", "GET"),)
            )
        query = parse_qs(urlsplit(request.target).query, keep_blank_values=True)
        unknown = set(query) - {"game_id", "name"}
        if unknown:
            return _error(HTTPStatus.BAD_REQUEST, f"unknown parameter '{sorted(unknown)[0]}'")
        text = (query.get("game_id") or [""])[0]
        # Game ids are the store's 64-bit integers: a longer number is nobody's id, and the
        # store (or int() itself, past 4,300 digits) would fail on it rather than say so.
        if not text.isdecimal() or len(text) > 19 or not 0 < int(text) <= _MAX_ID:
            return _error(HTTPStatus.BAD_REQUEST, "'game_id' must be a positive whole number (a game id)")
        reader = self._reader(request, (query.get("name") or [""])[0])
        if isinstance(reader, ApiResponse):
            return reader
        game_id = int(text)
        game = self.service.hub.games.get(game_id)
        if game is None and self.stored is not None:
            game = await self.stored(game_id)
        if game is None or not game.server_rules:
            return _error(HTTPStatus.NOT_FOUND, "no finished game with server rules has this id")
        seated = reader is not None and any(seat.player_id == reader for seat in game.seats)
        if not (seated or is_public(game) or (reader is not None and await self._admin(reader))):
            return _error(HTTPStatus.FORBIDDEN, "only the players of this game may read its replay")
        if game.status not in PLAYED:
            return _error(HTTPStatus.CONFLICT, "this game is not finished: watch it instead")
        try:
            body = replay_of(game)
        except (IllegalAction, ValueError):
            return _error(HTTPStatus.INTERNAL_SERVER_ERROR, "this game's record cannot be replayed")
        return _json(HTTPStatus.OK, body)
