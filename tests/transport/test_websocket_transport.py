"""The websocket listener over real loopback sockets, with small test services."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from parlour.core.effects import Close, ConnId, Effect, Send
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import WebsocketListener, serve_websocket


class Echo:
    """Echoes every frame as ``conn:text``; ``broadcast:`` sends to everyone; ``close:N`` closes."""

    def __init__(self) -> None:
        self.conns: list[ConnId] = []
        self.frames: list[tuple[ConnId, str | bytes]] = []
        self.ticks = 0

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        self.conns.append(conn)
        return [Send(conn, f"hello {conn}".encode())]

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        self.frames.append((conn, data))
        if isinstance(data, bytes):
            return [Send(conn, f"bytes:{len(data)}".encode())]
        if data.startswith("broadcast:"):
            return [Send(c, data.encode()) for c in self.conns]
        if data.startswith("burst:"):
            return [Send(conn, str(i).encode()) for i in range(int(data[6:]))]
        if data.startswith("close:"):
            return [Send(conn, b"bye"), Close(conn, int(data[6:]), "asked")]
        return [Send(conn, f"{conn}:{data}".encode())]

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        self.conns.remove(conn)
        return []

    def tick(self, now: float) -> list[Effect]:
        self.ticks += 1
        return []

    def shutdown(self, now: float) -> list[Effect]:
        return [e for c in self.conns for e in (Send(c, b"goodbye"), Close(c, 1001, "shutdown"))]

    def stats(self) -> dict[str, int]:
        return {"connections": len(self.conns), "players": 0, "games": 0}


@asynccontextmanager
async def running(service: Echo) -> AsyncIterator[WebsocketListener]:
    async with serve_websocket(service, "127.0.0.1", 0, Runtime()) as listener:
        yield listener


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def test_any_path_upgrades_and_messages_keep_their_order() -> None:
    async def test() -> None:
        service = Echo()
        async with (
            running(service) as listener,
            connect(f"ws://127.0.0.1:{listener.port}/deep/path?x=1") as ws,
        ):
            assert await ws.recv() == "hello 1"
            await ws.send("burst:500")
            assert [await ws.recv() for _ in range(500)] == [str(i) for i in range(500)]
            await ws.send(b"\x00\x01")
            assert await ws.recv() == "bytes:2"

    run(test)


def test_a_client_that_never_reads_does_not_delay_others() -> None:
    async def test() -> None:
        service = Echo()
        async with running(service) as listener:
            url = f"ws://127.0.0.1:{listener.port}/"
            async with connect(url, max_queue=1) as stalled, connect(url) as fast:
                await stalled.recv()
                await fast.recv()
                await stalled.send("burst:5000")  # never read: its outbox fills, nobody waits on it
                await asyncio.sleep(0.05)
                started = asyncio.get_running_loop().time()
                for i in range(50):
                    await fast.send(str(i))
                    assert await fast.recv() == f"2:{i}"
                assert asyncio.get_running_loop().time() - started < 2
                stalled.transport.abort()  # it never reads: do not wait for a polite close

    run(test)


def test_close_effect_closes_after_queued_messages() -> None:
    async def test() -> None:
        async with running(Echo()) as listener, connect(f"ws://127.0.0.1:{listener.port}/") as ws:
            await ws.recv()
            await ws.send("close:4000")
            assert await ws.recv() == "bye"
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4000

    run(test)


def test_frames_over_the_hard_limit_close_the_connection_with_1009() -> None:
    async def test() -> None:
        async with (
            running(Echo()) as listener,
            connect(f"ws://127.0.0.1:{listener.port}/", max_size=None) as ws,
        ):
            await ws.recv()
            await ws.send("x" * (2 << 20))
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009

    run(test)


def test_shutdown_says_goodbye_then_closes_1001() -> None:
    async def test() -> None:
        service = Echo()
        runtime = Runtime()
        async with (
            serve_websocket(service, "127.0.0.1", 0, runtime) as listener,
            connect(f"ws://127.0.0.1:{listener.port}/") as ws,
        ):
            await ws.recv()
            runtime.execute(service.shutdown(runtime.clock()))
            assert await ws.recv() == "goodbye"
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001

    run(test)


def test_ticker_calls_services() -> None:
    async def test() -> None:
        service = Echo()
        runtime = Runtime()
        task = asyncio.create_task(runtime.tick_forever([service], 0.01))
        await asyncio.sleep(0.1)
        task.cancel()
        assert service.ticks >= 3

    run(test)


def http_get(port: int, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_plain_http_health_static_files_and_refusals() -> None:
    async def test() -> None:
        async with running(Echo()) as listener:
            port = listener.port
            status, kind, body = await asyncio.to_thread(http_get, port, "/healthz")
            assert status == 200 and kind == "application/json"
            health = json.loads(body)
            assert health["status"] == "ok" and health["connections"] == 0 and health["uptime"] >= 0
            status, kind, body = await asyncio.to_thread(http_get, port, "/")
            assert status == 200 and kind.startswith("text/html") and b"<html" in body.lower()
            for path in ("/nope.js", "/../pyproject.toml", "/%2e%2e/cli.py", "/..%2fcli.py"):
                status, _, _ = await asyncio.to_thread(http_get, port, path)
                assert status == 404, path

    run(test)


def test_text_frame_headers_match_the_library_for_every_length_form() -> None:
    from websockets.frames import OP_TEXT, Frame

    from parlour.transport.websocket import text_frame

    for size in (0, 1, 125, 126, 127, 65535, 65536, 70000):
        data = b"x" * size
        expected = Frame(OP_TEXT, data).serialize(mask=False, extensions=[])
        assert text_frame(data) + data == expected, size
