"""Per-address limits and slow clients over real loopback sockets."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from parlour.core.ratelimit import TokenBucket
from parlour.settings import SettingError, Settings, load_settings
from parlour.transport import websocket
from parlour.transport.limits import AddressLimits, ConnectionLimits
from parlour.transport.runtime import Runtime
from parlour.transport.tcp import serve_tcp
from parlour.transport.websocket import serve_websocket
from tests.transport.test_backpressure import Flood, masked_text, no_errors, open_websocket, until
from tests.transport.test_websocket_transport import Echo

#: Loopback counted like any other address.
COUNTED: dict[str, Any] = {"exempt": frozenset()}


def test_token_bucket_bursts_then_rate() -> None:
    bucket = TokenBucket.full(2.0, 0.0)
    assert [bucket.allow(0.0) for _ in range(5)] == [True] * 4 + [False]
    assert bucket.allow(0.5) and not bucket.allow(0.5)  # one more token every half second
    assert not bucket.idle(0.5) and bucket.idle(100.0)


def test_address_limits_count_cap_and_exempt() -> None:
    now = [0.0]
    limits = AddressLimits(
        ConnectionLimits(connections_per_address=2, address_requests_per_second=1), lambda: now[0]
    )
    assert limits.connect("10.0.0.1") and limits.connect("10.0.0.1")
    assert not limits.connect("10.0.0.1")
    assert limits.connect("10.0.0.2")
    limits.disconnect("10.0.0.1")
    assert limits.connect("10.0.0.1")
    assert all(limits.connect("127.0.0.1") for _ in range(10))  # loopback is exempt by default
    assert [limits.allow("10.0.0.1") for _ in range(3)] == [True, True, False]
    now[0] = 1.0
    assert limits.allow("10.0.0.1")
    assert all(limits.allow("::1") for _ in range(100))


async def closed_at_once(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return await asyncio.wait_for(reader.read(), 2.0) == b""
    except (ConnectionError, TimeoutError):
        return isinstance(writer, asyncio.StreamWriter)
    finally:
        writer.close()


def test_websocket_port_caps_connections_per_address(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)

    async def scenario() -> None:
        service = Echo()
        runtime = Runtime(limits=ConnectionLimits(connections_per_address=2, **COUNTED))
        async with serve_websocket(service, "127.0.0.1", 0, runtime) as listener:
            first = await open_websocket(listener.port)
            second = await asyncio.open_connection("127.0.0.1", listener.port)  # plain HTTP, idle
            assert await closed_at_once(listener.port)
            assert runtime.addresses.open == {"127.0.0.1": 2}
            first[1].close()  # a websocket that ends gives its place back
            await until(lambda: runtime.addresses.open == {"127.0.0.1": 1})
            third = await open_websocket(listener.port)
            await until(lambda: len(service.conns) == 1)
            second[1].close()
            third[1].close()
            await until(lambda: not runtime.addresses.open)

    asyncio.run(scenario())
    no_errors(caplog)
    assert sum("too many open from that address" in r.getMessage() for r in caplog.records) == 1


def test_websocket_frames_past_the_address_rate_close_1008(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(websocket, "CLOSE_TIMEOUT", 0.2)

    async def scenario() -> None:
        service = Echo()
        runtime = Runtime(limits=ConnectionLimits(address_requests_per_second=5, **COUNTED))
        async with serve_websocket(service, "127.0.0.1", 0, runtime) as listener:
            reader, writer = await open_websocket(listener.port)
            for index in range(30):
                writer.write(masked_text(f"m{index}"))
            await writer.drain()
            data = b""
            while chunk := await asyncio.wait_for(reader.read(65536), 5.0):
                data += chunk
            # The burst is twice the rate, the upgrade request was one: nine echoes, then a
            # close frame with 1008.
            assert b"1:m8" in data and b"1:m9" not in data
            assert b"\x88" in data and (1008).to_bytes(2, "big") + b"rate limit exceeded" in data
            writer.close()

    asyncio.run(scenario())


def test_http_requests_past_the_address_rate_get_429() -> None:
    async def scenario() -> None:
        runtime = Runtime(limits=ConnectionLimits(address_requests_per_second=1, **COUNTED))
        async with serve_websocket(Echo(), "127.0.0.1", 0, runtime) as listener:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
            data = b""
            while chunk := await asyncio.wait_for(reader.read(65536), 5.0):
                data += chunk
            assert data.count(b"HTTP/1.1 200") == 2
            assert b"HTTP/1.1 429" in data and b"Retry-After: 1" in data
            writer.close()

    asyncio.run(scenario())


def test_tcp_port_caps_connections_and_rate_per_address() -> None:
    async def scenario() -> None:
        service = Flood(count=0)
        limits = ConnectionLimits(connections_per_address=1, address_requests_per_second=2, **COUNTED)
        runtime = Runtime(limits=limits)
        async with serve_tcp(service, "127.0.0.1", 0, runtime) as listener:  # type: ignore[arg-type]
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            await until(lambda: len(service.conns) == 1)
            assert await closed_at_once(listener.port)
            assert len(service.conns) == 1  # the refused one never reached the service
            for _ in range(10):
                writer.write(b"x\n")
                await writer.drain()
                await asyncio.sleep(0.01)  # one read each
                if service.gone:
                    break
            await until(lambda: len(service.gone) == 1)
            assert await asyncio.wait_for(reader.read(), 2.0) == b""
            writer.close()
            await until(lambda: not runtime.addresses.open)

    asyncio.run(scenario())


def test_a_dribbling_handshake_is_closed_and_a_silent_connection_logs_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)

    async def scenario() -> None:
        runtime = Runtime(limits=ConnectionLimits(handshake_timeout=0.3))
        async with serve_websocket(Echo(), "127.0.0.1", 0, runtime) as listener:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            started = asyncio.get_running_loop().time()
            request = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            closed = False
            for byte in request:  # one byte every 50 ms: never whole within 0.3 s
                try:
                    writer.write(bytes([byte]))
                    await writer.drain()
                except ConnectionError:
                    closed = True
                    break
                await asyncio.sleep(0.05)
                if reader.at_eof() or (await _peek_closed(reader)):
                    closed = True
                    break
            assert closed
            assert asyncio.get_running_loop().time() - started < 1.5
            writer.close()
            # A port probe: connects and closes without a word; another that stays silent.
            _, probe = await asyncio.open_connection("127.0.0.1", listener.port)
            probe.close()
            silent_reader, silent = await asyncio.open_connection("127.0.0.1", listener.port)
            assert await asyncio.wait_for(silent_reader.read(), 2.0) == b""
            silent.close()
            await asyncio.sleep(0.05)

    caplog.clear()
    asyncio.run(scenario())
    no_errors(caplog)
    lines = [r.getMessage() for r in caplog.records if r.name == "parlour.transport"]
    # One line per connection: the dribbler, the probe, the silent one.
    assert len(lines) == 3, lines


async def _peek_closed(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 0.01) == b""
    except TimeoutError:
        return False


def test_limits_come_from_settings_and_bad_values_are_refused() -> None:
    settings = load_settings(
        environ={"PARLOUR_EXEMPT_ADDRESSES": " 10.0.0.9 , ", "PARLOUR_MAX_OUTBOX_BYTES": "100000"},
        overrides={"handshake_timeout": 3, "max_connections_per_address": 7},
    )
    limits = ConnectionLimits.from_settings(settings)
    assert limits == ConnectionLimits(
        outbox_bytes=100_000,
        handshake_timeout=3.0,
        address_requests_per_second=500.0,
        connections_per_address=7,
        exempt=frozenset({"10.0.0.9"}),
    )
    assert ConnectionLimits.from_settings(Settings()) == ConnectionLimits()
    for name, value in (
        ("max_outbox_bytes", 1000),
        ("handshake_timeout", 0),
        ("requests_per_second", 0),
        ("address_requests_per_second", 0),
        ("max_connections_per_address", 0),
    ):
        with pytest.raises(SettingError, match=name):
            load_settings(environ={}, overrides={name: value})
