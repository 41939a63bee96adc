"""The Apologies protocol across two cluster nodes: a player on each node, a whole game to the
end, then the same with the owner killed in the middle (the players come back on the other node
with REREGISTER_PLAYER and finish)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.cluster.nodes import Cluster, cluster_of

#: Between moves: under the server's per-connection request rate (200 a second by default).
PACE = 0.03


class Seat:
    """One Apologies player: registers, answers every GAME_PLAYER_TURN with its first legal move."""

    def __init__(self, handle: str) -> None:
        self.handle = handle
        self.player_id = ""
        self.ws: ClientConnection | None = None
        self.moves = 0
        self.completed: dict[str, Any] | None = None
        self.game_id = ""

    async def open(self, port: int) -> None:
        self.ws = await connect(f"ws://127.0.0.1:{port}/", open_timeout=5, close_timeout=1)
        if self.player_id:
            await self.send("REREGISTER_PLAYER", handle=self.handle)
        else:
            await self.send("REGISTER_PLAYER", handle=self.handle)
            registered = await self.next("PLAYER_REGISTERED")
            self.player_id = registered["player_id"]

    async def send(self, message: str, **context: Any) -> None:
        assert self.ws is not None
        body: dict[str, Any] = {"message": message}
        if self.player_id:
            body["player_id"] = self.player_id
        if context:
            body["context"] = context
        await self.ws.send(json.dumps(body))

    async def next(self, *kinds: str, timeout: float = 10) -> dict[str, Any]:
        assert self.ws is not None
        while True:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if not kinds or message["message"] in kinds:
                return message

    async def play(self) -> None:
        """Until the game completes (or the connection ends)."""
        assert self.ws is not None
        while self.completed is None:
            try:
                message = await self.next("GAME_PLAYER_TURN", "GAME_COMPLETED", timeout=30)
            except ConnectionClosed:
                return
            if message["message"] == "GAME_COMPLETED":
                self.completed = message["context"]
                return
            moves = message["context"]["moves"]  # legal moves, keyed by their ids
            await asyncio.sleep(PACE)
            await self.send("EXECUTE_MOVE", move_id=min(moves))
            self.moves += 1


async def start_game(cluster: Cluster, a: Seat, b: Seat) -> None:
    owner, gateway = cluster.nodes
    await cluster.owner_is(owner)
    await a.open(owner.port)
    await b.open(gateway.port)
    await a.send(
        "ADVERTISE_GAME", name="across", mode="STANDARD", players=2, visibility="PUBLIC", invited_handles=[]
    )
    advertised = await a.next("GAME_ADVERTISED")
    game_id = advertised["context"]["game"]["game_id"]
    a.game_id = b.game_id = game_id
    await b.send("JOIN_GAME", game_id=game_id)
    await b.next("GAME_JOINED")
    # With two seats of two, the game starts when B joins.


def test_an_apologies_game_between_players_on_two_nodes(tmp_path: Path, redis_url: str) -> None:
    with cluster_of(tmp_path, redis_url) as cluster:

        async def scenario() -> None:
            a, b = Seat("alpha"), Seat("bravo")
            await start_game(cluster, a, b)
            await asyncio.wait_for(asyncio.gather(a.play(), b.play()), 120)
            assert a.completed is not None and a.completed == b.completed, (a.completed, b.completed)
            assert a.completed["winner"] in ("alpha", "bravo"), a.completed
            assert a.moves > 10 and b.moves > 10

        try:
            asyncio.run(scenario())
        except BaseException:
            print(cluster.logs())
            raise


def test_an_apologies_game_goes_on_after_the_owner_dies(tmp_path: Path, redis_url: str) -> None:
    with cluster_of(tmp_path, redis_url) as cluster:
        owner, gateway = cluster.nodes

        async def scenario() -> None:
            a, b = Seat("alpha"), Seat("bravo")
            await start_game(cluster, a, b)
            playing = [asyncio.create_task(a.play()), asyncio.create_task(b.play())]
            while a.moves + b.moves < 10:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(owner.kill)
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
            assert b.ws is not None
            await asyncio.wait_for(b.ws.wait_closed(), 5)
            assert b.ws.close_code == 1012, b.ws.close_code
            await cluster.owner_is(gateway)
            for seat in (a, b):
                await seat.open(gateway.port)
            # Whoever has the turn is asked again once re-registered.
            await asyncio.wait_for(asyncio.gather(a.play(), b.play()), 120)
            assert a.completed is not None and a.completed == b.completed, (a.completed, b.completed)

        try:
            asyncio.run(scenario())
        except BaseException:
            print(cluster.logs())
            raise
