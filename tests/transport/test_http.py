"""HTTP/1.1 on the websocket port (parlour.transport.http) over real loopback sockets.

Requests are written as raw bytes, so that malformed, chunked and pipelined requests can be
sent exactly; responses are read with a small parser (the server always sends Content-Length).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pytest
import uvloop

from parlour.api import ApiResponse, HttpRequest
from parlour.transport import http
from parlour.transport.limits import ConnectionLimits
from parlour.transport.runtime import Runtime
from parlour.transport.websocket import WebsocketListener, serve_websocket
from tests.transport.services import Idle


class Quiet(Idle):
    """A websocket service that does nothing (these tests speak HTTP)."""


class Recorder:
    """An HTTP handler that records its requests and answers 201 with a JSON echo."""

    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []

    async def __call__(self, request: HttpRequest) -> ApiResponse:
        self.requests.append(request)
        body = json.dumps({"method": request.method, "got": request.body.decode()}).encode()
        return ApiResponse(HTTPStatus.CREATED, body, (("Retry-After", "5"), ("X-Seen", "yes")))


async def failing(request: HttpRequest) -> ApiResponse:
    raise RuntimeError("boom")


@asynccontextmanager
async def running(
    limits: ConnectionLimits | None = None,
    **handlers: Callable[[HttpRequest], Awaitable[ApiResponse]],
) -> AsyncIterator[WebsocketListener]:
    routes = {f"/api/{name}": handler for name, handler in handlers.items()}
    runtime = Runtime(limits=limits)
    async with serve_websocket(Quiet(), "127.0.0.1", 0, runtime, http_handlers=routes) as listener:
        yield listener


LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop] | None] = {
    "asyncio": None,
    "uvloop": uvloop.new_event_loop,  # what the server runs on
}


def run(test: Callable[[], Coroutine[Any, Any, None]], loop: str = "asyncio") -> None:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(asyncio.wait_for(test(), 20))


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def read_response(reader: asyncio.StreamReader, head: bool = False) -> Response:
    lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = 0 if head else int(headers.get("content-length", "0"))
    return Response(status, headers, await reader.readexactly(length))


@asynccontextmanager
async def connection(port: int) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        yield reader, writer
    finally:
        writer.close()


async def exchange(port: int, raw: bytes, head: bool = False) -> Response:
    async with connection(port) as (reader, writer):
        writer.write(raw)
        return await read_response(reader, head)


def post(path: str, body: bytes, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: test", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def get(path: str, method: str = "GET", *headers: str) -> bytes:
    return ("\r\n".join([f"{method} {path} HTTP/1.1", "Host: test", *headers]) + "\r\n\r\n").encode()


@pytest.mark.parametrize("loop", LOOPS)
def test_a_post_with_a_json_body_reaches_its_handler_and_its_answer_comes_back(loop: str) -> None:
    async def test() -> None:
        handler = Recorder()
        async with running(accounts=handler) as listener:
            body = b'{"name": "ada", "password": "correct horse"}'
            raw = post("/api/accounts?next=1", body, "Content-Type: application/json", "X-Custom: A")
            response = await exchange(listener.port, raw)
        assert response.status == 201
        assert response.headers["content-type"] == "application/json"
        assert response.headers["content-length"] == str(len(response.body))
        assert response.headers["retry-after"] == "5" and response.headers["x-seen"] == "yes"
        assert response.json() == {"method": "POST", "got": body.decode()}
        [request] = handler.requests
        assert (request.method, request.target, request.path) == (
            "POST",
            "/api/accounts?next=1",
            "/api/accounts",
        )
        assert request.headers["content-type"] == "application/json" and request.headers["x-custom"] == "A"
        assert request.body == body and request.client == "127.0.0.1"

    run(test, loop)


def test_a_chunked_body_is_read_whole() -> None:
    async def test() -> None:
        handler = Recorder()
        async with running(sessions=handler) as listener:
            raw = get("/api/sessions", "POST", "Transfer-Encoding: chunked")
            raw += b"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"
            response = await exchange(listener.port, raw)
        assert response.status == 201 and response.json()["got"] == "hello, world"

    run(test)


def test_a_client_waiting_for_100_continue_gets_it() -> None:
    async def test() -> None:
        handler = Recorder()
        async with running(sessions=handler) as listener, connection(listener.port) as (reader, writer):
            writer.write(
                post("/api/sessions", b"", "Expect: 100-continue").replace(b"Length: 0", b"Length: 2")
            )
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 100 ")
            writer.write(b"{}")
            response = await read_response(reader)
        assert response.status == 201 and response.json()["got"] == "{}"

    run(test)


def test_bodies_over_the_limit_get_413_without_reaching_the_handler() -> None:
    async def test() -> None:
        handler = Recorder()
        async with running(accounts=handler) as listener:
            # Declared too large: answered before the body is sent at all.
            raw = get("/api/accounts", "POST", f"Content-Length: {http.BODY_LIMIT + 1}")
            async with connection(listener.port) as (reader, writer):
                writer.write(raw)
                response = await read_response(reader)
                assert await reader.read() == b""  # and the connection is closed
            assert response.status == 413 and "error" in response.json()
            assert response.headers["connection"] == "close"
            # Chunked: counted as it arrives.
            chunk = b"x" * 4096
            raw = get("/api/accounts", "POST", "Transfer-Encoding: chunked")
            raw += b"".join(b"1000\r\n" + chunk + b"\r\n" for _ in range(17))
            response = await exchange(listener.port, raw)
            assert response.status == 413 and "error" in response.json()
            # At the limit: accepted.
            response = await exchange(listener.port, post("/api/accounts", b"y" * http.BODY_LIMIT))
            assert response.status == 201
        assert len(handler.requests) == 1

    run(test)


def test_a_malformed_request_gets_400_and_the_connection_closes() -> None:
    async def test() -> None:
        async with running() as listener:
            for raw in (
                b"NOT AN HTTP REQUEST\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: test\r\nBad Header\r\n\r\n",
                b"POST /api/x HTTP/1.1\r\nHost: test\r\nContent-Length: nope\r\n\r\n",
            ):
                async with connection(listener.port) as (reader, writer):
                    writer.write(raw)
                    response = await read_response(reader)
                    assert response.status == 400, raw
                    assert await reader.read() == b""
            # A head growing past the limit without an end: h11's hint, 431.
            head = get("/", "GET", "X-Big: " + "a" * 20_000)[:-4]
            response = await exchange(listener.port, head)
            assert response.status == 431

    run(test)


def test_an_unsupported_method_gets_405_with_allow() -> None:
    async def test() -> None:
        async with running() as listener:
            response = await exchange(listener.port, post("/healthz", b"{}"))
            assert response.status == 405 and response.headers["allow"] == "GET, HEAD"
            response = await exchange(listener.port, post("/api/games", b"{}"))
            assert response.status == 405 and response.headers["allow"] == "GET, HEAD"
            assert response.headers["content-type"] == "application/json" and "error" in response.json()
            response = await exchange(listener.port, get("/index.html", "DELETE"))
            assert response.status == 405

    run(test)


def test_head_answers_the_headers_of_get_without_a_body_on_a_kept_alive_connection() -> None:
    async def test() -> None:
        async with running() as listener, connection(listener.port) as (reader, writer):
            writer.write(get("/healthz", "HEAD"))
            head = await read_response(reader, head=True)
            writer.write(get("/healthz"))
            whole = await read_response(reader)  # would fail if HEAD had leaked a body
        assert head.status == whole.status == 200
        assert head.headers["content-type"] == whole.headers["content-type"] == "application/json"
        assert int(head.headers["content-length"]) > 0 and head.body == b""
        assert whole.json()["status"] == "ok"

    run(test)


@pytest.mark.parametrize("loop", LOOPS)
def test_keep_alive_serves_several_requests_on_one_connection_in_order(loop: str) -> None:
    async def test() -> None:
        handler = Recorder()
        async with running(accounts=handler) as listener, connection(listener.port) as (reader, writer):
            writer.write(post("/api/accounts", b"one"))
            assert (await read_response(reader)).json()["got"] == "one"
            writer.write(get("/healthz"))
            assert (await read_response(reader)).json()["status"] == "ok"
            # Pipelined: answered one at a time, in order.
            writer.write(post("/api/accounts", b"two") + get("/nope.js") + post("/api/accounts", b"three"))
            answers = [await read_response(reader) for _ in range(3)]
            assert [answer.status for answer in answers] == [201, 404, 201]
            assert answers[2].json()["got"] == "three"
            assert len(listener.http) == 1

    run(test, loop)


def test_http_1_0_and_connection_close_end_the_connection_after_the_response() -> None:
    async def test() -> None:
        async with running() as listener:
            for raw in (b"GET /healthz HTTP/1.0\r\n\r\n", get("/healthz", "GET", "Connection: close")):
                async with connection(listener.port) as (reader, writer):
                    writer.write(raw)
                    assert (await read_response(reader)).status == 200
                    assert await reader.read() == b""

    run(test)


def test_unknown_api_paths_get_a_json_404() -> None:
    async def test() -> None:
        async with running(accounts=Recorder()) as listener:
            for raw in (get("/api/nope"), post("/api/nope", b"{}"), get("/api/accounts/x")):
                response = await exchange(listener.port, raw)
                assert response.status == 404, raw
                assert response.headers["content-type"] == "application/json"
                assert "error" in response.json()

    run(test)


def test_a_failing_handler_gets_a_json_500_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def test() -> None:
        async with running(leaderboard=failing) as listener:
            response = await exchange(listener.port, get("/api/leaderboard"))
            assert response.status == 500 and response.json() == {"error": "internal error"}
            # The connection and the server go on.
            assert (await exchange(listener.port, get("/healthz"))).status == 200

    run(test)
    assert any("boom" in str(record.exc_info[1]) for record in caplog.records if record.exc_info)


def test_api_records_and_the_schema_are_served() -> None:
    async def test() -> None:
        async with running() as listener:
            response = await exchange(listener.port, get("/api/games"))
            # Without a store: the API says so, in JSON (parlour.api.handle_api).
            assert response.status == 503 and "error" in response.json()
            response = await exchange(listener.port, get("/async/schema.json"))
            assert response.status == 200 and response.headers["content-type"] == "application/schema+json"
            assert isinstance(response.json(), dict)

    run(test)


def test_static_files_are_served_and_no_path_leaves_their_folder() -> None:
    async def test() -> None:
        async with running() as listener:
            response = await exchange(listener.port, get("/"))
            assert response.status == 200 and response.headers["content-type"].startswith("text/html")
            for path in (
                "/../pyproject.toml",
                "/../../src/parlour/cli.py",
                "/%2e%2e/cli.py",
                "/..%2fcli.py",
                "/css/../../cli.py",
                "//etc/passwd",
                "/nope.js",
            ):
                response = await exchange(listener.port, get(path))
                assert response.status == 404, path
                assert response.headers["content-type"].startswith("text/plain")

    run(test)


def test_pages_carry_the_security_headers_and_files_their_validators() -> None:
    async def test() -> None:
        async with running() as listener:
            for page in ("/", "/play.html", "/admin", "/profile.html?name=ann"):
                response = await exchange(listener.port, get(page))
                policy = response.headers["content-security-policy"]
                assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
                assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
                assert response.headers["x-content-type-options"] == "nosniff"
                assert response.headers["referrer-policy"] == "no-referrer"
                assert response.headers["x-frame-options"] == "DENY"
                # The pages run no inline script (the policy would block it): every <script>
                # names its file, and no element carries an event handler attribute.
                text = response.body.decode()
                assert text.count("<script") == text.count('<script type="module" src=')
                assert " onclick=" not in text and " onload=" not in text
            script = await exchange(listener.port, get("/js/app.js"))
            assert script.headers["x-content-type-options"] == "nosniff"
            assert "content-security-policy" not in script.headers
            etag, modified = script.headers["etag"], script.headers["last-modified"]
            for validator in (f"If-None-Match: {etag}", f"If-Modified-Since: {modified}", "If-None-Match: *"):
                cached = await exchange(listener.port, get("/js/app.js", "GET", validator))
                assert (cached.status, cached.body, cached.headers["etag"]) == (304, b"", etag), validator
                assert "content-length" not in cached.headers
            for stale in ('If-None-Match: "other"', "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT"):
                fresh = await exchange(listener.port, get("/js/app.js", "GET", stale))
                assert fresh.status == 200 and fresh.body == script.body, stale
            # If-None-Match decides when both are sent; a date that does not parse is ignored.
            both = get("/js/app.js", "GET", 'If-None-Match: "other"', f"If-Modified-Since: {modified}")
            assert (await exchange(listener.port, both)).status == 200
            odd = await exchange(listener.port, get("/js/app.js", "GET", "If-Modified-Since: yesterday"))
            assert odd.status == 200

    run(test)


def test_healthz_merges_the_stats_of_every_routed_service() -> None:
    class Other(Quiet):
        def stats(self) -> dict[str, int]:
            return {"accounts": 7}

    async def test() -> None:
        routes = {"/async": Other()}
        async with serve_websocket(Quiet(), "127.0.0.1", 0, Runtime(), routes) as listener:
            health = (await exchange(listener.port, get("/healthz"))).json()
        assert health["status"] == "ok" and health["connections"] == 0 and health["accounts"] == 7

    run(test)


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert record.levelno < logging.WARNING, record.getMessage()
        assert "Traceback" not in record.getMessage()


async def until_closed(listener: WebsocketListener) -> None:
    """Until the server has let go of every HTTP connection (an event, not a period)."""
    while listener.http:
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_connection_that_sends_nothing_logs_no_traceback(
    caplog: pytest.LogCaptureFixture, loop: str
) -> None:
    caplog.set_level(logging.DEBUG)

    async def test() -> None:
        async with running() as listener:
            for _ in range(3):
                _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
                writer.close()
                await writer.wait_closed()
            # Reset rather than closed, as some probes do.
            _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.transport.abort()
            await until_closed(listener)
            # Half a request, then gone.
            async with connection(listener.port) as (_, writer):
                writer.write(b"GET /healthz HT")
            await until_closed(listener)

    run(test, loop)
    no_tracebacks(caplog)
    assert any("without a request" in record.getMessage() for record in caplog.records)


def test_silent_and_idle_connections_are_closed_after_their_timeouts(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(http, "IDLE_TIMEOUT", 0.3)

    async def test() -> None:
        async with running(ConnectionLimits(handshake_timeout=0.2)) as listener:
            async with connection(listener.port) as (reader, writer):
                assert await reader.read() == b""  # never sent anything: closed
            async with connection(listener.port) as (reader, writer):
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: te")  # never finishes its head
                assert await reader.read() == b""
            async with connection(listener.port) as (reader, writer):
                writer.write(get("/healthz"))
                assert (await read_response(reader)).status == 200
                assert await reader.read() == b""  # idle after its response: closed

    run(test)
    no_tracebacks(caplog)
    messages = [record.getMessage() for record in caplog.records if record.name == "parlour.transport"]
    assert sum("no complete request" in message for message in messages) == 2
    assert sum("idle HTTP connection" in message for message in messages) == 1


def test_stopping_the_listener_closes_idle_http_connections() -> None:
    async def test() -> None:
        async with running() as listener:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(get("/healthz"))
            assert (await read_response(reader)).status == 200
        assert await reader.read() == b""
        writer.close()

    run(test)
