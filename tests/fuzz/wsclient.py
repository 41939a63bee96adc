"""What the websocket fuzzers share: a connection that collects what a case's frames brought back,
up to a sentinel reply the runner recognises."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

__all__ = ["Closed", "WsPeer"]

#: How long any single answer may take before the oracle calls it a hang.
ANSWER_TIMEOUT = 8.0


class Closed(Exception):
    """The server closed the connection; ``code`` is its close code (None: no close frame)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed with {code}")
        self.code = code


class WsPeer:
    def __init__(self, url: str) -> None:
        self.url = url
        self.ws: ClientConnection | None = None

    async def open(self) -> None:
        self.ws = await connect(self.url, max_size=None, compression=None, open_timeout=ANSWER_TIMEOUT)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def send(self, frame: str | bytes) -> None:
        assert self.ws is not None
        try:
            # A server that stops reading must not hang the fuzzer: a send that cannot finish
            # in time is a finding (TimeoutError, reported by the runner).
            await asyncio.wait_for(self.ws.send(frame), ANSWER_TIMEOUT)
        except ConnectionClosed as closed:
            raise Closed(closed.rcvd.code if closed.rcvd else None) from None

    async def receive(self) -> dict[str, Any]:
        assert self.ws is not None
        try:
            data = await asyncio.wait_for(self.ws.recv(), ANSWER_TIMEOUT)
        except ConnectionClosed as closed:
            raise Closed(closed.rcvd.code if closed.rcvd else None) from None
        body = json.loads(data)
        if not isinstance(body, dict):
            raise AssertionError(f"the server sent a non-object: {data[:200]!r}")
        return body

    async def until(self, done: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Every message up to and including the first that ``done`` accepts."""
        seen = []
        while True:
            message = await self.receive()
            seen.append(message)
            if done(message):
                return seen
