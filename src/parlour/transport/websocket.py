"""The websocket port: HTTP/1.1 (parlour.transport.http) and websockets on one listener.

Every accepted connection starts as an :class:`~parlour.transport.http.HttpConnection`; a
websocket opening handshake is answered by websockets' sans-I/O ``ServerProtocol`` and the
transport is handed to a :class:`WebsocketConnection`, which drives that protocol itself: bytes
in with ``receive_data``, frames out to the service, ``data_to_send`` written to the socket.
Driving it directly, rather than through websockets' asyncio server, lets a frame reach the
service from ``data_received`` without a task switch, and lets a burst of messages leave in one
socket write (:meth:`WebsocketConnection.write_now`): the hot path of a busy server.

Routing: an exact path in ``routes`` (e.g. "/async") picks its service; every other path goes to
the default service, because reference Apologies clients connect to any path.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from time import perf_counter
from typing import cast

import h11
from websockets.datastructures import Headers
from websockets.exceptions import ProtocolError
from websockets.frames import OP_BINARY, OP_CONT, OP_PONG, OP_TEXT, CloseCode, Frame
from websockets.http11 import Request
from websockets.protocol import OPEN, Protocol
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

try:  # websockets' C helper, as its own frame parser uses it
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a build of websockets without its C extension
    from websockets.utils import apply_mask

from parlour.core.effects import Effect
from parlour.core.service import Service
from parlour.transport.http import HttpConnection, HttpHandler, HttpSite, Reply
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import Runtime

__all__ = [
    "CLOSE_TIMEOUT",
    "HARD_FRAME_LIMIT",
    "WebsocketConnection",
    "WebsocketListener",
    "serve_websocket",
    "text_frame",
    "text_message",
]

log = logging.getLogger("parlour.transport")

#: Frames above this are refused by the websocket layer itself (close 1009); below it, the
#: service applies its own, smaller, configurable limit and answers with an error.
HARD_FRAME_LIMIT = 1 << 20
#: How long a closing handshake may take before the connection is dropped (the reference: 2.5 s).
CLOSE_TIMEOUT = 2.5
#: Keepalive, as websockets' server did by default: a ping after this many seconds without one...
PING_INTERVAL = 20.0
#: ...and the connection closed (1011) if its pong has not come back within this many seconds.
#: Both are read when a timer is armed, so a test may lower them.
PING_TIMEOUT = 20.0


def _ping_interval() -> float:
    """PING_INTERVAL, give or take a quarter: connections opened together (a deploy, a load
    balancer's reconnect storm) would otherwise be pinged together, every time, in one burst
    of thousands of writes that delays everything else on the loop."""
    return PING_INTERVAL * (0.75 + random.random() / 2)


def text_frame(data: bytes) -> bytes:
    """The header of an unmasked, unfragmented server text frame carrying ``data`` (RFC 6455 5.2)."""
    size = len(data)
    if size < 126:
        return b"\x81%c" % size
    if size < 65536:
        return b"\x81\x7e" + size.to_bytes(2, "big")
    return b"\x81\x7f" + size.to_bytes(8, "big")


def text_message(data: bytes) -> bytes:
    """A whole server text frame carrying ``data``: header and payload, as the outbox queues it.

    With no extension negotiated (compression is off) a server text frame is just that, so frames
    are built here rather than through websockets' frame objects: the hot path of a busy server,
    and a message for many connections is framed once for all of them."""
    return text_frame(data) + data


#: Where a protocol's parser waits between two frames, with nothing buffered: in its frame loop
#: (Protocol.parse), at the reader's wait for a first byte (see ``simple_text_frames``).
_FRAME_LOOP = Protocol.parse.__code__
_FIRST_BYTE = StreamReader.at_eof.__code__


def simple_text_frames(data: bytes, max_size: int) -> list[bytes] | None:
    """The payloads of ``data`` when it is nothing but whole, unfragmented, masked text frames of
    at most ``max_size`` bytes, without extension bits (what a client sends, frame after frame);
    None for anything else: a control frame, a fragment, a frame cut short or a length past 64 KiB.

    Such frames change nothing in the websocket protocol but the messages it yields, so a
    connection between two frames may take them from here, unmasked, without the protocol's
    generator-based parser (a few microseconds a frame in Python)."""
    frames: list[bytes] = []
    end = len(data)
    at = 0
    while at < end:
        if data[at] != 0x81 or at + 2 > end:  # FIN, no RSV bits, opcode 1 (text)
            return None
        length = data[at + 1]
        if length < 0x80:  # not masked: a protocol error, which the protocol reports
            return None
        length &= 0x7F
        start = at + 6
        if length == 126:
            if at + 4 > end:
                return None
            length = (data[at + 2] << 8) | data[at + 3]
            start = at + 8
        elif length == 127:
            return None
        stop = start + length
        if stop > end or length > max_size:
            return None
        frames.append(apply_mask(data[start:stop], data[start - 4 : start]))
        at = stop
    return frames


class WebsocketConnection(asyncio.Protocol):
    """One open websocket: frames in to ``service``, the outbox's messages out.

    ``writable`` is True while a message may be written at once: the connection is open (no
    close frame sent or received, no end of stream) and the transport has not paused writing.
    """

    def __init__(
        self, listener: WebsocketListener, service: Service, protocol: ServerProtocol, address: str = ""
    ) -> None:
        self.listener = listener
        self.service = service
        self.runtime = listener.runtime
        #: The client's address, counted against its limits until the connection is lost
        #: (parlour.transport.limits); its frames are counted only when it is not exempt.
        self.address = address
        self._address_limited = listener.runtime.addresses.limited(address)
        self.protocol = protocol
        self.conn = self.runtime.new_conn()
        self.transport: asyncio.Transport | None = None
        self.writable = False
        self.paused = False
        self._loop = asyncio.get_running_loop()
        #: Set when the transport resumes writing (or the connection is lost).
        self._drained: asyncio.Future[None] | None = None
        #: A fragmented message being received: its parts, and whether it is text.
        self._fragments: list[bytes] = []
        self._fragment_text = False
        #: The payload of the keepalive ping awaiting its pong.
        self._ping: bytes | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._close_timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None
        self._gone = False
        #: Set once the client stopped reading: what it still sends is not read either.
        self._deaf = False
        #: Resolved once the connection is lost and the service told (for the listener's stop).
        self.lost: asyncio.Future[None] = self._loop.create_future()
        #: Where the handling time of each frame is recorded (parlour.metrics), if anywhere.
        meter = self.runtime.meter
        self.probe = None if meter is None else meter.probe(service)

    def opened(self, transport: asyncio.Transport, response: bytes, data: bytes) -> None:
        """The handshake succeeded: send its response, tell the service, read ``data`` (bytes
        that came after the handshake request)."""
        self.transport = transport
        transport.write(response)
        self.writable = not self.paused
        runtime, service, conn = self.runtime, self.service, self.conn
        self.listener.websockets.add(self)
        outbox = Outbox(
            self.send_texts,
            self.close,
            write_now=self.write_now,
            frame=text_message,
            byte_limit=runtime.limits.outbox_bytes,
            overflow=self.overflowed,
        )
        runtime.outboxes[conn] = outbox
        self._writer = self._loop.create_task(outbox.run())
        self._keepalive = self._loop.call_later(_ping_interval(), self._send_ping)
        if self.probe is not None:
            self.probe.opened += 1
        try:
            effects = service.connected(conn, runtime.clock())
        except Exception:
            log.exception("service failed on the opening of connection %d", conn)
            self._fail(CloseCode.INTERNAL_ERROR, "")
            return
        runtime.execute(effects, service, conn)
        if data:
            self.data_received(data)

    # asyncio.Protocol -------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        if not self._deaf and self._between_frames():
            payloads = simple_text_frames(data, HARD_FRAME_LIMIT)
            if payloads is not None:
                for payload in payloads:
                    if not self._message(payload, True):
                        return
                return
        protocol.receive_data(data)
        # Past the handshake, a server protocol only yields frames.
        events = cast("list[Frame]", protocol.events_received())
        if events and not self._deaf:
            # Frames go to the service before the protocol's own output (a pong, the echo of a
            # close frame) is written: answers to frames that came before a close frame still
            # go out, ahead of the close frame, as RFC 6455 5.5.1 allows.
            for frame in events:
                opcode = frame.opcode
                if opcode is OP_TEXT or opcode is OP_BINARY:
                    # Frame.parse builds payloads as bytes (BytesLike is for frames sent).
                    payload = cast(bytes, frame.data)
                    if not frame.fin:
                        self._fragments = [payload]
                        self._fragment_text = opcode is OP_TEXT
                        continue
                    text = opcode is OP_TEXT
                elif opcode is OP_CONT:
                    self._fragments.append(cast(bytes, frame.data))
                    if not frame.fin:
                        continue
                    payload = b"".join(self._fragments)
                    text, self._fragments = self._fragment_text, []
                else:
                    if opcode is OP_PONG and frame.data == self._ping:
                        self._ponged()
                    continue  # pings are answered and closes echoed by the protocol itself
                if not self._message(payload, text):
                    return
        if protocol.writes:
            self._send_protocol_data()
        if protocol.state is not OPEN:
            self._closing()

    def _between_frames(self) -> bool:
        """Whether the protocol is open, waits for the first byte of a frame with nothing
        buffered, and is not inside a fragmented message: then whole text frames may skip it
        (:func:`simple_text_frames`). False whenever its state is not known to be that one."""
        protocol = self.protocol
        # Read with getattr: these are websockets' internals (16.x), and a release that renames
        # them sends every frame through the protocol, as before (tests/transport/
        # test_websocket_frames.py notices that the shortcut is no longer taken).
        if protocol.state is not OPEN or getattr(protocol, "current_size", 0) is not None:
            return False
        if getattr(getattr(protocol, "reader", None), "buffer", b"?"):
            return False
        # The generators the parser is suspended in, outermost first (ServerProtocol.parse
        # delegates to Protocol.parse once the handshake is done).
        caller, waiting = None, protocol.parser
        for _ in range(4):
            inner = getattr(waiting, "gi_yieldfrom", None)
            if inner is None:
                break
            caller, waiting = waiting, inner
        return (
            getattr(waiting, "gi_code", None) is _FIRST_BYTE
            and getattr(caller, "gi_code", None) is _FRAME_LOOP
        )

    def _message(self, payload: bytes, text: bool) -> bool:
        """One whole message to the service, its effects carried out; False when the
        connection failed on it (nothing more of what was received is read)."""
        runtime, conn, probe = self.runtime, self.conn, self.probe
        if self._address_limited and not runtime.addresses.allow(self.address):
            log.info("connection %d: too many requests from %s, closing it", conn, self.address)
            self._fail(CloseCode.POLICY_VIOLATION, "rate limit exceeded")
            return False
        message: str | bytes
        if text:
            try:
                message = payload.decode()
            except UnicodeDecodeError as error:
                if probe is not None:
                    probe.failed("INVALID_UTF8")
                self._fail(CloseCode.INVALID_DATA, f"{error.reason} at position {error.start}")
                return False
        else:
            message = payload
        service = self.service
        started = perf_counter() if probe is not None else 0.0
        try:
            effects: list[Effect] = service.received(conn, message, runtime.clock())
        except Exception:  # a service answers its own errors; this is a last resort
            log.exception("service failed on a frame from connection %d", conn)
            if probe is not None:
                probe.failed("INTERNAL_ERROR")
            return True
        runtime.execute(effects, service, conn)
        if probe is not None:
            probe.observe(message, perf_counter() - started)
        return True

    def eof_received(self) -> None:
        # The protocol fails the connection (1006) unless a closing handshake ended it; either
        # way nothing more is written, so the transport may close (returning None).
        self.protocol.receive_eof()
        self._send_protocol_data()
        self.writable = False

    def connection_lost(self, exc: Exception | None) -> None:
        self.writable = False
        self._gone = True
        self.protocol.receive_eof()  # idempotent: the protocol's state becomes CLOSED
        for timer in (self._keepalive, self._close_timer):
            if timer is not None:
                timer.cancel()
        self._keepalive = self._close_timer = None
        self._wake_writer()
        self.listener.websockets.discard(self)
        runtime, service, conn = self.runtime, self.service, self.conn
        runtime.addresses.disconnect(self.address)
        try:
            runtime.execute(service.disconnected(conn, runtime.clock()), service)
        except Exception:
            log.exception("service failed on the loss of connection %d", conn)
        finally:
            outbox = runtime.outboxes.pop(conn, None)
            if outbox is not None:
                outbox.stop()  # its write, if one waits, was released by _wake_writer above
            elif self._writer is not None:
                self._writer.cancel()
            self._writer = None
            self.lost.set_result(None)

    def pause_writing(self) -> None:
        self.paused = True
        self.writable = False

    def resume_writing(self) -> None:
        # Also called after a switch from the HTTP protocol if the transport was paused then.
        self.paused = False
        self.writable = not self._gone and self.protocol.state is OPEN and not self.protocol.eof_sent
        self._wake_writer()

    # Output -----------------------------------------------------------------------------------

    def write_now(self, frames: list[bytes]) -> bool:
        """Write text frames (built by :func:`text_message`) in one write, now, if the
        connection is writable.

        False (nothing sent) otherwise: the outbox's writer task then sends them through
        :meth:`send_texts`.
        """
        if not self.writable:
            return False
        transport = self.transport
        assert transport is not None
        transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        return True

    async def send_texts(self, frames: list[bytes]) -> None:
        """The outbox's writer: write the text frames at once (while the connection is open),
        then wait while the transport has paused writing (asyncio's write-then-drain).

        Writing before waiting keeps the order: :meth:`write_now` writes nothing while paused,
        so nothing can overtake a batch this method holds. Messages for a connection that is
        closing are dropped: its client will not read them.
        """
        transport = self.transport
        protocol = self.protocol
        if transport is not None and not self._gone and protocol.state is OPEN and not protocol.eof_sent:
            transport.write(b"".join(frames))
        while self.paused and not self._gone:
            waiter = self._drained = self._loop.create_future()
            await waiter

    async def close(self, code: int, reason: str) -> None:
        """A Close effect: start the closing handshake (RFC 6455 7.1.2); the client's close
        frame, or :data:`CLOSE_TIMEOUT`, ends the connection."""
        protocol = self.protocol
        if self._gone or protocol.state is not OPEN:
            return
        try:
            protocol.send_close(code, reason)
        except ProtocolError:  # a code that may not be sent (1005, 1006...)
            log.warning("connection %d: cannot close with code %d, closing with 1011", self.conn, code)
            protocol.send_close(CloseCode.INTERNAL_ERROR)
        self._send_protocol_data()
        self._closing()

    def overflowed(self) -> None:
        """The client does not read what it is sent (its outbox is full): close 1008 now, not
        after the write the outbox is stuck in; the close timer drops the connection if the
        client does not answer the close frame either."""
        log.info("connection %d does not read its messages: closing it (1008)", self.conn)
        self._deaf = True
        if not self._gone and self.protocol.state is OPEN:
            self.protocol.send_close(CloseCode.POLICY_VIOLATION, "too many unsent messages")
            self._send_protocol_data()
            self._closing()

    def _fail(self, code: int, reason: str) -> None:
        """Fail the connection (RFC 6455 7.1.7): close frame, end of stream, no more input."""
        if not self._gone:
            self.protocol.fail(code, reason)
            self._send_protocol_data()
            self._closing()

    def _send_protocol_data(self) -> None:
        """Write what the protocol has to send; an empty chunk asks for a half-close."""
        transport = self.transport
        chunks = self.protocol.data_to_send()
        if transport is None or self._gone:
            return
        for data in chunks:
            if data:
                transport.write(data)
            else:
                self.writable = False
                if transport.can_write_eof():
                    transport.write_eof()
                else:
                    transport.close()

    def _closing(self) -> None:
        """The closing handshake has begun (or the connection failed): no more messages, no
        more pings, and the TCP connection is dropped if it has not closed in time."""
        self.writable = False
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self._close_timer is None and not self._gone and self.protocol.close_expected():
            assert self.transport is not None
            self._close_timer = self._loop.call_later(CLOSE_TIMEOUT, self.transport.abort)
        self._wake_writer()

    def _wake_writer(self) -> None:
        waiter, self._drained = self._drained, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # Keepalive --------------------------------------------------------------------------------

    def _send_ping(self) -> None:
        if self._gone or self.protocol.state is not OPEN:
            self._keepalive = None
            return
        self._ping = os.urandom(4)
        self.protocol.send_ping(self._ping)
        self._send_protocol_data()
        self._keepalive = self._loop.call_later(PING_TIMEOUT, self._no_pong)

    def _ponged(self) -> None:
        self._ping = None
        if self._keepalive is not None:
            self._keepalive.cancel()
        self._keepalive = self._loop.call_later(_ping_interval(), self._send_ping)

    def _no_pong(self) -> None:
        self._keepalive = None
        log.debug("connection %d: no pong within %g s, closing it", self.conn, PING_TIMEOUT)
        self._fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")

    def shutdown(self) -> None:
        """The listener is stopping: close with 1001 (going away) unless closing already."""
        if not self._gone and self.protocol.state is OPEN:
            self.protocol.send_close(CloseCode.GOING_AWAY)
            self._send_protocol_data()
            self._closing()


class WebsocketListener:
    """The listening socket of the port and the connections it accepted."""

    def __init__(
        self,
        service: Service,
        runtime: Runtime,
        routes: Mapping[str, Service] | None = None,
        http_handlers: Mapping[str, HttpHandler] | None = None,
        metrics: Callable[[], Reply] | None = None,
    ) -> None:
        self.service = service
        self.runtime = runtime
        self.routes = dict(routes or {})
        self.site = HttpSite(runtime, [service, *self.routes.values()], http_handlers, metrics)
        self.server: asyncio.Server | None = None
        self.http: set[HttpConnection] = set()
        self.websockets: set[WebsocketConnection] = set()

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    def _accept(self) -> HttpConnection:
        return HttpConnection(self.site, self._upgrade, self.http)

    def _upgrade(self, transport: asyncio.Transport, request: h11.Request, rest: bytes, client: str) -> None:
        """Answer a websocket opening handshake that h11 has read; take the connection over.

        h11 has consumed the handshake request, so the protocol is created past it (state OPEN)
        and only asked to check it and build the response (RFC 6455 4.2.2). No extension is
        offered: per-message deflate costs more CPU than it saves on loopback and LANs.
        """
        target = request.target.decode("ascii", "surrogateescape")
        headers = Headers(
            [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw_items()]
        )
        protocol = ServerProtocol(state=OPEN, max_size=HARD_FRAME_LIMIT)
        response = protocol.accept(Request(target, headers))
        if response.status_code != 101:
            log.debug("websocket handshake from %s refused: %d", client, response.status_code)
            self.runtime.addresses.disconnect(client)
            transport.write(response.serialize())
            transport.close()
            return
        service = self.routes.get(target.split("?", 1)[0], self.service)
        connection = WebsocketConnection(self, service, protocol, client)
        transport.set_protocol(connection)
        connection.opened(transport, response.serialize(), rest)

    async def close(self) -> None:
        """Stop listening; close websockets with 1001 and HTTP connections; wait (bounded) for
        every connection to end, so that each service has heard of each disconnection."""
        if self.server is None:
            return
        self.server.close()
        for http in list(self.http):
            http.shutdown()
        lost = [connection.lost for connection in self.websockets]
        for connection in list(self.websockets):
            connection.shutdown()
        if lost:
            await asyncio.wait(lost, timeout=CLOSE_TIMEOUT + 0.5)
        for connection in list(self.websockets):
            if connection.transport is not None:
                connection.transport.abort()
        with suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 2.0)


@asynccontextmanager
async def serve_websocket(
    service: Service,
    host: str,
    port: int,
    runtime: Runtime | None = None,
    routes: Mapping[str, Service] | None = None,
    http_handlers: Mapping[str, HttpHandler] | None = None,
    metrics: Callable[[], Reply] | None = None,
    reuse_port: bool = False,
) -> AsyncIterator[WebsocketListener]:
    """Serve websockets and HTTP on ``host:port`` for the duration of the block.

    ``routes`` maps exact websocket paths to their services (every other path: ``service``);
    ``http_handlers`` maps exact HTTP paths to handlers; ``metrics`` answers ``GET /metrics``.
    ``reuse_port`` binds with SO_REUSEPORT, so that several processes (parlour.workers) listen
    on one port and the kernel spreads new connections over them. ``listener.port`` is the
    bound port.
    """
    listener = WebsocketListener(service, runtime or Runtime(), routes, http_handlers, metrics)
    listener.server = await asyncio.get_running_loop().create_server(
        listener._accept, host, port, reuse_port=reuse_port or None
    )
    try:
        yield listener
    finally:
        await listener.close()
