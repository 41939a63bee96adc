"""A hostile client against a real ``parlour serve`` on every listener:
each bad input gets its protocol's error, a stolen player id gets INVALID_PLAYER, a client that
never reads is closed while its game goes on, and the server logs no traceback and no ERROR."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.processes import clean_env, free_port, running, serve_command
from tests.transport.test_backpressure import masked_text, open_websocket

DEEP = "[" * 5000 + "]" * 5000
HUGE = "9" * 5000


@dataclass
class Ports:
    web: int
    fish: int
    tsuro: int
    log: Path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Ports]:
    ports = Ports(free_port(), free_port(), free_port(), tmp_path / "server.log")
    command = serve_command(
        ports.web,
        "--fish-port",
        str(ports.fish),
        "--tsuro-port",
        str(ports.tsuro),
        "--handshake-timeout",
        "0.5",
        "--max-outbox-bytes",
        "65536",
        "--robot",
        "random",
        # The sleeper below asks faster than a person would, to fill its buffers quickly.
        "--requests-per-second",
        "5000",
    )
    with ports.log.open("wb") as log, running(command, ports.web, log, clean_env()):
        yield ports
    text = ports.log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert " ERROR " not in text, text[-3000:]


async def ask(ws: ClientConnection, body: dict[str, Any] | str) -> dict[str, Any]:
    await ws.send(body if isinstance(body, str) else json.dumps(body))
    answer: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
    return answer


async def tcp_exchange(port: int, data: bytes, greeting: bool = False) -> list[dict[str, Any]]:
    """Send ``data`` (after the greeting line, if the protocol sends one) and read every line
    until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = []
    if greeting:
        lines.append(json.loads(await asyncio.wait_for(reader.readline(), 10)))
    writer.write(data)
    await writer.drain()
    while line := await asyncio.wait_for(reader.readline(), 10):
        lines.append(json.loads(line))
    writer.close()
    return lines


def test_hostile_frames_on_every_protocol(server: Ports) -> None:
    async def scenario() -> None:
        async with connect(f"ws://127.0.0.1:{server.web}/", max_size=None) as ws:
            for frame in (DEEP, '{"message": "LIST_PLAYERS", "player_id": ' + HUGE + "}"):
                answer = await ask(ws, frame)
                assert (answer["message"], answer["context"]["reason"]) == (
                    "REQUEST_FAILED",
                    "INVALID_REQUEST",
                )
            registered = await ask(ws, {"message": "REGISTER_PLAYER", "context": {"handle": "alice"}})
            player_id = registered["player_id"]
            async with connect(f"ws://127.0.0.1:{server.web}/") as thief:
                stolen = await ask(thief, {"message": "UNREGISTER_PLAYER", "player_id": player_id})
                assert stolen["context"]["reason"] == "INVALID_PLAYER"
            players = await ask(ws, {"message": "LIST_PLAYERS", "player_id": player_id})
            assert [p["handle"] for p in players["context"]["players"]] == ["alice"]
        async with connect(f"ws://127.0.0.1:{server.web}/async") as ws:
            for frame in (DEEP, '{"type": "PingRequest", "request_id": "r", "n": ' + HUGE + "}"):
                answer = await ask(ws, frame)
                assert (answer["type"], answer["code"]) == ("ErrorRequest", "BAD_REQUEST")
        fish = await tcp_exchange(server.fish, DEEP.encode())
        assert fish[0]["type"] == "PlayerConnected" and "nested" in fish[0]["error_message"]
        fish = await tcp_exchange(server.fish, b'{"type": "PlayerConnect", "age": ' + HUGE.encode() + b"}")
        assert "digits" in fish[0]["error_message"]
        tsuro = await tcp_exchange(server.tsuro, DEEP.encode(), greeting=True)
        assert tsuro[0] == {"type": "ASK_FOR_PLAYER_INFO"}
        assert tsuro[1]["type"] == "EJECTED" and "nested" in tsuro[1]["reason"]
        # A port probe and a silent connection to the websocket/HTTP port.
        socket.create_connection(("127.0.0.1", server.web)).close()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.web)
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed after the handshake timeout
        writer.close()

    asyncio.run(scenario())
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.web}/api/accounts",
        data=DEEP.encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert "nested" in json.loads(refused.value.read())["error"]


def test_a_player_that_stops_reading_is_closed_and_the_game_goes_on(server: Ports) -> None:
    """Two humans and a robot at one table; the second human stops reading (a socket with a
    tiny receive buffer that is never read) and asks for the game state again and again. It is
    closed, it leaves the game as on a disconnect, and the first plays on to the end."""

    async def scenario() -> bool:
        async with connect(f"ws://127.0.0.1:{server.web}/") as host:
            host_id = (await ask(host, {"message": "REGISTER_PLAYER", "context": {"handle": "host"}}))[
                "player_id"
            ]
            context = {
                "name": "g",
                "mode": "STANDARD",
                "players": 3,
                "visibility": "PUBLIC",
                "invited_handles": [],
            }
            advertised = await ask(
                host, {"message": "ADVERTISE_GAME", "player_id": host_id, "context": context}
            )
            game_id = advertised["context"]["game_id"]
            reader, writer = await open_websocket(server.web)
            writer.write(masked_text('{"message":"REGISTER_PLAYER","context":{"handle":"sleeper"}}'))
            registered = await reader.readuntil(b"}}")
            sleeper_id = json.loads(registered[registered.index(b"{") :])["player_id"]
            join = {"message": "JOIN_GAME", "player_id": sleeper_id, "context": {"game_id": game_id}}
            writer.write(masked_text(json.dumps(join, separators=(",", ":"))))
            await host.send(json.dumps({"message": "START_GAME", "player_id": host_id}))
            retrieve = masked_text(json.dumps({"message": "RETRIEVE_GAME_STATE", "player_id": sleeper_id}))
            closed = False
            for _ in range(20_000):  # each answer is a few kB; none is read
                try:
                    writer.write(retrieve)
                    await writer.drain()
                except ConnectionError:
                    closed = True
                    break
                await asyncio.sleep(0.001)
                if writer.transport.is_closing() or reader.at_eof():
                    closed = True
                    break
            # The host plays on to the end against the robot that took the sleeper's seat.
            sleeper_left = completed = False
            while not completed:
                message = json.loads(await asyncio.wait_for(host.recv(), 20))
                kind = message["message"]
                if kind == "GAME_PLAYER_CHANGE":
                    sleeper_left |= message["context"]["comment"] == "Player sleeper disconnected"
                elif kind == "GAME_PLAYER_TURN":
                    move = next(iter(message["context"]["moves"]))
                    await host.send(
                        json.dumps(
                            {"message": "EXECUTE_MOVE", "player_id": host_id, "context": {"move_id": move}}
                        )
                    )
                completed = kind == "GAME_COMPLETED"
            assert sleeper_left
            writer.close()
        return closed

    assert asyncio.run(scenario())
    assert "does not read its messages" in server.log.read_text()
