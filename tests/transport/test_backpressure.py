"""Back-pressure over real loopback sockets: a client that never reads is
closed once its outbox passes its byte cap, the server's queue for it stays bounded, and the
service hears of a disconnection like any other."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import socket
from typing import Any

import pytest

from parlour.core.effects import ConnId, Effect, Send
from parlour.transport import websocket
from parlour.transport.limits import ConnectionLimits
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp
from parlour.transport.websocket import serve_websocket
from tests.transport.services import Idle
from tests.transport.test_websocket_transport import Echo

CAP = 64 * 1024
MESSAGE = 4000  # bytes per message of Echo's "big:N"


def masked_text(text: str) -> bytes:
    """A client text frame (RFC 6455 5.2) with an all-zero mask, so the payload reads as is."""
    data = text.encode()
    if len(data) < 126:
        return bytes([0x81, 0x80 | len(data)]) + b"\0\0\0\0" + data
    assert len(data) < 65536
    return bytes([0x81, 0x80 | 126]) + len(data).to_bytes(2, "big") + b"\0\0\0\0" + data


async def open_websocket(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw websocket client whose socket receive buffer is as small as the kernel allows."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


def no_errors(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


async def until(condition: Any, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never met"
        await asyncio.sleep(0.02)


def test_a_websocket_client_that_never_reads_is_closed_and_forgotten(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(websocket, "CLOSE_TIMEOUT", 0.3)

    async def scenario() -> None:
        service = Echo()
        runtime = Runtime(limits=ConnectionLimits(outbox_bytes=CAP))
        async with serve_websocket(service, "127.0.0.1", 0, runtime) as listener:
            _reader, writer = await open_websocket(listener.port)
            await until(lambda: len(service.conns) == 1)
            [conn] = service.conns
            outbox = runtime.outboxes[conn]
            # 8 MB of messages asked for, none of them read.
            for _ in range(20):
                writer.write(masked_text("big:100"))
                await writer.drain()
                await asyncio.sleep(0.01)
                # Never more than the cap waits in the server's queue.
                assert outbox.pending_bytes <= CAP
                if outbox.overflowed:
                    break
            assert outbox.overflowed
            # The close frame cannot reach a client that does not read: the connection is
            # dropped after the closing timeout, and the service told.
            await until(lambda: not service.conns)
            assert conn not in runtime.outboxes
            writer.close()

    asyncio.run(scenario())
    no_errors(caplog)
    assert any("does not read its messages" in r.getMessage() for r in caplog.records)


def test_a_reader_keeps_its_connection_under_the_same_load() -> None:
    async def scenario() -> None:
        service = Echo()
        runtime = Runtime(limits=ConnectionLimits(outbox_bytes=CAP))
        async with serve_websocket(service, "127.0.0.1", 0, runtime) as listener:
            reader, writer = await open_websocket(listener.port)
            hello = len(b"hello 1") + 2
            frame = MESSAGE + 6 + 4  # payload "NNNNNN...." and a 4-byte header
            received = 0
            for round in range(1, 6):  # 2 MB in all, 400 kB at a time: 6 times the cap
                writer.write(masked_text("big:100"))
                await writer.drain()
                while received < hello + round * 100 * frame:  # a reader drains it all
                    received += len(await reader.read(65536))
            assert received == hello + 500 * frame
            assert len(service.conns) == 1
            writer.close()

    asyncio.run(scenario())


class Flood(Idle):
    """A line-protocol service that answers every chunk with ``count`` big lines."""

    def __init__(self, count: int = 200) -> None:
        self.count = count
        self.conns: list[ConnId] = []
        self.gone: list[ConnId] = []

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        self.conns.append(conn)
        return []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        return [Send(conn, b"x" * MESSAGE + b"\n") for _ in range(self.count)]

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self.gone.append(conn)
        return []


def test_a_tcp_client_that_never_reads_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)

    async def scenario() -> None:
        service = Flood()
        runtime = Runtime(limits=ConnectionLimits(outbox_bytes=CAP))
        async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:  # type: ignore[arg-type]
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", listener.port))
            _reader, writer = await asyncio.open_connection(sock=sock)
            await until(lambda: len(service.conns) == 1)
            [conn] = service.conns
            for _ in range(20):
                writer.write(b"go\n")
                await writer.drain()
                await asyncio.sleep(0.01)
                outbox = runtime.outboxes.get(conn)
                if outbox is None:
                    break
                assert outbox.pending_bytes <= CAP
            await until(lambda: service.gone == [conn])
            assert conn not in runtime.outboxes
            writer.close()

    asyncio.run(scenario())
    no_errors(caplog)
    assert any("does not read its messages" in r.getMessage() for r in caplog.records)
