"""Reference clients against a real Parlour server over loopback websockets."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from apologiesserver.interface import Message, MessageType
from websockets.asyncio.client import connect

DEMO = """
import logging, sys
from apologiesserver.demo import demo
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
demo(host="127.0.0.1", port=int(sys.argv[1]))
"""


def test_reference_demo_client_plays_a_whole_game(parlour_port: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEMO, str(parlour_port)], capture_output=True, text=True, timeout=90
    )
    out = done.stdout + done.stderr
    assert "Game completed: Player" in out, out[-2000:]
    assert "Error with connection" not in out, out[-2000:]


async def robot_only_game(port: int, mode: str, seats: int, level: str | None = None) -> list[Message]:
    """Advertise (with robots of ``level``, a Parlour extension), start with programmatic seats,
    and let the server's robot choose every move."""
    received: list[Message] = []
    async with connect(f"ws://127.0.0.1:{port}/any/path?x=1") as ws:

        async def send(message: str, player_id: str | None = None, **context: object) -> None:
            body: dict[str, object] = {"message": message}
            if player_id:
                body["player_id"] = player_id
            if context:
                body["context"] = context
            await ws.send(json.dumps(body))

        async def next_message() -> Message:
            message = Message.for_json(str(await asyncio.wait_for(ws.recv(), 30)))
            received.append(message)
            return message

        await send("REGISTER_PLAYER", handle=f"robots{seats}{mode}")
        registered = await next_message()
        assert registered.message is MessageType.PLAYER_REGISTERED
        player_id = registered.player_id
        assert player_id is not None
        extension = {} if level is None else {"robot_level": level}
        await send(
            "ADVERTISE_GAME",
            player_id,
            name="robots only",
            mode=mode,
            players=seats,
            visibility="PRIVATE",
            invited_handles=[],
            **extension,
        )
        await send("START_GAME", player_id)
        while True:
            message = await next_message()
            assert message.message is not MessageType.REQUEST_FAILED, message
            if message.message is MessageType.GAME_PLAYER_TURN:
                await send("OPTIMAL_MOVE", player_id)
            elif message.message in (MessageType.GAME_COMPLETED, MessageType.GAME_CANCELLED):
                return received


@pytest.mark.parametrize(("mode", "seats"), [("STANDARD", 4), ("ADULT", 4), ("STANDARD", 2), ("ADULT", 3)])
def test_robot_only_games_over_the_wire(parlour_port: int, mode: str, seats: int) -> None:
    received = asyncio.run(robot_only_game(parlour_port, mode, seats))
    kinds = [message.message for message in received]
    assert kinds[-1] is MessageType.GAME_COMPLETED
    assert MessageType.GAME_STARTED in kinds
    started = next(
        m
        for m in received
        if m.message is MessageType.GAME_PLAYER_CHANGE and m.context.comment == "Game started"
    )  # type: ignore[union-attr]
    assert len(started.context.players) == seats  # type: ignore[union-attr]
    states = [m for m in received if m.message is MessageType.GAME_STATE_CHANGE]
    assert len(states) > 10
    assert states[0].context.recent_history[0].action == f"Game started with mode: GameMode.{mode}"  # type: ignore[union-attr]


def test_hard_robots_think_in_their_own_process_for_a_whole_game(parlour_port: int) -> None:
    """The hard level's robot decides away from the event loop (a process of its own): the
    game is played to its end all the same."""
    received = asyncio.run(robot_only_game(parlour_port, "STANDARD", 4, level="hard"))
    assert received[-1].message is MessageType.GAME_COMPLETED
    assert len([m for m in received if m.message is MessageType.GAME_STATE_CHANGE]) > 10
