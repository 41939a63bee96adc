"""A lean websocket client for load generation (RFC 6455, text frames only, no extensions).

The load generator shares a small machine with the server it measures: a general-purpose client
(the ``websockets`` asyncio client) spends about as much CPU per frame as a fast server does, so
past a few thousand frames a second the client, not the server, sets the pace. This one speaks
just what the Apologies protocol needs: the opening handshake, unfragmented unmasked text frames
in, masked text frames out, pings answered, and a closing handshake. It is used for both servers,
so the comparison stays fair.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import socket
import struct
from collections import deque
from typing import TypeVar, cast

from websockets.speedups import apply_mask

__all__ = ["DrainClient", "WireClient", "open_client"]

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA

Client = TypeVar("Client", bound="WireClient")


class WireClient(asyncio.Protocol):
    def __init__(self, host: str, port: int, path: str) -> None:
        self.key = base64.b64encode(os.urandom(16))
        self.request = (
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            ).encode()
            + b"Sec-WebSocket-Key: "
            + self.key
            + b"\r\n\r\n"
        )
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = False
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.messages: deque[bytes] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False  # a close frame went either way, or the connection was lost
        self.lost = False
        self.error: Exception | None = None

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports do not derive from asyncio's.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.upgraded and not self._handshake():
            return
        self._frames()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = self.lost = True
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        self._wake()

    # Protocol details
    def _handshake(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[: end + 4]
        accept = base64.b64encode(hashlib.sha1(self.key + GUID).digest()).decode()
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
        if not head[0].startswith("HTTP/1.1 101") or headers.get("sec-websocket-accept") != accept:
            self.opened.set_exception(ConnectionError(f"handshake refused: {head[0]}"))
            assert self.transport is not None
            self.transport.close()
            return False
        self.upgraded = True
        self.opened.set_result(None)
        return True

    def _frames(self) -> None:
        buffer, size, at = self.buffer, len(self.buffer), 0
        while size - at >= 2:
            first, second = buffer[at], buffer[at + 1]
            length = second & 0x7F
            head = 2
            if length == 126:
                if size - at < 4:
                    break
                (length,) = struct.unpack_from("!H", buffer, at + 2)
                head = 4
            elif length == 127:
                if size - at < 10:
                    break
                (length,) = struct.unpack_from("!Q", buffer, at + 2)
                head = 10
            if size - at < head + length:
                break
            payload = bytes(buffer[at + head : at + head + length])
            at += head + length
            opcode = first & 0x0F
            if not first & 0x80 or second & 0x80:
                self.error = ConnectionError("fragmented or masked frame from the server")
            elif opcode == TEXT:
                self.messages.append(payload)
            elif opcode == PING:
                self._send(PONG, payload)
            elif opcode == CLOSE:
                if not self.closed:
                    self._send(CLOSE, payload[:2])
                self.closed = True
        del buffer[:at]

    def _send(self, opcode: int, payload: bytes) -> None:
        assert self.transport is not None
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        mask = os.urandom(4)
        self.transport.write(head + mask + apply_mask(payload, mask))

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    # What the load uses
    def send(self, text: bytes) -> None:
        if self.closed:
            raise ConnectionError("connection closed")
        self._send(TEXT, text)

    async def recv(self) -> bytes:
        while not self.messages:
            if self.error is not None:
                raise self.error
            if self.closed:
                raise ConnectionError("connection closed")
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return self.messages.popleft()

    async def close(self, timeout: float = 5.0) -> None:
        """The closing handshake: close frame 1000, then wait (bounded) for the server to end it."""
        assert self.transport is not None
        if not self.closed:
            self.closed = True
            self._send(CLOSE, struct.pack("!H", 1000))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.lost and loop.time() < deadline:
            self.waiter = loop.create_future()
            try:
                await asyncio.wait_for(self.waiter, timeout=deadline - loop.time())
            except TimeoutError:
                break
        self.transport.close()


class DrainClient(WireClient):
    """A WireClient that, once :meth:`drain` is called, keeps no message: it counts the text
    frames whose payload starts with a given head (and every byte), answers pings and close
    frames, and skips every other payload unread. A fan-out to thousands of connections costs it
    a few header reads per write, so that a load generator with many connections does not cap
    the server it measures. Before :meth:`drain` it is a plain WireClient (for a sign-in)."""

    def __init__(self, host: str, port: int, path: str) -> None:
        super().__init__(host, port, path)
        #: Text frames counted (those starting with the head) and bytes received, while draining.
        self.counted = 0
        self.received = 0
        self._head = b""
        self._draining = False
        #: Payload bytes still to skip (a frame runs on past the last chunk), or the start of a
        #: frame cut short (a header, or a control frame, which is read whole).
        self._skip = 0
        self._rest = b""

    def drain(self, head: bytes) -> None:
        """From now on, count text frames starting with ``head`` and drop every message."""
        self._head = head
        self._draining = True
        self._rest = bytes(self.buffer)
        self.buffer.clear()
        self.messages.clear()

    def read_in_bulk(self, low_water: int) -> None:
        """Be told of incoming data only once ``low_water`` bytes wait (SO_RCVLOWAT; 1 is the
        default): fewer wake-ups and reads for a client that only counts what it gets. Pings
        then wait for that much traffic: for a connection that gets a steady flow."""
        assert self.transport is not None
        sock = self.transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, low_water)

    def data_received(self, data: bytes) -> None:
        if not self._draining:
            super().data_received(data)
            return
        size = len(data)
        self.received += size
        at = self._skip
        if at >= size:
            self._skip = at - size
            return
        self._skip = 0
        if self._rest:
            data = self._rest + data
            size = len(data)
            self._rest = b""
        head = self._head
        wanted = len(head)
        counted = 0
        while size - at >= 2:
            first = data[at]
            length = data[at + 1] & 0x7F
            start = at + 2
            if length == 126:
                if size - at < 4:
                    break
                length = (data[at + 2] << 8) | data[at + 3]
                start = at + 4
            elif length == 127:
                if size - at < 10:
                    break
                length = int.from_bytes(data[at + 2 : at + 10], "big")
                start = at + 10
            end = start + length
            opcode = first & 0x0F
            if opcode == TEXT:
                # A payload cut short before its head is counted: the servers measured send
                # nothing else that large in the window.
                if size < start + wanted or data.startswith(head, start):
                    counted += 1
            elif opcode >= CLOSE:
                if end > size:
                    break  # a control frame is read whole (at most 125 bytes)
                self._control(opcode, data[start:end])
            at = end
        self.counted += counted
        if at > size:
            self._skip = at - size
        elif at < size:
            self._rest = data[at:]

    def _control(self, opcode: int, payload: bytes) -> None:
        if opcode == PING:
            self._send(PONG, payload)
        elif opcode == CLOSE:
            if not self.closed:
                self._send(CLOSE, payload[:2])
            self.closed = True
            self._wake()


async def open_client(
    host: str,
    port: int,
    path: str = "/",
    factory: type[Client] = WireClient,  # type: ignore[assignment]
) -> Client:
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: factory(host, port, path), host, port)
    await client.opened
    return client
