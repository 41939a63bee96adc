"""Play one asynchronous game of Fish under server rules, two accounts and a robot, over ``/async``.

    python examples/async_client.py [--server http://127.0.0.1:8080] [--game fish|tsuro|apologies]

The workflow of docs/async-protocol.md from the start: two accounts are created over HTTP
(``POST /api/accounts``) and signed in (``POST /api/sessions``); each opens its own websocket on
``/async`` and authenticates with its token. The first invites the second and a robot (friend id
0) to a game whose ``rules`` are Parlour's own, so the server keeps the board, sends each seat
its view and its ``legal_actions`` in ``ActionRequiredRequest``, and plays the robot's seat
itself. Both humans commit one of their legal actions every turn until ``GameOutcomeRequest``,
which each confirms. It prints the outcome and exits 0. Needs only ``websockets``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import urllib.error
import urllib.request
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

PASSWORD = "example password"
#: Seats per game, for an invitation of one friend and robots (Tsuro needs three at least).
SEATS = {"fish": 3, "tsuro": 3, "apologies": 4}


def post(server: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """A JSON POST; the answer's JSON (an HTTP error says what the server objected to)."""
    request = urllib.request.Request(
        server + path, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            found: dict[str, Any] = json.loads(answer.read())
            return found
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"POST {path}: {error.code} {error.read().decode(errors='replace')}") from None


def sign_up(server: str, name: str) -> tuple[int, str]:
    """A new account and a session token for it: (player id, token)."""
    player_id = post(server, "/api/accounts", {"name": name, "password": PASSWORD})["player_id"]
    return player_id, post(server, "/api/sessions", {"name": name, "password": PASSWORD})["token"]


async def receive(ws: ClientConnection, *types: str) -> dict[str, Any]:
    """The next message of one of ``types``; an ErrorRequest is raised, other messages skipped."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if message["type"] == "ErrorRequest":
            raise RuntimeError(f"{message['code']}: {message['message']}")
        if message["type"] in types:
            return message


async def take_turns(ws: ClientConnection, game_id: int, seat: int, rng: random.Random) -> dict[str, Any]:
    """Commit a legal action whenever this seat must act; the outcome when the game ends."""
    while True:
        message = await receive(ws, "ActionRequiredRequest", "GameOutcomeRequest", "GameAbortedRequest")
        if message["game_id"] != game_id:
            continue
        if message["type"] == "GameAbortedRequest":
            raise RuntimeError("the game was aborted")
        if message["type"] == "GameOutcomeRequest":
            await ws.send(json.dumps({"type": "GameOutcomeConfirmationRequest", "game_id": game_id}))
            return message
        if message["player_id"] == seat:  # the seat's view is message["state"], a JSON string
            action = rng.choice(message["legal_actions"])
            commit = {"type": "CommitActionRequest", "game_id": game_id, "action": action}
            await ws.send(json.dumps(commit | {"turn_index": message["turn_index"]}))


async def sign_in(server: str, name: str, token: str) -> ClientConnection:
    ws = await connect(server.replace("http", "ws", 1) + "/async")
    await ws.send(json.dumps({"type": "AsyncAuthRequest", "name": name, "sessionToken": token}))
    await receive(ws, "AsyncConnectedRequest")
    return ws


async def play(server: str, game: str, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    suffix = secrets.token_hex(3)  # fresh names, so that the example can run again on the same store
    ann, bob = f"ann{suffix}", f"bob{suffix}"
    (_, ann_token), (bob_id, bob_token) = await asyncio.gather(
        asyncio.to_thread(sign_up, server, ann), asyncio.to_thread(sign_up, server, bob)
    )
    first, second = await sign_in(server, ann, ann_token), await sign_in(server, bob, bob_token)
    try:
        robots = [0] * (SEATS[game] - 2)
        configuration = {
            "game_type": game,
            "rules": game,
            "min_players": SEATS[game],
            "max_players": SEATS[game],
        }
        invite = {"type": "EngageGameWithFriendsRequest", "friend_ids": [bob_id, *robots]}
        await first.send(json.dumps(invite | {"configuration": configuration}))
        game_id = (await receive(first, "GameCreatedRequest"))["game_id"]
        await receive(second, "GameCreatedRequest")  # the invitation
        await second.send(json.dumps({"type": "AnswerInvitationRequest", "game_id": game_id, "accept": True}))
        # Seats are numbered in join order: the inviter 1, then the friend ids in order.
        outcome, _ = await asyncio.gather(
            take_turns(first, game_id, 1, rng), take_turns(second, game_id, 2, rng)
        )
        return outcome
    finally:
        await first.close()
        await second.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="Play one /async game with server rules and a robot.")
    parser.add_argument("--server", default="http://127.0.0.1:8080", help="the server's HTTP address")
    parser.add_argument("--game", choices=sorted(SEATS), default="fish", help="the rules to play")
    parser.add_argument("--seed", type=int, default=1, help="seed of the clients' own choices")
    args = parser.parse_args()
    try:
        outcome = asyncio.run(play(args.server.rstrip("/"), args.game, args.seed))
    except (OSError, RuntimeError) as error:
        print(f"async_client: {error}", file=sys.stderr)
        return 1
    print("game over: " + json.dumps(outcome["outcome"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
