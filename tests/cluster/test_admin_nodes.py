"""Moderation in a cluster: an admin granted in the shared store bans, through one
node, a player connected to the other; the player's connection is closed where it is, and its
tokens are refused on every node (they are checked on the /async hub)."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from parlour.cli import main
from tests.asyncclient import (
    PASSWORD,
    AsyncClient,
    alogin,
    create_account,
    http_json,
    login,
    start_open_game,
)
from tests.cluster.nodes import Cluster, health
from tests.cluster.test_two_nodes import player_on, run
from tests.processes import free_port


def call(port: int, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    """A POST with ``body``, or a GET without."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        if body is None:
            connection.request("GET", path, headers=headers)
        else:
            connection.request("POST", path, json.dumps(body), headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_a_ban_through_one_node_closes_the_players_connection_on_the_other(
    tmp_path: Path, redis_url: str
) -> None:
    cluster = Cluster(tmp_path, redis_url, str(tmp_path / "parlour.db"))
    with _started(cluster):
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


@contextmanager
def _started(cluster: Cluster, *gateway: str) -> Iterator[Cluster]:
    """An owner node, then a gateway node started with ``gateway``'s extra flags."""
    try:
        cluster.start(1)
        cluster.start(1, *gateway)
        yield cluster
    finally:
        cluster.stop()


async def _fish_player(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b'{"type": "PlayerConnect", "age": 30}\n')
    await writer.drain()
    return reader, writer


def test_an_admin_on_any_node_lists_and_aborts_every_nodes_games(tmp_path: Path, redis_url: str) -> None:
    """A started /async game runs on its shard's owner, a Fish table on the node its players
    used: the admin routes reach both, through either node."""
    fish_port = free_port()
    cluster = Cluster(tmp_path, redis_url, str(tmp_path / "parlour.db"))
    with _started(cluster, "--fish-port", str(fish_port)):
        owner, gateway = cluster.nodes

        async def scenario(clients: list[AsyncClient]) -> None:
            await cluster.owner_is(owner)
            await asyncio.to_thread(create_account, gateway.port, "root")
            assert main(["admin", "grant", "root", "--store", cluster.store]) == 0
            admin = await asyncio.to_thread(login, gateway.port, "root")
            ann = await player_on(gateway.port, clients, "ann")
            bob = await player_on(owner.port, clients, "bob")
            game_id = await start_open_game(ann, [bob])
            fishers = [await _fish_player(fish_port) for _ in range(2)]
            gateway_node = (await asyncio.to_thread(health, gateway.port))["cluster_node"]
            listed: list[dict[str, Any]] = []
            for _ in range(50):  # until the table has started (both players seated)
                status, answer = await asyncio.to_thread(call, owner.port, "/api/admin/games", admin)
                assert status == 200, answer
                listed = answer["games"]
                if any(game["protocol"] == "fish" for game in listed):
                    break
                await asyncio.sleep(0.1)
            (table,) = [game for game in listed if game["protocol"] == "fish"]
            assert table["node"] == gateway_node and table["state"] == "PLAYING", table
            assert str(game_id) in [game["game_id"] for game in listed if game["protocol"] == "async"]
            # The /async game, aborted through the gateway node: its players hear why.
            body = {"protocol": "async", "game_id": str(game_id), "reason": "stuck"}
            status, answer = await asyncio.to_thread(
                call, gateway.port, "/api/admin/games/abort", admin, body
            )
            assert status == 200, answer
            for player in (ann, bob):
                line = await player.client.expect("ClientChatRequest", game_id=game_id, code=10)
                assert line["text"] == "An admin aborted this game: stuck"
                await player.client.expect("GameAbortedRequest", game_id=game_id)
            status, again = await asyncio.to_thread(call, owner.port, "/api/admin/games/abort", admin, body)
            assert status == 409, again
            # The Fish table, on the gateway node, aborted through the owner's.
            body = {"protocol": "fish", "game_id": table["game_id"], "reason": "stuck"}
            status, answer = await asyncio.to_thread(call, owner.port, "/api/admin/games/abort", admin, body)
            assert status == 200, answer
            for reader, writer in fishers:
                await asyncio.wait_for(reader.read(), 5)  # closed by the server (EOF)
                writer.close()
            status, answer = await asyncio.to_thread(call, gateway.port, "/api/admin/games", admin)
            assert [game for game in answer["games"] if game["protocol"] == "fish"] == []
            assert (await asyncio.to_thread(call, owner.port, "/api/admin/games/abort", admin, body))[
                0
            ] == 404

        run(cluster, scenario)
