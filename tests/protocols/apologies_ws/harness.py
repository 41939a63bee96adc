"""Drive an ApologiesService without sockets: fake connections, a fake clock, a seeded rng."""

from __future__ import annotations

import json
from dataclasses import replace
from random import Random
from typing import Any

from apologiesserver.interface import Message

from parlour.core.effects import Close, Effect, Send
from parlour.protocols.apologies_ws import ApologiesService
from parlour.settings import Settings

T0 = 1_800_000_000.0


class Server:
    """The service plus a record of everything it sent, per connection."""

    def __init__(self, seed: int = 1, strict_wire: bool = True, **settings: Any) -> None:
        # The clock stands still unless a test moves it: no request rate applies unless asked.
        settings.setdefault("requests_per_second", 1e9)
        self.service = ApologiesService(replace(Settings(), **settings), Random(seed))
        self.now = T0
        self.inbox: dict[int, list[dict[str, Any]]] = {}
        self.closed: dict[int, Close] = {}
        self.strict_wire = strict_wire
        self.sent = 0
        #: Every message in the order sent: (connection, message).
        self.log: list[tuple[int, dict[str, Any]]] = []

    def _take(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                if self.strict_wire:
                    Message.for_json(effect.data.decode())  # every message parses with the reference client
                self.sent += 1
                message = json.loads(effect.data)
                self.inbox.setdefault(effect.conn, []).append(message)
                self.log.append((effect.conn, message))
            else:
                self.closed[effect.conn] = effect

    def connect(self, conn: int) -> Client:
        self._take(self.service.connected(conn, self.now))
        return Client(self, conn)

    def last_turn(self) -> tuple[int, dict[str, Any]] | None:
        """The connection and message of the latest GAME_PLAYER_TURN if it still waits for a move."""
        for conn, message in reversed(self.log):
            if message["message"] == "GAME_PLAYER_TURN":
                game = self.service.lobby.games.get(message["context"]["game_id"])
                pending = game.pending if game is not None else {}
                return (conn, message) if set(message["context"]["moves"]) == set(pending) else None
        return None

    def tick(self, seconds: float = 0.0) -> None:
        self.now += seconds
        self._take(self.service.tick(self.now))


class Client:
    def __init__(self, server: Server, conn: int) -> None:
        self.server = server
        self.conn = conn
        self.player_id: str | None = None

    def raw(self, data: str | bytes) -> list[dict[str, Any]]:
        """Send one frame; return what this connection received because of it."""
        before = len(self.server.inbox.get(self.conn, []))
        self.server._take(self.server.service.received(self.conn, data, self.server.now))
        return self.server.inbox.get(self.conn, [])[before:]

    def request(
        self, message: str, context: dict[str, Any] | None = None, player_id: Any = "mine"
    ) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"message": message}
        if player_id == "mine":
            player_id = self.player_id
        if player_id is not None:
            body["player_id"] = player_id
        if context is not None:
            body["context"] = context
        return self.raw(json.dumps(body))

    def register(self, handle: str) -> list[dict[str, Any]]:
        got = self.request("REGISTER_PLAYER", {"handle": handle}, player_id=None)
        if got and got[0]["message"] == "PLAYER_REGISTERED":
            self.player_id = got[0]["player_id"]
        return got

    def advertise(
        self,
        players: int = 2,
        visibility: str = "PUBLIC",
        invited: list[str] | None = None,
        mode: str = "STANDARD",
        name: str = "Game",
    ) -> list[dict[str, Any]]:
        context = {
            "name": name,
            "mode": mode,
            "players": players,
            "visibility": visibility,
            "invited_handles": invited or [],
        }
        return self.request("ADVERTISE_GAME", context)

    def disconnect(self) -> None:
        self.server._take(self.server.service.disconnected(self.conn, self.server.now))

    @property
    def inbox(self) -> list[dict[str, Any]]:
        return self.server.inbox.get(self.conn, [])

    def last(self, message: str) -> dict[str, Any]:
        return next(m for m in reversed(self.inbox) if m["message"] == message)


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    return [m["message"] for m in messages]


def failure(messages: list[dict[str, Any]]) -> tuple[str, str, str | None]:
    assert kinds(messages) == ["REQUEST_FAILED"], messages
    context = messages[0]["context"]
    return context["reason"], context["comment"], context["handle"]
