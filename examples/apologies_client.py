"""Play one game of Apologies against Parlour's robots over the Apologies websocket protocol.

    python examples/apologies_client.py [--url ws://127.0.0.1:8080/] [--handle NAME] [--seed N]

The client registers a handle, advertises a private four-player game, starts it at once (the
server seats its robots in the three empty places) and, every time it is asked to move, picks one
of the legal moves the server offers. It prints the winner and exits 0 when the game is over.
It needs only the ``websockets`` package; see docs/clients.md for the protocol it speaks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


async def send(ws: ClientConnection, message: str, player_id: str | None = None, **context: Any) -> None:
    """One request: ``message`` names it; every request but REGISTER_PLAYER carries the player id."""
    body: dict[str, Any] = {"message": message}
    if player_id is not None:
        body["player_id"] = player_id
    if context:
        body["context"] = context
    await ws.send(json.dumps(body))


def choose(moves: dict[str, Any], rng: random.Random) -> str:
    """A robot in one line: the move that takes a pawn furthest along, else any legal move.

    Each move is a list of actions; an action's ``end`` position says where a pawn lands. A pawn
    reaching home (``home``) or the safe zone (``safe``) is worth most; then the highest square.
    """

    def value(move: dict[str, Any]) -> float:
        best = 0.0
        for action in move["actions"]:
            end = action["end"]
            if end["home"]:
                best = max(best, 100.0)
            elif end["safe"] is not None:
                best = max(best, 80.0 + end["safe"])
        return best + rng.random()  # ties broken at random

    return max(moves, key=lambda move_id: value(moves[move_id]))


async def play(url: str, handle: str, seed: int) -> str:
    """Play one game to its end; the winner's handle."""
    rng = random.Random(seed)
    async with connect(url) as ws:
        await send(ws, "REGISTER_PLAYER", handle=handle)
        player_id = None
        async for frame in ws:
            event = json.loads(frame)
            kind, context = event["message"], event.get("context") or {}
            if kind == "PLAYER_REGISTERED":
                player_id = event["player_id"]
                await send(
                    ws,
                    "ADVERTISE_GAME",
                    player_id,
                    name=f"{handle}'s game",
                    mode="STANDARD",
                    players=4,
                    visibility="PRIVATE",
                    invited_handles=[],
                )
            elif kind == "GAME_ADVERTISED":
                await send(ws, "START_GAME", player_id)  # robots take the empty seats
            elif kind == "GAME_PLAYER_TURN":
                await send(ws, "EXECUTE_MOVE", player_id, move_id=choose(context["moves"], rng))
            elif kind == "GAME_COMPLETED":
                await send(ws, "UNREGISTER_PLAYER", player_id)
                return str(context["winner"])
            elif kind in ("REQUEST_FAILED", "GAME_CANCELLED", "SERVER_SHUTDOWN"):
                raise RuntimeError(f"{kind}: {context}")
    raise RuntimeError("the server closed the connection before the game ended")


def main() -> int:
    parser = argparse.ArgumentParser(description="Play one Apologies game against Parlour's robots.")
    parser.add_argument("--url", default="ws://127.0.0.1:8080/", help="the server's websocket URL")
    parser.add_argument("--handle", default="example", help="the handle to register")
    parser.add_argument("--seed", type=int, default=1, help="seed of the client's own choices")
    args = parser.parse_args()
    try:
        winner = asyncio.run(play(args.url, args.handle, args.seed))
    except (OSError, RuntimeError) as error:
        print(f"apologies_client: {error}", file=sys.stderr)
        return 1
    print(f"game over: {winner} won")
    return 0


if __name__ == "__main__":
    sys.exit(main())
