"""Play one game of Hey, That's My Fish! against Parlour's robots over the Fish TCP protocol.

    python examples/fish_client.py [--host 127.0.0.1] [--port 8001] [--age 30]

The client connects, sends ``PlayerConnect`` and waits for its table to start (robots take the
seats nobody claims within the server's ``fish_wait``). At every ``NewGameState`` whose
``current_turn`` is its own id it places a penguin on the richest free tile, or slides one along
a straight line to the richest tile it can reach. It prints the final scores and exits 0 when the
state names the winners. Standard library only; see docs/clients.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

DIRECTIONS = ("north", "northeast", "southeast", "south", "southwest", "northwest")


def reachable(tiles: dict[int, dict[str, Any]], taken: set[int], start: int) -> list[int]:
    """Tiles a penguin on ``start`` may move to: straight lines, stopping at holes and penguins."""
    found = []
    for direction in DIRECTIONS:
        here = tiles[start][direction]
        while here is not None and here in tiles and here not in taken:
            found.append(here)
            here = tiles[here][direction]
    return found


def act(state: dict[str, Any], me: int) -> dict[str, Any] | None:
    """This player's message for this turn, or None when no penguin can move."""
    tiles = {tile["tile_id"]: tile for tile in state["board"]["tiles"]}
    taken = {
        p["tile_id"] for player in state["players"] for p in player["penguins"] if p["tile_id"] is not None
    }
    mine = next(player for player in state["players"] if player["player_id"] == me)
    if any(penguin["tile_id"] is None for penguin in mine["penguins"]):
        free = [tile_id for tile_id in tiles if tile_id not in taken]
        return {"type": "PlacePenguin", "tile_id": max(free, key=lambda t: (tiles[t]["fish"], -t))}
    options = [
        (tiles[target]["fish"], -target, penguin["penguin_id"], target)
        for penguin in mine["penguins"]
        for target in reachable(tiles, taken, penguin["tile_id"])
    ]
    if not options:
        return None
    _, _, penguin_id, target = max(options)
    return {"type": "MovePenguin", "penguin_id": penguin_id, "next_tile_id": target}


async def play(host: str, port: int, age: int) -> dict[str, Any]:
    """Play one table to its end; the final state."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(json.dumps({"type": "PlayerConnect", "age": age}).encode() + b"\n")
        await writer.drain()
        me = None
        while line := await reader.readline():  # one JSON object per line
            message = json.loads(line)
            if message["type"] == "PlayerConnected":
                if "error_message" in message:
                    raise RuntimeError(message["error_message"])
                me = message["player_id"]
            elif message["type"] == "NewGameState":
                state = message["state"]
                if state["winning_players"]:
                    return state
                if state["current_turn"] == me and (answer := act(state, me)) is not None:
                    writer.write(json.dumps(answer).encode() + b"\n")
                    await writer.drain()
        raise RuntimeError("the server closed the connection before the game ended (kicked?)")
    finally:
        writer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="Play one Fish game against Parlour's robots.")
    parser.add_argument("--host", default="127.0.0.1", help="the server's address")
    parser.add_argument("--port", type=int, default=8001, help="the Fish listener's port")
    parser.add_argument(
        "--age", type=int, default=30, help="the age sent in PlayerConnect (youngest plays first)"
    )
    args = parser.parse_args()
    try:
        final = asyncio.run(play(args.host, args.port, args.age))
    except (OSError, RuntimeError) as error:
        print(f"fish_client: {error}", file=sys.stderr)
        return 1
    scores = ", ".join(f"player {p['player_id']}: {p['score']}" for p in final["players"])
    print(f"game over: winners {final['winning_players']} ({scores})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
