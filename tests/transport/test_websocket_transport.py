"""The websocket listener over real loopback sockets, with small test services."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest
import uvloop
from websockets.asyncio.client import connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import OP_CLOSE, OP_PING, Frame
from websockets.frames import Close as WsClose
from websockets.http11 import Response as WsResponse
from websockets.protocol import Event
from websockets.uri import parse_uri

from parlour.core.effects import Close, ConnId, Effect, Send
from parlour.transport import websocket
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
        if data.startswith("big:"):  # large messages, numbered, to fill the socket's buffers
            return [Send(conn, b"%06d" % i + b"." * 4000) for i in range(int(data[4:]))]
        if data == "fail":
            raise RuntimeError("the service failed")
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


# --- The h11 stack: routes, frames, control frames, keepalive, flow control ------------------


class Named(Echo):
    """An Echo that says which service answered."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        if data == "who":
            return [Send(conn, self.name.encode())]
        return super().received(conn, data, now)


LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop] | None] = {
    "asyncio": None,
    "uvloop": uvloop.new_event_loop,  # what the server runs on
}


def run_on(loop: str, test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(asyncio.wait_for(test(), 20))


@pytest.mark.parametrize("loop", LOOPS)
def test_routes_pick_the_service_by_exact_path_and_every_other_path_gets_the_default(loop: str) -> None:
    async def test() -> None:
        apologies, scalable = Named("apologies"), Named("async")
        runtime = Runtime()
        async with serve_websocket(apologies, "127.0.0.1", 0, runtime, {"/async": scalable}) as listener:
            base = f"ws://127.0.0.1:{listener.port}"
            for path, name in (
                ("/", "apologies"),
                ("/async", "async"),
                ("/async?x=1", "async"),
                ("/any", "apologies"),
                ("/async/", "apologies"),
            ):
                async with connect(base + path) as ws:
                    await ws.recv()
                    await ws.send("who")
                    assert await ws.recv() == name, path
            async with connect(base + "/async") as one, connect(base + "/") as two:
                assert await one.recv() != await two.recv()  # one Runtime: distinct connection ids
                assert len(scalable.conns) == len(apologies.conns) == 1
            await until(lambda: not scalable.conns and not apologies.conns)

    run_on(loop, test)


def test_text_frames_arrive_as_str_binary_as_bytes_and_fragments_are_joined() -> None:
    async def test() -> None:
        service = Echo()
        async with running(service) as listener, connect(f"ws://127.0.0.1:{listener.port}/async") as ws:
            await ws.recv()
            await ws.send("héllo")
            assert await ws.recv() == "1:héllo"
            await ws.send(b"\xff\x00\x01")
            assert await ws.recv() == "bytes:3"
            await ws.send(["frag", "ments"])  # one text message in two frames
            assert await ws.recv() == "1:fragments"
            await ws.send([b"ab", b"cd", b"e"])
            assert await ws.recv() == "bytes:5"
        assert [data for _, data in service.frames] == ["héllo", b"\xff\x00\x01", "fragments", b"abcde"]

    run(test)


def test_a_ping_from_the_client_gets_its_pong() -> None:
    async def test() -> None:
        async with running(Echo()) as listener, connect(f"ws://127.0.0.1:{listener.port}/") as ws:
            await ws.recv()
            pong = await ws.ping(b"are you there")
            await asyncio.wait_for(pong, 5)
            await ws.send("still open")
            assert await ws.recv() == "1:still open"

    run(test)


def test_a_failing_service_is_logged_and_the_connection_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async def test() -> None:
        async with running(Echo()) as listener, connect(f"ws://127.0.0.1:{listener.port}/") as ws:
            await ws.recv()
            await ws.send("fail")
            await ws.send("after")
            assert await ws.recv() == "1:after"

    run(test)
    assert any(
        record.exc_info and "the service failed" in str(record.exc_info[1]) for record in caplog.records
    )


class RawClient:
    """A websocket client that does only what a test tells it (websockets' sans-I/O client):
    it can send invalid frames and leave pings unanswered."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: ClientProtocol
    ) -> None:
        self.reader, self.writer, self.protocol = reader, writer, protocol
        self.events: deque[Event] = deque()

    @classmethod
    async def open(cls, port: int, path: str = "/") -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}{path}"), max_size=None)
        protocol.send_request(protocol.connect())
        client = cls(reader, writer, protocol)
        client.flush()
        response = await client.next()
        assert isinstance(response, WsResponse) and response.status_code == 101
        return client

    def flush(self) -> None:
        self.writer.write(b"".join(self.protocol.data_to_send()))

    async def next(self, answer: bool = False) -> Event:
        """The next event; what the protocol would answer (pongs) is sent only if ``answer``."""
        while not self.events:
            data = await self.reader.read(65536)
            if data:
                self.protocol.receive_data(data)
            else:
                self.protocol.receive_eof()
            self.events.extend(self.protocol.events_received())
            if answer:
                self.flush()
            else:
                self.protocol.data_to_send()
            if not data and not self.events:
                raise EOFError
        return self.events.popleft()

    async def frame(self, answer: bool = False) -> Frame:
        event = await self.next(answer)
        assert isinstance(event, Frame)
        return event

    async def close_code(self) -> int:
        while True:
            frame = await self.frame()
            if frame.opcode is OP_CLOSE:
                return WsClose.parse(frame.data).code

    def close(self) -> None:
        self.writer.close()


def test_invalid_utf8_in_a_text_frame_closes_with_1007() -> None:
    async def test() -> None:
        service = Echo()
        async with running(service) as listener:
            client = await RawClient.open(listener.port)
            assert (await client.frame()).data == b"hello 1"
            client.protocol.send_text(b"\xff\xfe not utf-8")
            client.flush()
            assert await client.close_code() == 1007
            client.close()
            await until(lambda: not service.conns)
        assert service.frames == []

    run(test)


def test_keepalive_pings_and_closes_1011_when_no_pong_comes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(websocket, "PING_INTERVAL", 0.05)
    monkeypatch.setattr(websocket, "PING_TIMEOUT", 0.3)

    async def test() -> None:
        service = Echo()
        async with running(service) as listener:
            # Answering: ping after ping, and the connection stays open.
            client = await RawClient.open(listener.port)
            await client.frame()
            for _ in range(3):
                assert (await client.frame(answer=True)).opcode is OP_PING
            client.protocol.send_text(b"alive")
            client.flush()
            assert (await client.frame(answer=True)).data == b"1:alive"
            client.close()
            # Silent: closed once the pong is overdue.
            client = await RawClient.open(listener.port)
            await client.frame()
            assert (await client.frame()).opcode is OP_PING
            assert await client.close_code() == 1011
            client.close()
            await until(lambda: not service.conns)

    run(test)


def test_a_refused_handshake_gets_an_http_error_and_the_server_goes_on() -> None:
    async def test() -> None:
        async with running(Echo()) as listener:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            head = await reader.read()
            assert head.startswith(b"HTTP/1.1 400 "), head  # no Sec-WebSocket-Key
            writer.close()
            async with connect(f"ws://127.0.0.1:{listener.port}/") as ws:
                assert await ws.recv() == "hello 1"  # the refused one took no connection id

    run(test)


def test_a_paused_transport_keeps_messages_in_order_until_the_client_reads() -> None:
    async def test() -> None:
        service = Echo()
        async with (
            running(service) as listener,
            connect(f"ws://127.0.0.1:{listener.port}/", max_queue=1) as ws,
        ):
            await ws.recv()
            [connection] = listener.websockets
            await ws.send("big:2000")  # about 8 MB: more than the socket buffers hold
            await until(lambda: connection.paused)
            for i in range(5):  # answered while paused: through the outbox's writer, after the burst
                await ws.send(f"after{i}")
            for i in range(2000):
                assert (await ws.recv())[:6] == f"{i:06d}"
            assert [await ws.recv() for _ in range(5)] == [f"1:after{i}" for i in range(5)]
            assert not connection.paused

    run(test)


def test_leaving_serve_websocket_closes_clients_with_1001_and_tells_the_services() -> None:
    async def test() -> None:
        service = Echo()
        async with running(service) as listener:
            ws = await connect(f"ws://127.0.0.1:{listener.port}/")
            await ws.recv()
            assert service.conns == [1]
        assert service.conns == []
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001

    run(test)


async def until(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds (an event to wait for, not a period)."""
    while not condition():
        await asyncio.sleep(0.005)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_closed_connection_is_freed_without_the_cyclic_collector(loop: str) -> None:
    """Its writer task returns instead of being cancelled (a cancelled task's traceback holds
    its frames, and through them the whole connection, in a cycle)."""
    import gc

    async def test() -> None:
        service = Echo()
        async with running(service) as listener:
            for index in range(20):
                async with connect(f"ws://127.0.0.1:{listener.port}/") as ws:
                    await ws.send(f"hello {index}")
                    await ws.recv()
            while listener.websockets:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            gc.collect()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                for index in range(20):
                    async with connect(f"ws://127.0.0.1:{listener.port}/") as ws:
                        await ws.send(f"again {index}")
                        await ws.recv()
                while listener.websockets:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)
                gc.collect()
                ours = [o for o in gc.garbage if type(o).__module__.startswith("parlour.")]
                assert ours == []
            finally:
                gc.set_debug(0)
                gc.garbage.clear()

    run_on(loop, test)


def test_keepalive_intervals_are_spread_so_connections_opened_together_are_not_pinged_together() -> None:
    intervals = [websocket._ping_interval() for _ in range(200)]
    low, high = websocket.PING_INTERVAL * 0.75, websocket.PING_INTERVAL * 1.25
    assert all(low <= interval <= high for interval in intervals)
    assert max(intervals) - min(intervals) > websocket.PING_INTERVAL * 0.3
