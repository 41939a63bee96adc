"""Crash tests: ``parlour serve`` on a real store file is killed with SIGKILL at seeded random
moments (while registering, advertising, starting, and in the middle of moves and commits),
restarted on the same file, and the client carries on where it was.

The oracle: every state the client saw acknowledged is in the store, in the same order, and
nothing else is, except the moves of the one request it had in flight when the server died
(stored, not yet shown); the player comes back with REREGISTER_PLAYER, gets its game and its
turn again, and plays the game to completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.processes import RestartableServer


class Killed(Exception):
    """The server was killed by the test."""


@dataclass
class Server(RestartableServer):
    """The store file's server, with random robots (fast, and any robot is as good here).

    Every other kill takes its store writer (the process that applies the redo log) down with
    it, stopped first so that it cannot apply what the server acknowledged last: as a power cut
    would, with the log still in the disk's cache. The next start applies the log."""

    extra: tuple[str, ...] = ("--robot", "random")
    kills: int = 0

    def kill(self) -> None:
        assert self.process is not None
        self.kills += 1
        writers = store_writers(self.process.pid) if self.kills % 2 == 0 else []
        for pid in writers:
            os.kill(pid, signal.SIGSTOP)
        super().kill()
        for pid in writers:
            os.kill(pid, signal.SIGKILL)

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as answer:
            return json.loads(answer.read())


def store_writers(pid: int) -> list[int]:
    """The processes applying the redo log of the server ``pid``."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = []
    for child in children:
        with contextlib.suppress(OSError):
            if b"parlour.storage.applier" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def pawns_of(context: dict[str, Any]) -> dict[str, list[Any]]:
    """Every colour's pawns in a GAME_STATE_CHANGE."""
    parts = [context["player"], *context["opponents"]]
    return {part["color"]: part["pawns"] for part in parts}


@dataclass
class Client:
    """One human at a 4-seat STANDARD game against robots, remembering what it saw."""

    server: Server
    rng: random.Random
    handle: str
    player_id: str | None = None
    game_id: str | None = None
    #: Pawns after each move it saw, index 0 being the start: seen[i] is after i moves.
    seen: list[dict[str, list[Any]]] = field(default_factory=list)
    #: How many moves were stored when it sent the request in flight at the kill (or None).
    in_flight: int | None = None
    done: bool = False
    kill_after: int = 0
    received: int = 0

    async def send(self, ws: ClientConnection, message: str, **context: Any) -> None:
        body: dict[str, Any] = {"message": message}
        if self.player_id is not None and message != "REGISTER_PLAYER":
            body["player_id"] = self.player_id
        if context:
            body["context"] = context
        await ws.send(json.dumps(body))
        # Half of the kills come right after a request leaves, before its answer: mid-move,
        # mid-commit, mid-start.
        if self.received >= self.kill_after and self.rng.random() < 0.5:
            self.in_flight = len(self.seen) - 1 if self.seen else None
            self.server.kill()
            raise Killed

    async def receive(self, ws: ClientConnection) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 20))
        self.received += 1
        self.in_flight = None
        self.observe(message)
        if self.received >= self.kill_after:
            self.server.kill()
            raise Killed
        return message

    def observe(self, message: dict[str, Any]) -> None:
        kind, context = message["message"], message.get("context") or {}
        if kind == "PLAYER_REGISTERED":
            self.player_id = message["player_id"]
        elif kind == "GAME_ADVERTISED":
            self.game_id = context["game"]["game_id"]
        elif kind == "GAME_STATE_CHANGE":
            moves = len(context["recent_history"])  # only to check the server's bookkeeping
            assert moves >= 1
            state = pawns_of(context)
            if not self.seen or self.seen[-1] != state or self.turns(context) != self.last_turns:
                self.seen.append(state)
                self.last_turns = self.turns(context)
        elif kind == "GAME_COMPLETED":
            self.done = True
        elif kind == "REQUEST_FAILED":
            raise AssertionError(f"request failed: {message}")

    last_turns: tuple[int, ...] = ()
    backlog: list[dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def turns(context: dict[str, Any]) -> tuple[int, ...]:
        parts = sorted([context["player"], *context["opponents"]], key=lambda p: p["color"])
        return tuple(part["turns"] for part in parts)

    async def session(self) -> None:
        """Connect, (re)register, and play until the game ends or the server is killed."""
        self.backlog.clear()
        async with connect(f"ws://127.0.0.1:{self.server.port}/") as ws:
            known = self.player_id
            if self.player_id is None:
                await self.send(ws, "REGISTER_PLAYER", handle=self.handle)
            else:
                await self.send(ws, "REREGISTER_PLAYER", handle=self.handle)
            await self.expect(ws, "PLAYER_REGISTERED")
            # An acknowledged registration survives: the same id, not a new registration.
            assert known is None or self.player_id == known
            if self.game_id is None:
                # An ADVERTISE_GAME in flight at a kill may have been stored and not shown.
                await self.send(ws, "LIST_AVAILABLE_GAMES")
                listed = await self.expect(ws, "AVAILABLE_GAMES")
                own = [
                    g["game_id"] for g in listed["context"]["games"] if g["advertiser_handle"] == self.handle
                ]
                self.game_id = own[0] if own else None
            if self.game_id is None:
                await self.send(
                    ws,
                    "ADVERTISE_GAME",
                    name="crash",
                    mode="STANDARD",
                    players=4,
                    visibility="PUBLIC",
                    invited_handles=[],
                )
                await self.expect(ws, "GAME_ADVERTISED")
            elif not self.seen:
                # An acknowledged advertisement survives: the game is still on offer.
                await self.send(ws, "LIST_AVAILABLE_GAMES")
                listed = await self.expect(ws, "AVAILABLE_GAMES")
                started = self.server.api(f"/api/games/{self.game_id}")["started"] is not None
                assert started or self.game_id in [g["game_id"] for g in listed["context"]["games"]]
            if self.server.api(f"/api/games/{self.game_id}")["started"] is None:
                await self.send(ws, "START_GAME")
            while not self.done:
                message = self.backlog.pop(0) if self.backlog else await self.receive(ws)
                if message["message"] == "GAME_PLAYER_TURN":
                    moves = sorted(message["context"]["moves"])
                    await self.send(ws, "EXECUTE_MOVE", move_id=self.rng.choice(moves))

    async def expect(self, ws: ClientConnection, kind: str) -> dict[str, Any]:
        """The next message of this kind; others (a turn sent on reregistration) wait their turn."""
        while True:
            message = await self.receive(ws)
            if message["message"] == kind:
                return message
            self.backlog.append(message)


def check_store_against_client(server: Server, client: Client) -> None:
    """Every state the client saw is stored, in order; anything more came from its last request."""
    if client.game_id is None:
        return
    record = server.api(f"/api/games/{client.game_id}")
    if record["initial"] is None:
        assert not client.seen, "the client saw a game start that was not stored"
        return
    stored = [{p["color"]: p["pawns"] for p in record["initial"]["players"]}]
    stored += [{p["color"]: p["pawns"] for p in move["view"]["players"]} for move in record["moves"]]
    # The client records a state when pawns or turn counts change; the store has one per move.
    distinct = [stored[0]]
    for state in stored[1:]:
        distinct.append(state)
    positions = iter(range(len(stored)))
    for state in client.seen:
        assert any(stored[i] == state for i in positions), "a state the client saw is not in the store"
    if len(record["moves"]) > 0 and client.in_flight is None and client.seen:
        # No request in flight: the store holds exactly up to the last state shown, except
        # robot moves that follow it (never a move of the human that it did not send).
        last_shown = max(i for i, state in enumerate(stored) if state == client.seen[-1])
        extra = record["moves"][last_shown:]
        assert all(move["seat"] != 0 for move in extra), "a human move the client never sent is stored"


def test_sigkill_at_seeded_moments_loses_nothing_acknowledged(tmp_path: Path) -> None:
    server = Server(tmp_path / "parlour.db", tmp_path / "server.log")
    rng = random.Random(20261123)
    kills = 0
    try:
        for number in range(3):
            client = Client(server, random.Random(number), f"crash{number}")
            # Early kills hit registration, advertising and the start; later ones moves.
            schedule = [1, 2, 3, 4] if number == 0 else []
            while not client.done:
                server.start()
                check_store_against_client(server, client)
                client.received = 0
                client.kill_after = schedule.pop(0) if schedule else rng.randint(1, 40)
                if kills >= 5 * (number + 1):
                    client.kill_after = 10**9  # enough kills for this game: play it out
                try:
                    asyncio.run(client.session())
                except Killed:
                    kills += 1
                    continue
                except ConnectionClosed:
                    raise
                server.stop()
            server.start()
            record = server.api(f"/api/games/{client.game_id}")
            assert record["state"] == "COMPLETED"
            listed = server.api(f"/api/games?player=crash{number}")["games"]
            assert [game["id"] for game in listed] == [client.game_id]
            server.stop()
    finally:
        server.stop()
    assert kills >= 12
    # Some of the kills left batches only the log held (the writer stopped before applying them).
    assert "the last server had left in its redo log" in server.log.read_text()
