"""The previous websocket listener (``websockets`` asyncio server) with plain HTTP on the same port.

Kept only while the h11 stack (parlour.transport.websocket and parlour.transport.http) replaces
it, so that one benchmark run can compare both (``--http-stack legacy``; bench/server.py runs it
as "parlour-legacy"). Its HTTP side cannot read a request body: websockets' parser refuses
bodies and methods other than GET. Remove it once the comparison is no longer needed.

Any path upgrades to the service's protocol (reference clients connect to ``/`` or anything
else). Requests without an Upgrade header get ``GET /healthz`` or the static web client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from importlib.resources import files
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from parlour.api import handle_api
from parlour.core.service import Service
from parlour.storage.base import StoreFailure
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import Runtime

__all__ = ["WebsocketListener", "serve_websocket"]

log = logging.getLogger("parlour.transport")

#: Frames above this are refused by the websocket layer itself (close 1009); below it, the
#: service applies its own, smaller, configurable limit and answers with an error.
HARD_FRAME_LIMIT = 1 << 20
#: How long a closing handshake may take before the connection is dropped (the reference: 2.5 s).
CLOSE_TIMEOUT = 2.5


def text_frame(data: bytes) -> bytes:
    """The header of an unmasked, unfragmented server text frame carrying ``data`` (RFC 6455 5.2)."""
    size = len(data)
    if size < 126:
        return b"\x81%c" % size
    if size < 65536:
        return b"\x81\x7e" + size.to_bytes(2, "big")
    return b"\x81\x7f" + size.to_bytes(8, "big")


class BatchingConnection(ServerConnection):
    """A server connection that can queue several text messages and write them in one go.

    ``send_context`` and the sans-I/O ``protocol`` are how websockets' own ``send`` writes;
    here they let a burst of messages share one socket write.
    """

    def write_now(self, texts: list[bytes]) -> bool:
        """Send UTF-8 encoded text messages in one write, now, if nothing stands in the way.

        False (nothing sent) when the connection is not open, a fragmented send is in progress,
        flow control paused writing, or the protocol has output of its own waiting:
        ``send_texts`` then waits its turn with ``send_context``. With no extension negotiated
        (compression is off) a server text frame is just a header and the payload, so frames
        are built here rather than through a frame object each: the hot path of a busy server.
        """
        protocol = self.protocol
        if (
            protocol.state is not State.OPEN
            or self.paused
            or self.send_in_progress is not None
            or protocol.extensions
            or protocol.writes
        ):
            return False
        parts = []
        for text in texts:
            parts.append(text_frame(text))
            parts.append(text)
        self.transport.write(b"".join(parts))
        return True

    async def send_texts(self, texts: list[bytes]) -> None:
        """Send UTF-8 encoded text messages, in order, in one write."""
        async with self.send_context():
            for text in texts:
                self.protocol.send_text(text)

    def send_data(self) -> None:
        chunks = self.protocol.data_to_send()
        if chunks and all(chunks):
            self.transport.write(b"".join(chunks))
            return
        for data in chunks:  # an empty chunk asks for a half-close: let the library do it
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()
            else:
                self.transport.close()


def _static_root() -> Path | None:
    root = files("parlour").joinpath("web")
    return Path(str(root)) if root.is_dir() else None


@dataclass
class WebsocketListener:
    service: Service
    runtime: Runtime
    server: Server | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        sockets = list(self.server.sockets)
        port: int = sockets[0].getsockname()[1]
        return port

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0]
        if path.startswith("/api/"):
            return await self._api(request.path)
        if path == "/async/schema.json":
            return _response(HTTPStatus.OK, _async_schema(), "application/schema+json")
        if path == "/healthz":
            stats: dict[str, Any] = {
                "status": "ok",
                "uptime": round(self.runtime.clock() - self.runtime.started, 3),
                "store": self.runtime.store_status,
                "store_transactions": self.runtime.transactions,
                "store_records": self.runtime.committed_records,
            }
            counts = getattr(self.service, "stats", None)
            if callable(counts):
                stats.update(counts())
            return _response(HTTPStatus.OK, json.dumps(stats).encode(), "application/json")
        return _static(path)

    async def _api(self, target: str) -> Response:
        """Records are read (and replayed) on the store's thread, never on the loop."""
        runtime = self.runtime
        try:
            answer = await runtime.in_store_thread(lambda: handle_api(runtime.store, target))
        except StoreFailure as failure:
            log.warning("API read failed: %s", failure)
            body = json.dumps({"error": "the store cannot be read now"}).encode()
            return _response(HTTPStatus.SERVICE_UNAVAILABLE, body, "application/json")
        return _response(answer.status, answer.body, "application/json")

    async def _handle(self, ws: ServerConnection) -> None:
        assert isinstance(ws, BatchingConnection)
        runtime, service = self.runtime, self.service
        conn = runtime.new_conn()

        async def close(code: int, reason: str) -> None:
            await ws.close(code, reason)

        outbox = Outbox(ws.send_texts, close, write_now=ws.write_now)
        runtime.outboxes[conn] = outbox
        writer = asyncio.create_task(outbox.run())
        try:
            runtime.execute(service.connected(conn, runtime.clock()), service, conn)
            async for message in ws:
                try:
                    effects = service.received(conn, message, runtime.clock())
                except Exception:  # a service answers its own errors; this is a last resort
                    log.exception("service failed on a frame from connection %d", conn)
                    continue
                runtime.execute(effects, service, conn)
        except ConnectionClosed:
            pass
        finally:
            runtime.execute(service.disconnected(conn, runtime.clock()), service)
            del runtime.outboxes[conn]
            writer.cancel()


@cache
def _async_schema() -> bytes:
    """The JSON Schema of every /async message (scalable-server-notes.md S2), built once."""
    from parlour.protocols.async_ws.schema import schema

    return json.dumps(schema()).encode()


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)


def _static(path: str) -> Response:
    """A file of the packaged web client; ``/`` is ``index.html``. No path leaves the folder."""
    root = _static_root()
    relative = "index.html" if path in ("", "/") else path.lstrip("/")
    if root is not None and ".." not in Path(relative).parts:
        target = (root / relative).resolve()
        if target.is_file() and target.is_relative_to(root.resolve()):
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind.endswith("javascript"):
                kind += "; charset=utf-8"
            return _response(HTTPStatus.OK, target.read_bytes(), kind)
    return _response(HTTPStatus.NOT_FOUND, b"Not found\n", "text/plain; charset=utf-8")


@asynccontextmanager
async def serve_websocket(
    service: Service, host: str, port: int, runtime: Runtime | None = None
) -> AsyncIterator[WebsocketListener]:
    """Run the listener for the duration of the block; ``listener.port`` is the bound port."""
    listener = WebsocketListener(service, runtime or Runtime())
    async with serve(
        listener._handle,
        host,
        port,
        process_request=listener._http,
        max_size=HARD_FRAME_LIMIT,
        compression=None,  # per-message deflate costs more CPU than it saves on loopback and LANs
        create_connection=BatchingConnection,
        close_timeout=CLOSE_TIMEOUT,
    ) as server:
        listener.server = server
        yield listener
