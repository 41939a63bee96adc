"""What the TCP line protocols (Fish, Tsuro) share: a JSON stream per connection, messages
decoded one by one, and a protocol violation ending in the sender's removal."""

from __future__ import annotations

from random import Random
from typing import Any

from parlour.core.effects import Close, ConnId, Effect, Send
from parlour.core.ledger import Ledger
from parlour.protocols.jsonstream import JsonStream, StreamError
from parlour.settings import Settings

__all__ = ["StreamedService", "Violation"]


class Violation(ValueError):
    """A message the protocol does not accept; the text says why (it may reach the client)."""


class StreamedService:
    """Base of the table services: subclasses decode messages, handle them, and refuse senders."""

    def __init__(self, settings: Settings, rng: Random | None = None, ledger: Ledger | None = None) -> None:
        self.settings = settings
        self.rng = rng if rng is not None else Random()
        #: Tables count as games in progress, with the server's other games (shared limit).
        self.ledger = ledger if ledger is not None else Ledger(settings.max_in_progress_games)
        self.streams: dict[ConnId, JsonStream] = {}
        self._out: list[Effect] = []

    def decode(self, message: Any) -> Any:
        raise NotImplementedError

    def handle(self, conn: ConnId, request: Any, now: float) -> None:
        raise NotImplementedError

    def refuse(self, conn: ConnId, reason: str, now: float) -> None:
        """Remove a sender that broke the protocol, the way the protocol says."""
        raise NotImplementedError

    def _drain(self) -> list[Effect]:
        out, self._out = self._out, []
        return out

    def _send(self, conn: ConnId, text: str) -> None:
        self._out.append(Send(conn, text.encode()))

    def _close(self, conn: ConnId) -> None:
        self._out.append(Close(conn))

    def _open_stream(self, conn: ConnId) -> bool:
        """Track a new connection; False when the connection limit is reached."""
        if len(self.streams) >= self.settings.max_connections:
            return False
        self.streams[conn] = JsonStream(self.settings.max_message_bytes)
        return True

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        stream = self.streams.get(conn)
        if stream is None:
            return []  # already refused: whatever else it sends is ignored
        try:
            values = stream.feed(data.encode() if isinstance(data, str) else data)
        except StreamError as error:
            self.refuse(conn, str(error), now)
            return self._drain()
        for value in values:
            if conn not in self.streams:
                break  # refused because of an earlier message of the same chunk
            try:
                self.handle(conn, self.decode(value), now)
            except Violation as error:
                self.refuse(conn, str(error), now)
        return self._drain()

    def shutdown(self, now: float) -> list[Effect]:
        for conn in list(self.streams):
            self._out.append(Close(conn, 1001, "server shutdown"))
        return self._drain()
