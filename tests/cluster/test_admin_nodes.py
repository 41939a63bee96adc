"""Moderation in a cluster (issue 27): an admin granted in the shared store bans, through one
node, a player connected to the other; the player's connection is closed where it is, and its
tokens are refused on every node (they are checked on the /async hub)."""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any

from parlour.cli import main
from tests.asyncclient import PASSWORD, AsyncClient, alogin, create_account, http_json, login
from tests.cluster.nodes import cluster_of
from tests.cluster.test_two_nodes import run


def call(port: int, path: str, token: str, body: Any) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        connection.request("POST", path, json.dumps(body), headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_a_ban_through_one_node_closes_the_players_connection_on_the_other(
    tmp_path: Path, redis_url: str
) -> None:
    with cluster_of(tmp_path, redis_url) as cluster:
        owner, gateway = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(owner)
            for name in ("root", "ann"):
                await asyncio.to_thread(create_account, gateway.port, name)
            assert main(["admin", "grant", "root", "--store", cluster.store]) == 0
            admin = await asyncio.to_thread(login, owner.port, "root")
            # Ann plays on the gateway node; the ban goes through the owner's.
            ann = await AsyncClient.connect(gateway.port, label="ann")
            clients.append(ann)
            token = await alogin(gateway.port, "ann")
            assert (await ann.auth("ann", token))["type"] == "AsyncConnectedRequest"
            body = {"name": "ann", "reason": "spam", "minutes": 5}
            assert (await asyncio.to_thread(call, owner.port, "/api/admin/ban", admin, body))[0] == 200
            told = await ann.expect("AsyncConnectionErrorRequest")
            assert "spam" in told["message"]
            await ann.wait_closed()
            # Refused on both nodes, with the reason.
            for port in (owner.port, gateway.port):
                again = await AsyncClient.connect(port, label="ann again")
                clients.append(again)
                refused = await again.auth("ann", token)
                assert refused["reason"] == "BAD_CREDENTIALS" and "spam" in refused["message"], refused
                signed = await asyncio.to_thread(
                    http_json, port, "POST", "/api/sessions", {"name": "ann", "password": PASSWORD}
                )
                assert signed.status == 403 and signed.body["reason"] == "spam", signed

        run(cluster, scenario)
