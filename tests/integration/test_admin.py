"""Admin work on a real ``parlour serve``: ``parlour admin grant`` on the running
server's store, a ban over HTTP that closes the player's websocket and refuses its sign-in with
the reason, sign out everywhere, and the pages' security headers, over loopback sockets."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parlour.cli import main
from tests.asyncclient import PASSWORD, AsyncClient, alogin, create_account, login
from tests.processes import clean_env, free_port, running, serve_command


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port = free_port()
    store = tmp_path / "p.db"
    with (
        (tmp_path / "server.log").open("wb") as log,
        running(serve_command(port, store=str(store)), port, log, clean_env()),
    ):
        yield port, store


def call(port: int, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        connection.request(method, path, None if body is None else json.dumps(body), headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        connection.close()


def test_a_ban_from_an_admin_granted_on_the_running_store_ends_the_players_connection(
    served: tuple[int, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    port, store = served
    for name in ("root", "ann", "bob"):
        create_account(port, name)
    admin = login(port, "root")
    assert call(port, "GET", "/api/admin/players?q=", admin)[0] == 403
    assert main(["admin", "grant", "root", "--store", str(store), "--reason", "on call"]) == 0
    capsys.readouterr()
    status, found = call(port, "GET", "/api/admin/players?q=a", admin)
    assert status == 200 and [p["name"] for p in found["players"]] == ["ann"]

    async def scenario() -> None:
        ann = await AsyncClient.connect(port, label="ann")
        assert (await ann.auth("ann", await alogin(port, "ann")))["type"] == "AsyncConnectedRequest"
        bob = await AsyncClient.connect(port, label="bob")
        bob_token = await alogin(port, "bob")
        assert (await bob.auth("bob", bob_token))["type"] == "AsyncConnectedRequest"
        body = {"name": "ann", "reason": "spam", "minutes": 60}
        status, banned = await asyncio.to_thread(call, port, "POST", "/api/admin/ban", admin, body)
        assert status == 200 and banned["reason"] == "spam"
        told = await ann.expect("AsyncConnectionErrorRequest")
        assert "banned until" in told["message"] and "spam" in told["message"]
        await ann.wait_closed()
        # Bob signs out everywhere: his connection ends, his token is refused from then on.
        assert await asyncio.to_thread(call, port, "POST", "/api/account/sign-out", bob_token, {}) == (
            200,
            {"signed_out": True},
        )
        await bob.wait_closed()
        again = await AsyncClient.connect(port, label="bob")
        refused = await again.auth("bob", bob_token)
        assert refused["reason"] == "EXPIRED_TOKEN"
        assert (await again.auth("bob", await alogin(port, "bob")))["type"] == "AsyncConnectedRequest"
        await again.ws.close()

    asyncio.run(scenario())
    status, refused = call(port, "POST", "/api/sessions", None, {"name": "ann", "password": PASSWORD})
    assert status == 403 and refused["reason"] == "spam" and refused["until"] is not None
    status, log = call(port, "GET", "/api/admin/audit?action=ban", admin)
    assert status == 200 and [(r["actor"], r["target"], r["reason"]) for r in log["audit"]] == [
        ("root", "ann", "spam")
    ]
    # The same server's pages carry the security headers (one server start for both checks).
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/")
        page = connection.getresponse()
        page.read()
        assert "frame-ancestors 'none'" in (page.getheader("content-security-policy") or "")
        assert page.getheader("x-content-type-options") == "nosniff"
        connection.request("GET", "/", headers={"If-None-Match": page.getheader("etag") or ""})
        cached = connection.getresponse()
        assert (cached.status, cached.read()) == (304, b"")
    finally:
        connection.close()
