"""A Fish or Tsuro client the server ejects while its own writes are still arriving reads the line
saying why: the server half-closes and drains the client's input before closing, rather than
closing a socket with unread input (which resets the connection, and a reset makes the client's
kernel drop what the client has not read yet)."""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import replace
from random import Random
from typing import Any

import pytest

from parlour.protocols.fish_tcp import FishService
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp

#: A message neither protocol accepts first, sent over and over: megabytes in flight when the
#: first one gets its sender ejected.
BAD = b'{"type": "NONSENSE", "padding": "' + b"x" * 200 + b'"}\n'
FLOOD = BAD * 20_000


def flood(port: int) -> tuple[list[dict[str, Any]], BaseException | None]:
    """Send FLOOD without reading, then end the writes and read everything until the server's
    end: the lines read, and the error that cut the reading short, if any."""
    lines: list[dict[str, Any]] = []
    received = b""
    error: BaseException | None = None
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(FLOOD)
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(65_536):
                received += chunk
        except OSError as failure:  # reset by the server: what was not read yet is lost
            error = failure
    for text in received.decode().splitlines():
        lines.append(json.loads(text))
    return lines, error


async def ejected(protocol: str) -> tuple[list[dict[str, Any]], BaseException | None]:
    settings = replace(Settings(), requests_per_second=1e9)
    service = FishService(settings, Random(1)) if protocol == "fish" else TsuroService(settings, Random(1))
    runtime = Runtime()
    async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:
        return await asyncio.wait_for(asyncio.to_thread(flood, listener.port), 30)


@pytest.mark.parametrize("protocol", ["fish", "tsuro"])
def test_a_client_ejected_while_its_writes_are_in_flight_reads_the_last_line(protocol: str) -> None:
    lines, error = asyncio.run(ejected(protocol))
    assert error is None
    last = lines[-1]
    if protocol == "fish":
        # Refused before it joined a table: a PlayerConnected with the reason.
        assert last["type"] == "PlayerConnected" and last["error_message"]
    else:
        assert [line["type"] for line in lines] == ["ASK_FOR_PLAYER_INFO", "EJECTED"]
        assert last["reason"]


def silent(port: int) -> tuple[list[dict[str, Any]], bytes]:
    """Send one bad message, then neither send nor close: the lines read, and what the read
    after them ends with (b"": the server closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(BAD)
        received = b""
        while received.count(b"\n") < 2:
            received += sock.recv(65_536)
        try:
            rest = sock.recv(65_536)
        except ConnectionResetError:
            rest = b""
    return [json.loads(text) for text in received.decode().splitlines()], rest


async def lingered(monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], bytes]:
    monkeypatch.setattr("parlour.transport.tcp.LINGER_SECONDS", 0.05)
    service = TsuroService(Settings(), Random(1))
    runtime = Runtime()
    async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:
        return await asyncio.wait_for(asyncio.to_thread(silent, listener.port), 20)


def test_a_client_that_does_not_close_after_it_is_ejected_is_dropped_after_the_linger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines, rest = asyncio.run(lingered(monkeypatch))
    assert [line["type"] for line in lines] == ["ASK_FOR_PLAYER_INFO", "EJECTED"]
    assert rest == b""
