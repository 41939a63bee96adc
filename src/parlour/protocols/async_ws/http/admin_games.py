"""The admin's Games screen (docs/operations.md, "Games"): every protocol's live games (in a
cluster, every node's), the finished ones from the store, and aborting one with a reason."""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any, Final

from parlour.api import ApiResponse, HttpRequest
from parlour.core.effects import Store as Remember
from parlour.protocols.async_ws.game.lifecycle import LIVE
from parlour.protocols.async_ws.http import account_actions
from parlour.protocols.async_ws.http.account_http import error, json_reply, only
from parlour.protocols.async_ws.http.admin_desk import Abort, AdminDesk, action, query_of, whole_number
from parlour.protocols.async_ws.http.finished_games import (
    PROTOCOLS,
    BadCursor,
    Cursor,
    decode_cursor,
    read_page,
)
from parlour.protocols.async_ws.ingame.aborts import UNKNOWN
from parlour.protocols.async_ws.shards.hub_placement import Placing
from parlour.protocols.async_ws.shards.placement import MOVING, NOT_SAVED
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.storage.base import StoreFailure

__all__ = ["AdminGames"]

#: How long an abort waits for the owner of the game's shard, in a cluster.
SHARD_SECONDS: Final = 5.0
#: What an abort is answered when that owner does not answer in time.
NO_ANSWER: Final = "the node running this game did not answer in time; look at the games list before retrying"
#: How many finished games a page lists by default, and at most (``limit``).
FINISHED_PAGE: Final = 50
FINISHED_MAX: Final = 500


def _refused(problem: str) -> ApiResponse:
    """An abort not done: over already (409), no answer, not stored or a game moving between
    nodes (503), else unknown (404)."""
    if "already" in problem:
        return error(HTTPStatus.CONFLICT, problem)
    if problem in (MOVING, NO_ANSWER, NOT_SAVED):
        return error(HTTPStatus.SERVICE_UNAVAILABLE, problem)
    return error(HTTPStatus.NOT_FOUND, problem)


class AdminGames(AdminDesk):
    """The Games screen's routes."""

    # -- Games -----------------------------------------------------------------------------------

    async def games(self, admin: Account, request: HttpRequest) -> ApiResponse:
        """The live games (``state=live``, the default: in memory, every node's in a cluster),
        or the finished ones (``state=finished``: from the store, newest first, a page of
        ``limit`` at a time, ``before`` the ``next`` of the page before)."""
        refused = only(request, "GET")
        if refused is not None:
            return refused
        query = query_of(request, {"protocol", "state", "limit", "before"})
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
        limit = whole_number(query.get("limit", str(FINISHED_PAGE)), 1, FINISHED_MAX, "limit")
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
        body = action(request, Abort)
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
                problem = account_actions.abort_game(self.service, game_id, body.reason, self.runtime.clock())
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
