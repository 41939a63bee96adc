"""The baseline of bench/async.py: a bare ``websockets`` server with the traffic of a game turn and
no logic, run as its own subprocess (``python bench/_echo.py --port PORT``, 127.0.0.1 only).

A client connects to ``/pair/GAME/SEAT`` (SEAT 1 or 2). Once both seats of a GAME are connected,
seat 1 gets a first prompt (as Parlour's game start sends ActionRequiredRequest to seat 1). Then,
for every text frame ("commit") a client sends, the server writes:

- one small ack frame to the sender (Parlour: ActionCommitedRequest);
- the frame itself to the paired client (Parlour: the broadcast GameStateUpdatedRequest);
- the frame again to the paired client, its type swapped to ``ActionRequiredRequest`` by a byte
  splice (Parlour: the next turn's prompt, which carries the state too).

So the same frames, of the same sizes, flow as for Parlour, and the load generator's code is the
same for both. Nothing is decoded, checked, stored or remembered beyond the pairs. Runs on uvloop
when it is installed, as Parlour does.

The lobby mode: a client connects to ``/lobby``. Every text frame a lobby client sends that starts
like a chat line (``{"type":"MulticastChatRequest",``) is relayed, its type swapped to
``ClientChatRequest`` by a byte splice, to every lobby client, the sender included (Parlour's lobby
chat: the line to everyone in the lobby, echoed to its sender), with websockets' own
``broadcast`` (one frame built and written per connection, no backpressure); other frames are
read and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

#: What a client's commit frame starts with, and what the prompt made of it starts with instead.
COMMIT_HEAD = b'{"type":"CommitActionRequest",'
PROMPT_HEAD = b'{"type":"ActionRequiredRequest",'
ACK = b'{"type":"ActionCommitedRequest","turn_index":0}'
FIRST_PROMPT = b'{"type":"ActionRequiredRequest","player_id":1,"state":"","turn_index":1}'

#: What a lobby client's chat line starts with, and what the line relayed starts with instead.
CHAT_HEAD = b'{"type":"MulticastChatRequest",'
RELAYED_HEAD = b'{"type":"ClientChatRequest",'

#: GAME -> its two seats' connections (None until that seat connects).
pairs: dict[str, list[ServerConnection | None]] = {}
#: The clients of the lobby mode.
lobby: set[ServerConnection] = set()


async def lobby_handler(ws: ServerConnection) -> None:
    lobby.add(ws)
    try:
        while True:
            data = await ws.recv(decode=False)
            assert isinstance(data, bytes)
            if data.startswith(CHAT_HEAD):
                broadcast(lobby, RELAYED_HEAD + data[len(CHAT_HEAD) :], text=True)
    except ConnectionClosed:
        pass
    finally:
        lobby.discard(ws)


async def handler(ws: ServerConnection) -> None:
    if ws.request is not None and ws.request.path == "/lobby":
        await lobby_handler(ws)
        return
    parts = ws.request.path.split("/") if ws.request is not None else []
    if len(parts) != 4 or parts[1] != "pair" or parts[3] not in ("1", "2"):
        await ws.close(1008, "connect to /pair/GAME/SEAT or /lobby")
        return
    game, me = parts[2], int(parts[3]) - 1
    seats = pairs.setdefault(game, [None, None])
    seats[me] = ws
    if seats[0] is not None and seats[1] is not None:
        await seats[0].send(FIRST_PROMPT, text=True)
    try:
        while True:
            data = await ws.recv(decode=False)
            assert isinstance(data, bytes)
            await ws.send(ACK, text=True)
            partner = seats[1 - me]
            if partner is not None:
                await partner.send(data, text=True)
                prompt = PROMPT_HEAD + data[len(COMMIT_HEAD) :] if data.startswith(COMMIT_HEAD) else data
                await partner.send(prompt, text=True)
    except ConnectionClosed:
        pass
    finally:
        seats[me] = None
        if seats[0] is None and seats[1] is None:
            pairs.pop(game, None)


async def main(port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with serve(handler, "127.0.0.1", port, compression=None, max_queue=64):
        await stop.wait()


def run(coroutine: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency of Parlour
        asyncio.run(coroutine)
        return
    uvloop.run(coroutine)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    with contextlib.suppress(KeyboardInterrupt):
        run(main(parser.parse_args().port))
