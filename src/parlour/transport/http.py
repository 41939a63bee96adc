"""HTTP/1.1 on the websocket port: one h11-driven ``asyncio.Protocol`` per connection.

h11 parses and frames every request and response (keep-alive, Content-Length and chunked
bodies, HTTP/1.0 clients); this module adds what a small public server needs around it:

- a body limit (:data:`BODY_LIMIT`, 413), malformed requests answered 400 (or h11's hint, e.g.
  431 for an oversized head) and the connection closed;
- time limits: a request (a websocket upgrade included) must arrive whole within the
  ``handshake_timeout`` setting of its first byte (or of the connection; a client that
  dribbles bytes is closed all the same), an idle keep-alive connection is closed after
  :data:`IDLE_TIMEOUT`. A port probe or a load balancer's TCP check costs one debug line,
  never a traceback;
- per client address (parlour.transport.limits): a cap on open connections (one more is
  dropped at once) and a request rate (past it: 429 and a close);
- one request at a time per connection: reading pauses while a response is being computed, so
  a pipelining client cannot make the server buffer without bound;
- the routes of the port (:class:`HttpSite`): ``/healthz``, ``/async/schema.json``,
  ``/api/...`` (read on the store's thread), handlers keyed by exact path for requests with
  bodies (``POST /api/accounts``...), and the static web client.

A ``GET`` with ``Upgrade: websocket`` is handed, with the transport and whatever bytes followed
it, to the ``upgrade`` callback (parlour.transport.websocket), which takes the connection over.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import mimetypes
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from functools import cache
from http import HTTPStatus
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import h11
import msgspec

from parlour.api import ApiResponse, HttpRequest, handle_api
from parlour.core.service import Service
from parlour.storage.base import StoreFailure
from parlour.transport.runtime import Runtime

__all__ = [
    "BODY_LIMIT",
    "IDLE_TIMEOUT",
    "REQUEST_TIMEOUT",
    "HttpConnection",
    "HttpHandler",
    "HttpSite",
    "Reply",
    "Upgrade",
]

log = logging.getLogger("parlour.transport")

#: Largest request body read (64 KiB); a larger one is answered 413 without being read.
BODY_LIMIT = 64 * 1024
#: Largest request head (request line and headers); h11 answers larger ones with its hint, 431.
HEAD_LIMIT = 16 * 1024
#: The default of the ``handshake_timeout`` setting: a request (head and body) must arrive
#: whole within this many seconds of its first byte, or of the connection being opened: slow
#: or silent clients must not hold connections for ever.
REQUEST_TIMEOUT = 10.0
#: An idle keep-alive connection is closed after this many seconds.
IDLE_TIMEOUT = 60.0
#: After an error response sent before the request was read whole, input is read and dropped
#: for up to this long before closing: closing with unread input makes the kernel send a reset,
#: which can destroy the response before the client reads it.
LINGER_TIMEOUT = 2.0

#: Handlers for requests with bodies, keyed by exact path; they get any method and answer it.
HttpHandler = Callable[[HttpRequest], Awaitable[ApiResponse]]
#: Takes a connection over after a websocket upgrade request: the transport, the request, the
#: bytes received after it, and the peer's address.
Upgrade = Callable[[asyncio.Transport, h11.Request, bytes, str], None]

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
#: The paths parlour.api.handle_api answers (GET only): other methods there get 405, other
#: paths under /api 404 (whether or not the server keeps records).
_API_GET_PATHS = re.compile(r"/api/games(/[^/]+)?/?")


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete response: the transport adds the framing headers."""

    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()


def error_reply(status: HTTPStatus, message: str, api: bool, *headers: tuple[str, str]) -> Reply:
    """``{"error": message}`` under /api (clients there parse JSON), plain text elsewhere."""
    if api:
        return Reply(status, msgspec.json.encode({"error": message}), JSON, headers)
    return Reply(status, f"{message}\n".encode(), TEXT, headers)


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


class HttpSite:
    """The plain HTTP routes of the port (everything but websocket upgrades)."""

    def __init__(
        self,
        runtime: Runtime,
        services: Iterable[Service],
        handlers: Mapping[str, HttpHandler] | None = None,
        metrics: Callable[[], Reply] | None = None,
    ) -> None:
        self.runtime = runtime
        #: Answers GET /metrics (parlour.metrics.collector), if the app serves metrics.
        self.metrics = metrics
        #: Every service on the port, once each, for /healthz.
        self.services = list({id(service): service for service in services}.values())
        self.handlers = dict(handlers or {})

    async def respond(self, request: HttpRequest) -> Reply:
        path = request.path
        handler = self.handlers.get(path)
        if handler is not None:
            try:
                answer = await handler(request)
            except Exception:
                log.exception("HTTP handler of %s failed", path)
                return error_reply(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error", True)
            return Reply(answer.status, answer.body, JSON, answer.headers)
        api = _is_api(path)
        if api and not _API_GET_PATHS.fullmatch(path):
            return error_reply(HTTPStatus.NOT_FOUND, "no such API path", True)
        if request.method not in ("GET", "HEAD"):
            return error_reply(
                HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed", api, ("Allow", "GET, HEAD")
            )
        if api:
            return await self._api(request.target)
        if path == "/healthz":
            return Reply(HTTPStatus.OK, json.dumps(self.health()).encode(), JSON)
        if path == "/metrics" and self.metrics is not None:
            return self.metrics()
        if path == "/async/schema.json":
            return Reply(HTTPStatus.OK, _async_schema(), "application/schema+json")
        return _static(path, request.headers)

    def health(self) -> dict[str, Any]:
        runtime = self.runtime
        stats: dict[str, Any] = {
            "status": "ok",
            "uptime": round(runtime.clock() - runtime.started, 3),
            "store": runtime.store_status,
            "store_transactions": runtime.transactions,
            "store_records": runtime.committed_records,
            "store_unapplied": runtime.unapplied,
        }
        for service in self.services:
            counts = getattr(service, "stats", None)
            if callable(counts):
                stats.update(counts())
        return stats

    async def _api(self, target: str) -> Reply:
        """Records are read (and replayed) on the store's thread, never on the loop."""
        runtime = self.runtime
        try:
            answer = await runtime.in_store_thread(lambda: handle_api(runtime.store, target))
        except StoreFailure as failure:
            log.warning("API read failed: %s", failure)
            return error_reply(HTTPStatus.SERVICE_UNAVAILABLE, "the store cannot be read now", True)
        return Reply(answer.status, answer.body, JSON, answer.headers)


@cache
def _async_schema() -> bytes:
    """The JSON Schema of every /async message (docs/async-decisions.md S2), built once."""
    from parlour.protocols.async_ws.reference.schema import schema

    return json.dumps(schema()).encode()


def _static_root() -> Path | None:
    root = files("parlour").joinpath("web")
    return Path(str(root)) if root.is_dir() else None


#: Paths that name a page without its file name.
PAGES = {"": "index.html", "/": "index.html", "/admin": "admin.html"}
#: What every page may load and do: its own scripts, styles and images only (no
#: inline script or style, no eval), its own origin for fetches and websockets, no framing by
#: any site (clickjacking), no plugins, no <base> rewriting; forms post to the page's origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
#: On every static file: no type sniffing; on pages, the policy above, no framing (for browsers
#: that predate frame-ancestors) and no address of a page sent to other sites.
STATIC_HEADERS: tuple[tuple[str, str], ...] = (("X-Content-Type-Options", "nosniff"),)
PAGE_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
)


@cache
def _validators(target: Path, mtime_ns: int, size: int) -> tuple[str, str]:
    """A file's ETag (a hash of its bytes) and Last-Modified, computed once per version of it."""
    digest = hashlib.blake2b(target.read_bytes(), digest_size=12).hexdigest()
    return f'"{digest}"', formatdate(mtime_ns / 1e9, usegmt=True)


def _not_modified(headers: Mapping[str, str], etag: str, modified: str) -> bool:
    """Whether the client's copy is current (RFC 9110 13.1.2, 13.1.3): If-None-Match wins over
    If-Modified-Since when both are sent."""
    wanted = headers.get("if-none-match")
    if wanted is not None:
        tags = [tag.strip().removeprefix("W/") for tag in wanted.split(",")]
        return "*" in tags or etag in tags
    since = headers.get("if-modified-since")
    if since is None:
        return False
    try:
        return parsedate_to_datetime(since) >= parsedate_to_datetime(modified)
    except (TypeError, ValueError):
        return False  # a date that does not parse is ignored, as the RFC says


def _static(path: str, headers: Mapping[str, str] | None = None) -> Reply:
    """A file of the packaged web client; ``/`` is ``index.html``. No path leaves the folder.

    The path is not percent-decoded: ``%2e%2e`` names no file, and ``..`` is refused outright.
    Every file carries an ETag and a Last-Modified, and a conditional request for the version
    the client has is answered 304 without the body; pages carry the security headers.
    """
    root = _static_root()
    relative = PAGES.get(path) or path.lstrip("/")
    if root is not None and ".." not in Path(relative).parts:
        target = (root / relative).resolve()
        try:
            found = target.is_file() and target.is_relative_to(root.resolve())
            info = target.stat() if found else None
        except OSError:  # a name too long for the file system, or a path that cannot be
            found, info = False, None  # a file: whatever the request asked for, it names no file here
        if found and info is not None:
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind.endswith("javascript"):
                kind += "; charset=utf-8"
            etag, modified = _validators(target, info.st_mtime_ns, info.st_size)
            extra = (
                ("ETag", etag),
                ("Last-Modified", modified),
                # Revalidated at each use: the files change with each release of the server.
                ("Cache-Control", "no-cache"),
                *STATIC_HEADERS,
                *(PAGE_HEADERS if kind.startswith("text/html") else ()),
            )
            if headers is not None and _not_modified(headers, etag, modified):
                return Reply(HTTPStatus.NOT_MODIFIED, b"", kind, extra)
            return Reply(HTTPStatus.OK, target.read_bytes(), kind, extra)
    return error_reply(HTTPStatus.NOT_FOUND, "Not found", False)


def _is_upgrade(request: h11.Request) -> bool:
    """A websocket opening handshake (RFC 6455 4.1): GET with ``Upgrade: websocket``. Whether
    the rest of it is valid is websockets' to say (it answers 400 or 426 otherwise)."""
    if request.method != b"GET":
        return False
    return any(name == b"upgrade" and b"websocket" in value.lower() for name, value in request.headers)


class HttpConnection(asyncio.Protocol):
    """One accepted connection while it speaks HTTP (until a websocket upgrade takes it over).

    ``live`` holds the connections of the listener, for its shutdown.
    """

    def __init__(self, site: HttpSite, upgrade: Upgrade | None, live: set[HttpConnection]) -> None:
        self.site = site
        self._upgrade = upgrade
        self._live = live
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
        self.transport: asyncio.Transport | None = None
        self.client = ""
        self._timer: asyncio.TimerHandle | None = None
        #: True while waiting for the next request of a keep-alive connection.
        self._idle = False
        self._request: h11.Request | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._requests = 0
        self._task: asyncio.Task[None] | None = None
        #: After a final response: input is dropped until the client closes (or a timer does).
        self._closing = False
        self._timeout = site.runtime.limits.handshake_timeout
        #: Whether the connection was counted against its address (parlour.transport.limits).
        self._counted = False
        #: Whether its end has been logged already (one line for a silent connection).
        self._logged = False

    # asyncio.Protocol -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports do not derive from asyncio's.
        self.transport = transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not self.site.runtime.addresses.connect(self.client):
            log.info("refused a connection from %s: too many open from that address", self.client)
            self._closing = self._logged = True
            transport.abort()
            return
        self._counted = True
        self._live.add(self)
        self._arm(self._timeout)

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        if self._idle:
            # The next request has begun: it must now arrive whole in time.
            self._idle = False
            self._arm(self._timeout)
        self._h11.receive_data(data)
        self._process()

    def eof_received(self) -> bool | None:
        if self._closing or self.transport is None:
            return None
        self._h11.receive_data(b"")
        self._process()
        # Keep the write side open while a response is being computed (a client may half-close
        # after its request); h11 then closes once it is sent.
        return True if self._task is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()
        self._live.discard(self)
        if self._counted and self.transport is not None:  # not taken over by a websocket
            self.site.runtime.addresses.disconnect(self.client)
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._requests == 0 and self._request is None and self.transport is not None and not self._logged:
            # A port probe or a load balancer's TCP check: not worth more than this.
            log.debug("connection from %s closed without a request", self.client)
        self.transport = None

    # Requests ---------------------------------------------------------------------------------

    def _process(self) -> None:
        """Handle the events h11 can parse from what has been received, until it needs more
        data, a response is being computed, or the connection is closing or taken over."""
        connection = self._h11
        while self._task is None and not self._closing and self.transport is not None:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as error:
                self._refuse(error)
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                self._started(event)
            elif isinstance(event, h11.Data):
                self._size += len(event.data)
                if self._size > BODY_LIMIT:
                    self._too_large()
                    return
                self._body.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._complete()
            elif isinstance(event, h11.ConnectionClosed):
                self._close()
                return

    def _started(self, request: h11.Request) -> None:
        self._request, self._body, self._size = request, [], 0
        length = next((value for name, value in request.headers if name == b"content-length"), None)
        if length is not None and int(length) > BODY_LIMIT:  # h11 checked it is a number
            self._too_large()
            return
        if self._h11.they_are_waiting_for_100_continue:
            self._write(self._h11.send(h11.InformationalResponse(status_code=100, headers=[])))

    def _complete(self) -> None:
        request = self._request
        assert request is not None and self.transport is not None
        self._cancel_timer()
        self._requests += 1
        if not self.site.runtime.addresses.allow(self.client):
            log.info("too many requests from %s: answered 429", self.client)
            api = _is_api(request.target.decode("ascii", "replace"))
            self._send(
                error_reply(HTTPStatus.TOO_MANY_REQUESTS, "too many requests", api, ("Retry-After", "1")),
                close=True,
            )
            self._close()
            return
        if self._upgrade is not None and _is_upgrade(request):
            transport, upgrade, rest = self.transport, self._upgrade, self._h11.trailing_data[0]
            # The websocket side owns the connection from here: this object lets go of it.
            self._live.discard(self)
            self.transport = None
            upgrade(transport, request, rest, self.client)
            return
        target = request.target.decode("ascii", "surrogateescape")
        headers: dict[str, str] = {}
        for name, value in request.headers:  # names are lower case already (h11)
            key = name.decode("latin-1")
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        http_request = HttpRequest(
            method=request.method.decode("ascii"),
            target=target,
            path=target.split("?", 1)[0],
            headers=headers,
            body=b"".join(self._body),
            client=self.client,
        )
        self._body = []
        # One request at a time: what a pipelining client sends meanwhile waits in the kernel.
        self.transport.pause_reading()
        self._task = asyncio.get_running_loop().create_task(self._respond(http_request))

    async def _respond(self, request: HttpRequest) -> None:
        try:
            reply = await self.site.respond(request)
        except Exception:  # the site answers its handlers' failures; this is a last resort
            log.exception("HTTP request %s %s failed", request.method, request.path)
            reply = error_reply(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error", _is_api(request.path))
        self._task = None
        try:
            self._answer(reply)
        except Exception:  # nobody awaits this task: an error must be logged here or lost
            log.exception("HTTP response to %s %s failed", request.method, request.path)
            self._abort()

    def _answer(self, reply: Reply) -> None:
        """Send ``reply``, then wait for the next request or close."""
        if self.transport is None:
            return
        self._send(reply)
        if self._closing or self.transport is None:
            return
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            self._request = None
            self._idle = True
            self._arm(IDLE_TIMEOUT)
            self.transport.resume_reading()
            self._process()  # a pipelined request may be waiting in h11's buffer already
        else:
            self._close()

    # Responses --------------------------------------------------------------------------------

    def _send(self, reply: Reply, close: bool = False) -> None:
        """Write ``reply`` whole (one write), without a body for HEAD."""
        request = self._request
        head = request is not None and request.method == b"HEAD"
        headers = [
            ("Content-Type", reply.content_type),
            ("Content-Length", str(len(reply.body))),
            *reply.headers,
        ]
        if reply.status == HTTPStatus.NOT_MODIFIED:
            # No body, and no length of one: a cache would take a Content-Length: 0 as the
            # length of the copy it keeps (RFC 9110 8.6, 15.4.5).
            headers = list(reply.headers)
        if close:
            headers.append(("Connection", "close"))
        try:
            phrase = HTTPStatus(reply.status).phrase.encode()
        except ValueError:
            phrase = b""
        connection = self._h11
        try:
            data = connection.send(h11.Response(status_code=reply.status, headers=headers, reason=phrase))
            if reply.body and not head:
                data += connection.send(h11.Data(data=reply.body))
            data += connection.send(h11.EndOfMessage())
        except h11.LocalProtocolError:
            # A handler's header h11 refuses (or a bug): nothing sensible can go out now.
            log.exception("cannot send an HTTP %d response", reply.status)
            self._abort()
            return
        self._write(data)

    def _too_large(self) -> None:
        """Answer 413 without reading the body, then close (the rest of it is never read)."""
        request = self._request
        api = request is not None and _is_api(request.target.decode("ascii", "replace"))
        self._send(
            error_reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body exceeds {BODY_LIMIT} bytes", api),
            close=True,
        )
        self._close()

    def _refuse(self, error: h11.RemoteProtocolError) -> None:
        """A request h11 cannot parse: answer 400 (or h11's hint) if a response can still go
        out, then close. Malformed input is the client's problem: no traceback."""
        log.debug("malformed HTTP request from %s: %s", self.client, error)
        peer_gone = self._h11.trailing_data[1]  # it closed mid-request: nobody reads an answer
        if not peer_gone and self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            request = self._request
            api = request is not None and _is_api(request.target.decode("ascii", "replace"))
            try:
                status = HTTPStatus(error.error_status_hint)
            except ValueError:
                status = HTTPStatus.BAD_REQUEST
            self._send(error_reply(status, "malformed request", api), close=True)
        self._close()

    def _write(self, data: bytes) -> None:
        if self.transport is not None and data:
            self.transport.write(data)

    # Closing ----------------------------------------------------------------------------------

    def _close(self) -> None:
        """Close once what was written has gone out; with unread input, linger first."""
        transport = self.transport
        if transport is None or self._closing:
            return
        self._closing = True
        self._cancel_timer()
        if self._h11.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED) or not transport.can_write_eof():
            transport.close()
            return
        # Half-close so the client sees the response end, keep reading (and dropping) what it
        # still sends, and close when it does or when the linger time is up.
        transport.write_eof()
        transport.resume_reading()
        self._timer = asyncio.get_running_loop().call_later(LINGER_TIMEOUT, transport.close)

    def _abort(self) -> None:
        if self.transport is not None:
            self._closing = True
            self.transport.abort()

    def _arm(self, seconds: float) -> None:
        self._cancel_timer()
        self._timer = asyncio.get_running_loop().call_later(seconds, self._timed_out)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        if self.transport is None:
            return
        if self._idle:
            log.debug("closing idle HTTP connection from %s", self.client)
        else:
            log.debug(
                "closing connection from %s: no complete request within %g s", self.client, self._timeout
            )
        self._closing = self._logged = True
        self.transport.close()

    def shutdown(self) -> None:
        """The listener is stopping: drop the connection (a response in progress is lost)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.transport is not None:
            self._closing = True
            self.transport.close()
