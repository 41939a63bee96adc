"""Tsuro over real TCP on loopback: a client written from docs/tsuro-protocol.md (its tile table
included) joins, takes its colour and plays legal, non-suicidal moves to GAME_END."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from random import Random
from typing import Any

from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp

# docs/tsuro-protocol.md, "The 35 tiles", copied as text: the connections of tiles 0..34 at
# rotation 0.
TILE_TEXT = (
    "AE BF CH DG,AE BF CG DH,AF BE CH DG,AE BD CG FH,AH BC DE FG,AE BC DH FG,AE BC DG FH,AD BG CF EH,"
    "AD BF CG EH,AD BE CH FG,AD BE CG FH,AD BC EH FG,AC BH DF EG,AC BH DE FG,AC BG DF EH,AC BG DE FH,"
    "AC BF DH EG,AC BF DG EH,AC BE DH FG,AC BE DG FH,AC BD EH FG,AC BD EG FH,AB CH DG EF,AB CH DF EG,"
    "AB CH DE FG,AB CG DH EF,AB CG DF EH,AB CG DE FH,AB CF DH EG,AB CF DG EH,AB CE DH FG,AB CE DG FH,"
    "AB CD EH FG,AB CD EG FH,AB CD EF GH"
)
LETTERS = "ABCDEFGH"
STEP = {0: (0, -1), 1: (0, -1), 2: (1, 0), 3: (1, 0), 4: (0, 1), 5: (0, 1), 6: (-1, 0), 7: (-1, 0)}
ACROSS = {0: 5, 1: 4, 2: 7, 3: 6, 4: 1, 5: 0, 6: 3, 7: 2}


def connections(index: int) -> dict[int, int]:
    found = {}
    for pair in TILE_TEXT.split(",")[index].split():
        a, b = LETTERS.index(pair[0]), LETTERS.index(pair[1])
        found[a], found[b] = b, a
    return found


def through(index: int, rotation: int, entry: int) -> int:
    turn = rotation // 45  # each quarter turn moves every port two places clockwise
    return (connections(index)[(entry - turn) % 8] + turn) % 8


def survives(board: list[list[Any]], x: int, y: int, port: int) -> bool:
    """Follow the path from (x, y, port); False if it leaves the board or loops."""
    seen = set()
    while (x, y, port) not in seen:
        seen.add((x, y, port))
        nx, ny = x + STEP[port][0], y + STEP[port][1]
        if not (0 <= nx < 10 and 0 <= ny < 10):
            return False
        cell = board[ny][nx]
        if cell is None:
            return True
        x, y, port = nx, ny, through(cell["index"], cell["rotation"], ACROSS[port])
    return False


def choose(board: list[list[Any]], hand: list[int], me: dict[str, Any] | None) -> dict[str, Any]:
    options = []
    if me is None or me["tile"] is None:
        for y in range(10):
            for x in range(10):
                if (0 < x < 9 and 0 < y < 9) or board[y][x] is not None:
                    continue
                near = [(x + dx, y + dy) for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0))]
                if any(0 <= a < 10 and 0 <= b < 10 and board[b][a] is not None for a, b in near):
                    continue
                for port in range(8):
                    px, py = x + STEP[port][0], y + STEP[port][1]
                    if 0 <= px < 10 and 0 <= py < 10:
                        continue  # the entry port must face off the board
                    options.append(("INITIAL", x, y, port))
    else:
        port = LETTERS.index(me["port"])
        x, y = me["tile"]["x"] + STEP[port][0], me["tile"]["y"] + STEP[port][1]
        options.append(("INTERMEDIATE", x, y, ACROSS[port]))
    fallback = None
    for kind, x, y, entry in options:
        for index in hand:
            for rotation in (0, 90, 180, 270):
                body = {
                    "type": "MOVE_REQUEST",
                    "placement_type": kind,
                    "index": index,
                    "rotation": rotation,
                    "x": x,
                    "y": y,
                }
                if kind == "INITIAL":
                    body["port"] = LETTERS[entry]
                fallback = fallback or body
                board[y][x] = {"index": index, "rotation": rotation}
                alive = survives(board, x, y, through(index, rotation, entry))
                board[y][x] = None
                if alive:
                    return body
    assert fallback is not None
    return fallback


async def client(port: int, name: str) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    seen: list[dict[str, Any]] = []
    color, me = None, None
    while line := await asyncio.wait_for(reader.readline(), 20):
        message = json.loads(line)
        seen.append(message)
        kind = message["type"]
        if kind == "ASK_FOR_PLAYER_INFO":
            writer.write(json.dumps({"type": "JOIN", "name": name, "strategy": "careful"}).encode() + b"\n")
        elif kind == "RECEIVE_COLOR":
            color = message["color"]
        elif kind == "RECEIVE_GAME_STATE":
            me = {"tile": message["tile"], "port": message["port"]}
        elif kind == "ASK_FOR_MOVE":
            hand = [tile["index"] for tile in message["tiles"]]
            body = choose(message["board"], hand, me) | {"color": color}
            data = json.dumps(body).encode() + b"\n"
            writer.write(data[:10])  # one message split across two writes
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
                asyncio.gather(*(client(listener.port, f"p{i}") for i in range(humans))), 30
            )
        finally:
            ticker.cancel()


def test_humans_and_humans_with_robots_over_tcp() -> None:
    for humans, players in ((3, 3), (4, 4), (5, 5), (1, 4)):
        logs = asyncio.run(match(humans, players))
        for log in logs:
            kinds = [m["type"] for m in log]
            assert kinds[:2] == ["ASK_FOR_PLAYER_INFO", "RECEIVE_COLOR"]
            assert "EJECTED" not in kinds  # the careful client never breaks a rule
            assert kinds[-1] == "GAME_END"
            assert sum(len(v) for v in log[-1]["results"].values()) == players
