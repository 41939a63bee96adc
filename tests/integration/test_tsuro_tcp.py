"""Tsuro over real TCP on loopback: clients join, take colours and play to GAME_END.

The client reads newline-delimited JSON as the protocol text describes; to choose a legal move it
asks the rules module (this test is about the wire and the tables, not about strategy).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from random import Random
from typing import Any

from parlour.games.tsuro.tiles import PORTS
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp


async def client(port: int, name: str, service: TsuroService) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    seen: list[dict[str, Any]] = []
    color = None
    while line := await asyncio.wait_for(reader.readline(), 20):
        message = json.loads(line)
        seen.append(message)
        kind = message["type"]
        if kind == "ASK_FOR_PLAYER_INFO":
            writer.write(json.dumps({"type": "JOIN", "name": name, "strategy": "first"}).encode() + b"\n")
        elif kind == "RECEIVE_COLOR":
            color = message["color"]
        elif kind == "ASK_FOR_MOVE":
            table, seat = next(
                place
                for place in service.seated.values()
                if place[0].state and place[0].state.players[place[1]].color == color
            )
            from parlour.games.tsuro.rules import legal_moves

            assert table.state is not None
            move = legal_moves(table.state, seat)[0]
            body = {
                "type": "MOVE_REQUEST",
                "placement_type": "INITIAL" if move.initial else "INTERMEDIATE",
                "index": move.tile,
                "rotation": move.rotation,
                "color": color,
                "x": move.x,
                "y": move.y,
            }
            if move.initial:
                body["port"] = PORTS[move.port or 0]
            data = json.dumps(body).encode() + b"\n"
            writer.write(data[:10])  # a message split across two writes
            await writer.drain()
            writer.write(data[10:])
        await writer.drain()
    writer.close()
    return seen


async def match(humans: int, players: int) -> list[list[dict[str, Any]]]:
    settings = replace(Settings(), tsuro_players=players, tsuro_wait=0.2, tick_seconds=0.05)
    service = TsuroService(settings, Random(2))
    runtime = Runtime()
    async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:
        ticker = asyncio.create_task(runtime.tick_forever([service], settings.tick_seconds))
        try:
            return await asyncio.wait_for(
                asyncio.gather(*(client(listener.port, f"p{i}", service) for i in range(humans))), 30
            )
        finally:
            ticker.cancel()


def test_three_humans_and_a_human_with_robots_over_tcp() -> None:
    for humans, players in ((3, 3), (1, 4)):
        logs = asyncio.run(match(humans, players))
        for log in logs:
            kinds = [m["type"] for m in log]
            assert kinds[:2] == ["ASK_FOR_PLAYER_INFO", "RECEIVE_COLOR"]
            assert kinds[-1] == "GAME_END"
            assert sum(len(v) for v in log[-1]["results"].values()) == players
