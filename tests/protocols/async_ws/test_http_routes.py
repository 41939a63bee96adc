"""The HTTP routes of /async (protocols/async_ws/http/account_routes.py) need of the runtime only
what they declare (``Commits``: the time, and a commit to wait for): here a stand-in plays the
runtime."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from parlour.accounts.limits import LoginLimiter
from parlour.api import HttpRequest
from parlour.core.effects import ConnId, Effect, Store
from parlour.core.service import Service
from parlour.protocols.async_ws.http.account_routes import AccountRoutes
from parlour.storage import AccountRow, StoreFailure
from tests.protocols.async_ws.harness import Harness


class Commits:
    """Records what it is asked to store; refuses it all while ``failing``."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self.failing = False

    def clock(self) -> float:
        return 1_000_000.0

    async def stored(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None:
        if self.failing:
            raise StoreFailure("disk full")
        self.records += [
            record for effect in effects if isinstance(effect, Store) for record in effect.records
        ]


def post(path: str, body: dict[str, str]) -> HttpRequest:
    return HttpRequest(
        "POST", path, path, {"content-type": "application/json"}, json.dumps(body).encode(), "127.0.0.1"
    )


def routes(commits: Commits) -> tuple[Harness, AccountRoutes]:
    h = Harness()
    limiter = LoginLimiter(5, 20, 300.0)
    found = AccountRoutes(
        h.service, commits, h.service.tokens, limiter, lambda p: f"hash:{p}", lambda h, p: h == f"hash:{p}"
    )
    return h, found


def test_an_account_is_answered_once_committed_and_can_sign_in() -> None:
    commits = Commits()
    _, accounts = routes(commits)
    created = asyncio.run(
        accounts.accounts(post("/api/accounts", {"name": "ann", "password": "secret words"}))
    )
    assert created.status == 201
    assert [type(record) for record in commits.records] == [AccountRow]
    session = asyncio.run(
        accounts.sessions(post("/api/sessions", {"name": "ann", "password": "secret words"}))
    )
    assert session.status == 200 and json.loads(session.body)["name"] == "ann"


def test_an_account_the_store_refused_never_existed() -> None:
    commits = Commits()
    commits.failing = True
    h, accounts = routes(commits)
    refused = asyncio.run(
        accounts.accounts(post("/api/accounts", {"name": "ann", "password": "secret words"}))
    )
    assert refused.status == 503
    assert h.service.account_named("ann") is None
