"""GET /api/async/catalogue: the games with their seats, and words for every code the server sends."""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any, get_args, get_type_hints

import msgspec

from parlour.api import ApiResponse, HttpRequest
from parlour.games.registry import plugin
from parlour.protocols.async_ws.game.rules import RULES
from parlour.protocols.async_ws.reference.catalogue import CATALOGUE_PATH, catalogue_routes
from parlour.protocols.async_ws.wire import messages


def ask(method: str = "GET") -> ApiResponse:
    handler = catalogue_routes()[CATALOGUE_PATH]
    request = HttpRequest(method, CATALOGUE_PATH, CATALOGUE_PATH, {}, b"", "127.0.0.1")

    async def answer() -> ApiResponse:
        return await handler(request)

    return asyncio.run(answer())


def body() -> dict[str, Any]:
    answer = ask()
    assert answer.status == HTTPStatus.OK
    decoded: dict[str, Any] = msgspec.json.decode(answer.body)
    return decoded


def codes(message: type[msgspec.Struct], field: str) -> set[str]:
    return set(get_args(get_type_hints(message)[field]))


def test_the_games_are_the_server_rules_with_their_plugins_seat_ranges() -> None:
    games = body()["games"]
    assert [game["rules"] for game in games] == list(RULES)
    for game in games:
        rules = plugin(game["rules"])
        assert (game["min_seats"], game["max_seats"]) == (rules.min_seats, rules.max_seats)
        assert game["name"] == game["rules"].capitalize()
    assert {"rules": "tsuro", "name": "Tsuro", "min_seats": 3, "max_seats": 5} in games


def test_every_code_the_messages_declare_has_its_words() -> None:
    answer = body()
    assert set(answer["errors"]) == set(get_args(messages.ErrorCode))
    assert set(answer["join_denied"]) == codes(messages.LobbyJoinDeniedRequest, "cause")
    assert set(answer["start_denied"]) == codes(messages.LobbyStartGameDeniedRequest, "cause")
    assert set(answer["observe_denied"]) == codes(messages.GameObservedRequest, "status") - {"OK"}
    assert set(answer["connection_errors"]) == codes(messages.AsyncConnectionErrorRequest, "reason")
    for words in ("errors", "join_denied", "start_denied", "observe_denied", "connection_errors"):
        assert all(isinstance(text, str) and text for text in answer[words].values())
    assert answer["join_denied"]["WRONG_PASSWORD"] == "the password is wrong"


def test_only_get_and_head_are_answered() -> None:
    assert ask("HEAD").status == HTTPStatus.OK
    refused = ask("POST")
    assert refused.status == HTTPStatus.METHOD_NOT_ALLOWED
    assert ("Allow", "GET") in refused.headers
    assert msgspec.json.decode(refused.body) == {"error": "use GET"}
