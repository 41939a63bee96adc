"""The other protocols' games for the admin routes (app.py): each node's own
(LocalGames, answered over the cluster's messages by node_game_routes), and the whole cluster's
gathered from every node's answers (ClusterGames), without sockets or Redis."""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.node_games import ClusterGames, LocalGames, node_game_routes
from tests.protocols.apologies_ws.harness import Server


class Runtime:
    """Commits as the runtime does, into the harness (stored, then shown)."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def clock(self) -> float:
        return self.server.now

    async def stored(self, effects: list[Any], service: Any = None) -> None:
        self.server._take(effects)


def test_a_node_lists_and_aborts_its_own_apologies_games_while_it_runs_them() -> None:
    server = Server()
    leela = server.connect(1)
    leela.register("leela")
    leela.advertise(players=2)
    running: list[Any] = [server.service]
    games = LocalGames(Runtime(server), lambda: running[0], None, None)  # type: ignore[arg-type]
    routes = node_game_routes(games)

    def ask(path: str, body: Any = None) -> tuple[int, Any]:
        data = b"" if body is None else msgspec.json.encode(body)
        answer = asyncio.run(routes[path](HttpRequest("POST", path, path, {}, data, "cluster")))
        return answer.status, msgspec.json.decode(answer.body)

    status, listed = ask("/node/games")
    (game,) = listed["games"]
    assert status == 200 and (game["protocol"], game["players"]) == ("apologies", ["leela"])
    abort = {"protocol": "apologies", "game_id": game["game_id"], "reason": "stuck"}
    assert ask("/node/games/abort", {**abort, "protocol": "fish"})[0] == 404  # no tables here
    assert ask("/node/games/abort", abort) == (200, {})
    assert leela.last("GAME_CANCELLED")["context"]["comment"] == "An admin aborted this game: stuck"
    assert ask("/node/games/abort", abort)[0] == 404  # over: no longer listed
    running[0] = None  # another node owns Apologies now: this one answers for nothing
    assert ask("/node/games") == (200, {"games": []})


def reply(status: HTTPStatus, body: Any) -> ApiResponse:
    return ApiResponse(status, msgspec.json.encode(body))


def test_the_cluster_gathers_every_nodes_answers() -> None:
    table = {"protocol": "fish", "game_id": "t1", "game": "fish", "state": "PLAYING", "players": ["a"]}
    answers: dict[str, dict[int, ApiResponse | None]] = {
        "/node/games": {
            1: reply(HTTPStatus.OK, {"games": []}),
            2: reply(HTTPStatus.OK, {"games": [table]}),
            3: None,  # silent: left out
        },
        "/node/games/abort": {
            1: reply(HTTPStatus.NOT_FOUND, {"error": "no table"}),
            2: reply(HTTPStatus.CONFLICT, {"error": "the table is over already"}),
            3: None,
        },
    }

    async def ask(request: HttpRequest) -> dict[int, ApiResponse | None]:
        return answers[request.path]

    games = ClusterGames(ask)
    assert asyncio.run(games.live()) == [{**table, "node": 2}]
    assert asyncio.run(games.abort("fish", "t1", "x")) == "the table is over already"
    answers["/node/games/abort"][2] = reply(HTTPStatus.NOT_FOUND, {"error": "no table"})
    assert "did not answer" in (asyncio.run(games.abort("fish", "t1", "x")) or "")
    answers["/node/games/abort"][3] = reply(HTTPStatus.OK, {})
    assert asyncio.run(games.abort("fish", "t1", "x")) is None
