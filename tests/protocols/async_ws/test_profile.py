"""GET /api/profile (protocols/async_ws/http/profile_http.py): the body made of the store's rows,
and the refusals. Over the wire, against a real server: tests/integration/test_async_workflows.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from parlour.api import HttpRequest
from parlour.protocols.async_ws.http.profile_http import PROFILE_PATH, ProfileRoutes, ProfileRows, profile_of
from parlour.storage import GameResultRow, Opponent, RatingRow
from tests.protocols.async_ws.harness import Harness


def result(
    game_id: int, seat: int, account_id: int | None, rank: int | None, mu: float | None = None, games: int = 0
) -> GameResultRow:
    return GameResultRow(
        game_id=game_id,
        seat=seat,
        game_type="fish",
        at=100.0 * game_id,
        account_id=account_id,
        name=f"p{account_id}" if account_id else "Robot",
        rank=rank,
        score=None if rank is None else 3.0 - rank,
        mu=mu,
        sigma=None if mu is None else 7.0,
        games=None if mu is None else games,
        change=None if mu is None else 0.1,
    )


def ask(routes: ProfileRoutes, query: str, method: str = "GET") -> tuple[int, Any]:
    request = HttpRequest(method, f"{PROFILE_PATH}?{query}", PROFILE_PATH, {}, b"", "127.0.0.1")
    answer = asyncio.run(routes.profile(request))
    return answer.status, json.loads(answer.body)


def test_the_history_gives_each_game_its_change_of_the_shown_rating() -> None:
    h = Harness()
    ann_id, _ = h.account("ann")
    account = h.service.hub.accounts[ann_id]
    account.ratings["fish"] = (26.0, 7.0, 4)
    # A window that starts at the third game: the change of its oldest point is unknown.
    history = [result(3, 1, ann_id, 1, 27.0, 3), result(4, 1, ann_id, 2, 26.0, 4)]
    recent = [
        result(4, 1, ann_id, 2, 26.0, 4),
        result(4, 2, None, 1),
        result(2, 1, ann_id, 1),
        result(2, 2, 7, 2),
    ]
    body = profile_of(account, "ONLINE", ProfileRows(history, recent, [Opponent(7, "p7", 1, 0, 0)]))
    assert body["ratings"] == [{"game_type": "fish", "rating": 1529, "provisional": True, "games": 4}]
    assert [(p["games"], p["rating"], p["change"]) for p in body["history"]["fish"]] == [
        (3, 1559, None),
        (4, 1529, -30),
    ]
    assert [(g["game_id"], g["rank"], g["rating"], g["change"]) for g in body["recent"]] == [
        (4, 2, 1529, -30),
        (2, 1, None, None),  # an unranked game
    ]
    assert body["recent"][0]["players"] == [
        {"seat": 1, "name": "p1", "robot": False, "rank": 2, "score": 1.0},
        {"seat": 2, "name": "Robot", "robot": True, "rank": 1, "score": 2.0},
    ]
    assert body["opponents"] == [{"name": "p7", "robot": False, "wins": 1, "losses": 0, "draws": 0}]
    # From the first game, the change is from 1500.
    first = profile_of(account, "OFFLINE", ProfileRows([result(1, 1, ann_id, 1, 27.0, 1)], [], []))
    assert first["history"]["fish"][0]["change"] == 59


def test_a_profile_is_found_whatever_the_case_and_unknown_names_are_404() -> None:
    h = Harness()
    ann_id, _ = h.account("Ann")
    h.service.hub.accounts.rate(RatingRow(ann_id, "fish", 25.0, 8.0, 1, 0.0, 1.0))
    read: list[int] = []

    async def reader(account_id: int) -> ProfileRows:
        read.append(account_id)
        return ProfileRows([], [], [])

    routes = ProfileRoutes(h.service, reader)
    status, body = ask(routes, "name=ANN")
    assert (status, body["name"], body["presence"], read) == (200, "Ann", "OFFLINE", [ann_id])
    assert body["ratings"] == [{"game_type": "fish", "rating": 1500, "provisional": True, "games": 1}]
    assert ask(routes, "name=nobody") == (404, {"error": "nobody is named 'nobody'"})
    assert ask(routes, "") == (400, {"error": "'name' is required"})
    assert ask(routes, "name=Ann&x=1") == (400, {"error": "unknown parameter 'x'"})
    assert ask(routes, "name=Ann", "POST") == (405, {"error": "use GET"})
    # Without a store: the ratings, and no history.
    status, body = ask(ProfileRoutes(h.service), "name=Ann")
    assert (status, body["history"], body["recent"], body["opponents"]) == (200, {}, [], [])
