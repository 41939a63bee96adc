"""Play one game of Tsuro against Parlour's robots over the Tsuro TCP protocol.

    python examples/tsuro_client.py [--host 127.0.0.1] [--port 8000] [--name NAME]

The client answers ``ASK_FOR_PLAYER_INFO`` with ``JOIN`` and waits for its table (robots take
the seats nobody claims within the server's ``tsuro_wait``). Asked to move, it tries every tile
of its hand in every rotation and plays the first placement after which its own avatar is still
on the board, following the paths itself with the tile table below. It prints the results and
exits 0 at ``GAME_END``. Standard library only; see docs/clients.md and docs/tsuro-protocol.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

SIZE = 10
PORTS = "ABCDEFGH"  # clockwise from the top-left: A B on top, C D right, E F bottom, G H left
#: The four paths of each of the 35 tiles at rotation 0 (tile i is entry i), as port pairs.
TILES = [
    "AE BF CH DG",
    "AE BF CG DH",
    "AF BE CH DG",
    "AE BD CG FH",
    "AH BC DE FG",
    "AE BC DH FG",
    "AE BC DG FH",
    "AD BG CF EH",
    "AD BF CG EH",
    "AD BE CH FG",
    "AD BE CG FH",
    "AD BC EH FG",
    "AC BH DF EG",
    "AC BH DE FG",
    "AC BG DF EH",
    "AC BG DE FH",
    "AC BF DH EG",
    "AC BF DG EH",
    "AC BE DH FG",
    "AC BE DG FH",
    "AC BD EH FG",
    "AC BD EG FH",
    "AB CH DG EF",
    "AB CH DF EG",
    "AB CH DE FG",
    "AB CG DH EF",
    "AB CG DF EH",
    "AB CG DE FH",
    "AB CF DH EG",
    "AB CF DG EH",
    "AB CE DH FG",
    "AB CE DG FH",
    "AB CD EH FG",
    "AB CD EG FH",
    "AB CD EF GH",
]
#: The square a port leads to, and the port of that square one arrives at.
STEP = {0: (0, -1), 1: (0, -1), 2: (1, 0), 3: (1, 0), 4: (0, 1), 5: (0, 1), 6: (-1, 0), 7: (-1, 0)}
FACING = {0: 5, 1: 4, 2: 7, 3: 6, 4: 1, 5: 0, 6: 3, 7: 2}


def exit_port(index: int, rotation: int, entry: int) -> int:
    """Where a path that enters tile ``index`` (turned ``rotation`` degrees clockwise) at ``entry`` leaves."""
    turn = 2 * (rotation // 90)  # a quarter turn moves every port two places clockwise
    unturned = (entry - turn) % 8
    for pair in TILES[index].split():
        a, b = PORTS.index(pair[0]), PORTS.index(pair[1])
        if unturned in (a, b):
            return ((b if unturned == a else a) + turn) % 8
    raise ValueError(f"tile {index} has no port {entry}")


def on_board(x: int, y: int) -> bool:
    return 0 <= x < SIZE and 0 <= y < SIZE


def survives(board: list[list[Any]], x: int, y: int, entry: int) -> bool:
    """Whether an avatar entering the tile at (x, y) through ``entry`` stops on the board."""
    seen = set()
    while (x, y, entry) not in seen:
        seen.add((x, y, entry))
        cell = board[y][x]
        leave = exit_port(cell["index"], cell["rotation"], entry)
        x, y = x + STEP[leave][0], y + STEP[leave][1]
        if not on_board(x, y):
            return False
        if board[y][x] is None:
            return True
        entry = FACING[leave]
    return False  # a closed loop


def squares(board: list[list[Any]], me: dict[str, Any] | None) -> list[tuple[str, int, int, int]]:
    """(placement type, x, y, entry port) of every square this player may place on."""
    if me is None or me["tile"] is None:  # first move: an empty border square, no neighbours
        found = []
        for y in range(SIZE):
            for x in range(SIZE):
                if (0 < x < SIZE - 1 and 0 < y < SIZE - 1) or board[y][x] is not None:
                    continue
                around = ((x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y))
                if any(on_board(a, b) and board[b][a] is not None for a, b in around):
                    continue
                for port in range(8):  # entering through a port that faces off the board
                    if not on_board(x + STEP[port][0], y + STEP[port][1]):
                        found.append(("INITIAL", x, y, port))
        return found
    leave = PORTS.index(me["port"])
    x, y = me["tile"]["x"] + STEP[leave][0], me["tile"]["y"] + STEP[leave][1]
    return [("INTERMEDIATE", x, y, FACING[leave])]


def choose(board: list[list[Any]], hand: list[int], me: dict[str, Any] | None, color: str) -> dict[str, Any]:
    """The first placement that keeps this player alive (any legal one when none does)."""
    fallback = None
    for kind, x, y, entry in squares(board, me):
        for index in hand:
            for rotation in (0, 90, 180, 270):
                move = {"type": "MOVE_REQUEST", "placement_type": kind, "index": index}
                move |= {"rotation": rotation, "color": color, "x": x, "y": y}
                if kind == "INITIAL":
                    move["port"] = PORTS[entry]
                fallback = fallback or move
                board[y][x] = {"index": index, "rotation": rotation}
                alive = survives(board, x, y, entry)
                board[y][x] = None
                if alive:
                    return move
    if fallback is None:
        raise RuntimeError("nowhere to place a tile")
    return fallback


async def play(host: str, port: int, name: str) -> dict[str, Any]:
    """Play one table to its end; the GAME_END results."""
    reader, writer = await asyncio.open_connection(host, port)
    color, me = "", None
    try:
        while line := await reader.readline():  # one JSON object per line
            message = json.loads(line)
            kind = message["type"]
            if kind == "ASK_FOR_PLAYER_INFO":
                writer.write(
                    json.dumps({"type": "JOIN", "name": name, "strategy": "survivor"}).encode() + b"\n"
                )
            elif kind == "RECEIVE_COLOR":
                color = message["color"]
            elif kind == "RECEIVE_GAME_STATE":
                me = {"tile": message["tile"], "port": message["port"]}
            elif kind == "ASK_FOR_MOVE":
                hand = [tile["index"] for tile in message["tiles"] if tile is not None]
                writer.write(json.dumps(choose(message["board"], hand, me, color)).encode() + b"\n")
            elif kind == "EJECTED":
                raise RuntimeError(f"ejected: {message['reason']}")
            elif kind == "GAME_END":
                results: dict[str, Any] = message["results"]
                return results
            await writer.drain()
        raise RuntimeError("the server closed the connection before the game ended")
    finally:
        writer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="Play one Tsuro game against Parlour's robots.")
    parser.add_argument("--host", default="127.0.0.1", help="the server's address")
    parser.add_argument("--port", type=int, default=8000, help="the Tsuro listener's port")
    parser.add_argument("--name", default="example", help="the name sent in JOIN")
    args = parser.parse_args()
    try:
        results = asyncio.run(play(args.host, args.port, args.name))
    except (OSError, RuntimeError) as error:
        print(f"tsuro_client: {error}", file=sys.stderr)
        return 1
    places = "; ".join(
        f"{place}: {', '.join(player['color'] for player, _ in entries)}"
        for place, entries in results.items()
    )
    print(f"game over: {places}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
