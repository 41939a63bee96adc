"""Fish over real TCP on loopback: a client written from the protocol text plays whole games."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from random import Random
from typing import Any

from parlour.protocols.fish_tcp import FishService
from parlour.settings import Settings
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp


class Player:
    """Reads newline-delimited JSON; acts when ``current_turn`` is its id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.player_id: int | None = None
        self.states: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any], split: bool = False) -> None:
        data = json.dumps(message).encode() + b"\n"
        if split:  # one message in two writes
            self.writer.write(data[:7])
            await self.writer.drain()
            await asyncio.sleep(0.01)
            data = data[7:]
        self.writer.write(data)
        await self.writer.drain()

    async def play(self, age: int) -> dict[str, Any]:
        await self.send({"type": "PlayerConnect", "age": age}, split=True)
        while line := await asyncio.wait_for(self.reader.readline(), 20):
            message = json.loads(line)
            if message["type"] == "PlayerConnected":
                self.player_id = message["player_id"]
                continue
            state = message["state"]
            self.states.append(state)
            if state["winning_players"]:
                continue
            if state["current_turn"] == self.player_id:
                await self.act(state)
        return self.states[-1]

    async def act(self, state: dict[str, Any]) -> None:
        me = next(p for p in state["players"] if p["player_id"] == self.player_id)
        tiles = {t["tile_id"]: t for t in state["board"]["tiles"]}
        taken = {g["tile_id"] for p in state["players"] for g in p["penguins"] if g["tile_id"] is not None}
        if any(g["tile_id"] is None for g in me["penguins"]):
            await self.send({"type": "PlacePenguin", "tile_id": min(set(tiles) - taken)})
            return
        for penguin in me["penguins"]:
            for direction in ("north", "northeast", "southeast", "south", "southwest", "northwest"):
                step = tiles[penguin["tile_id"]][direction]
                if step is not None and step not in taken:
                    await self.send({"MovePenguin": {"penguin_id": penguin["penguin_id"], "tile_id": step}})
                    return


async def match(players: int, humans: int) -> list[dict[str, Any]]:
    settings = replace(Settings(), fish_players=players, fish_wait=0.2, tick_seconds=0.05)
    service = FishService(settings, Random(1), board={"rows": 5, "columns": 5, "holes": 2})
    runtime = Runtime()
    async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:
        ticker = asyncio.create_task(runtime.tick_forever([service], settings.tick_seconds))
        try:
            clients = [
                Player(*await asyncio.open_connection("127.0.0.1", listener.port)) for _ in range(humans)
            ]
            return await asyncio.wait_for(
                asyncio.gather(*(c.play(age=10 + i) for i, c in enumerate(clients))), 30
            )
        finally:
            ticker.cancel()


def test_two_three_and_four_humans_over_tcp() -> None:
    for players in (2, 3, 4):
        finals = asyncio.run(match(players, players))
        assert all(final == finals[0] for final in finals)
        assert finals[0]["winning_players"] and len(finals[0]["players"]) == players


def test_one_human_with_robots_over_tcp() -> None:
    finals = asyncio.run(match(3, 1))
    assert finals[0]["winning_players"] and len(finals[0]["players"]) == 3
