"""Every protocol's games but /async's, for the admin's Games screen (admin_desk.OtherGames):
the Apologies games and the Fish and Tsuro tables of this node (``LocalGames``), what a cluster
node answers about them to the hub (``node_game_routes``, over the cluster's messages), and the
whole cluster's, gathered from every node's answers (``ClusterGames``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.core.service import Service
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.storage.base import StoreFailure
from parlour.transport.runtime import Runtime

__all__ = ["NODE_ABORT", "NODE_GAMES", "ClusterGames", "LocalGames", "node_game_routes"]

#: A handler of a path every node answers for itself.
NodeHandler = Callable[[HttpRequest], Awaitable[ApiResponse]]


class LocalGames:
    """The Apologies games and the Fish and Tsuro tables of this node, for the admin routes
    (admin_http.OtherGames): listed from the services, aborted through them, the effects
    carried out by the runtime (stored before answered). ``apologies`` gives the Apologies
    service while this node runs it (in a cluster: while it owns its lease)."""

    def __init__(
        self,
        runtime: Runtime,
        apologies: Callable[[], ApologiesService | None],
        fish: FishService | None,
        tsuro: TsuroService | None,
    ) -> None:
        self.runtime = runtime
        self.apologies = apologies
        self.tables = {name: table for name, table in (("fish", fish), ("tsuro", tsuro)) if table is not None}

    async def live(self) -> list[dict[str, Any]]:
        apologies = self.apologies()
        found = [] if apologies is None else apologies.live_games()
        for table in self.tables.values():
            found += table.live_tables()
        return found

    async def abort(self, protocol: str, game_id: str, reason: str) -> str | None:
        now = self.runtime.clock()
        apologies = self.apologies()
        service: Service
        if protocol == "apologies" and apologies is not None:
            service = apologies
            effects, problem = apologies.abort_game(game_id, reason, now)
        elif protocol in self.tables:
            service = self.tables[protocol]
            effects, problem = self.tables[protocol].abort_table(game_id, reason, now)
        else:
            return f"this node runs no {protocol} games"
        if problem is None:
            await self.runtime.stored(effects, service)
        return problem


#: The paths every node of a cluster answers for its own games (ClusterNode.node_routes).
NODE_GAMES = "/node/games"
NODE_ABORT = "/node/games/abort"


def node_game_routes(games: LocalGames) -> dict[str, NodeHandler]:
    """What a cluster node answers about its own games to the hub's admin routes (over the
    cluster's messages, never from outside: these paths are not served over HTTP)."""

    async def listed(request: HttpRequest) -> ApiResponse:
        return ApiResponse(HTTPStatus.OK, msgspec.json.encode({"games": await games.live()}))

    async def aborted(request: HttpRequest) -> ApiResponse:
        body = msgspec.json.decode(request.body, type=dict[str, str])
        try:
            problem = await games.abort(body["protocol"], body["game_id"], body["reason"])
        except StoreFailure:
            return ApiResponse(
                HTTPStatus.SERVICE_UNAVAILABLE, msgspec.json.encode({"error": "the abort could not be saved"})
            )
        if problem is None:
            return ApiResponse(HTTPStatus.OK, b"{}")
        status = HTTPStatus.CONFLICT if "already" in problem else HTTPStatus.NOT_FOUND
        return ApiResponse(status, msgspec.json.encode({"error": problem}))

    return {NODE_GAMES: listed, NODE_ABORT: aborted}


class ClusterGames:
    """The other protocols' games of every node of a cluster, for the hub's admin routes:
    each node is asked for its own (``ClusterNode.ask_every_node``), the Apologies games by
    whichever node owns them, the tables by the node whose port their players use."""

    def __init__(self, ask: Callable[[HttpRequest], Awaitable[dict[int, ApiResponse | None]]]) -> None:
        self.ask = ask

    async def live(self) -> list[dict[str, Any]]:
        answers = await self.ask(HttpRequest("GET", NODE_GAMES, NODE_GAMES, {}, b"", "cluster"))
        found: list[dict[str, Any]] = []
        for node, answer in sorted(answers.items()):
            if answer is not None and answer.status == 200:
                found += [{**game, "node": node} for game in msgspec.json.decode(answer.body)["games"]]
        return found

    async def abort(self, protocol: str, game_id: str, reason: str) -> str | None:
        body = msgspec.json.encode({"protocol": protocol, "game_id": game_id, "reason": reason})
        request = HttpRequest(
            "POST", NODE_ABORT, NODE_ABORT, {"content-type": "application/json"}, body, "cluster"
        )
        answers = list((await self.ask(request)).values())
        if any(answer is not None and answer.status == 200 for answer in answers):
            return None
        if any(answer is not None and answer.status == 503 for answer in answers):
            raise StoreFailure("a node could not save the abort")
        refused = [answer for answer in answers if answer is not None and answer.status == 409]
        if refused:
            return str(msgspec.json.decode(refused[0].body)["error"])
        if None in answers:
            return "no node that answered runs this game (some did not answer: try again)"
        return f"no live {protocol} game has this id on any node"
