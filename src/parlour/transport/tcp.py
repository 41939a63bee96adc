"""The TCP listener for the line protocols (Fish, Tsuro): raw chunks in, text lines out.

The service reassembles messages from chunks itself (a tolerant stream reader), so the transport
hands over whatever each read returns. Output goes through the same per-connection outboxes as
websocket output.

A connection the service closes (a kick, an EJECTED) is closed gracefully: its last lines, then
a half-close (FIN), then whatever the client still sends is read and dropped until it closes its
side or ``LINGER_SECONDS`` pass, and only then the socket is closed. Closing a socket with unread
input makes the kernel send a reset, and a reset makes the client's kernel drop what it has not
read yet: a client ejected while its own writes are in flight would lose the line saying why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from time import perf_counter

from parlour.core.effects import Close
from parlour.core.service import Service
from parlour.transport.outbox import Outbox
from parlour.transport.runtime import Runtime

__all__ = ["TcpListener", "serve_tcp"]

log = logging.getLogger("parlour.transport")
READ_SIZE = 65_536
#: How long a connection the service closed is drained (its input read and dropped) for the client
#: to read the last lines and close its side, before it is closed all the same.
LINGER_SECONDS = 5.0


@dataclass
class TcpListener:
    service: Service
    runtime: Runtime
    server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        runtime, service = self.runtime, self.service
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        addresses = runtime.addresses
        if not addresses.connect(address):
            log.info("refused a connection from %s: too many open from that address", address)
            writer.transport.abort()
            return
        limited = addresses.limited(address)
        conn = runtime.new_conn()

        async def write(lines: list[bytes]) -> None:
            if writer.is_closing():
                return  # dropped or overflowed: nobody reads these any more
            writer.write(b"".join(lines))
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                writer.close()  # the reading side sees the end and tells the service

        #: Set when the service closed the connection: from then on its input is dropped unread,
        #: until the client closes its side or the linger is over (the connection is then dropped).
        linger: asyncio.TimerHandle | None = None

        async def close(code: int, reason: str) -> None:
            nonlocal linger
            if writer.is_closing() or linger is not None:
                return
            linger = asyncio.get_running_loop().call_later(LINGER_SECONDS, writer.transport.abort)
            # FIN after the lines still buffered; the read loop drains and closes (see module).
            if writer.can_write_eof():
                with suppress(ConnectionError, OSError):
                    writer.write_eof()
            else:
                writer.close()

        def overflow() -> None:
            # The client does not read: its protocol has no words for that, and it would not
            # read them. Drop the connection now; the read loop ends and the service hears of
            # a disconnection (its seat goes to a robot or the player is kicked).
            log.info("connection %d does not read its messages: dropping it", conn)
            writer.transport.abort()

        outbox = Outbox(write, close, byte_limit=runtime.limits.outbox_bytes, overflow=overflow)
        runtime.outboxes[conn] = outbox
        sender = asyncio.create_task(outbox.run())
        meter = runtime.meter
        probe = None if meter is None else meter.probe(service)
        if probe is not None:
            probe.opened += 1
        try:
            runtime.execute(service.connected(conn, runtime.clock()), service, conn)
            while not writer.is_closing():
                data = await reader.read(READ_SIZE)
                if not data:
                    break
                if linger is not None:
                    continue  # the service is done with it: read only so as not to reset it
                if limited and not addresses.allow(address):
                    log.info("connection %d: too many requests from %s, dropping it", conn, address)
                    break
                started = perf_counter() if probe is not None else 0.0
                try:
                    effects = service.received(conn, data, runtime.clock())
                except Exception:  # a service answers its own errors; this is a last resort
                    log.exception("service failed on data from connection %d", conn)
                    if probe is not None:
                        probe.failed("INTERNAL_ERROR")
                    break
                runtime.execute(effects, service, conn)
                if probe is not None:
                    probe.observe(data, perf_counter() - started)
        except (ConnectionError, OSError):
            pass
        finally:
            if linger is not None:
                linger.cancel()
            addresses.disconnect(address)
            runtime.execute(service.disconnected(conn, runtime.clock()), service)
            runtime.outboxes.pop(conn, None)
            outbox.put(Close(conn))  # ends the sender once what is queued has gone out
            with suppress(asyncio.TimeoutError, ConnectionError, OSError):
                await asyncio.wait_for(asyncio.shield(sender), 1.0)  # let queued lines go out
            sender.cancel()
            writer.close()


@asynccontextmanager
async def serve_tcp(
    service: Service, host: str, port: int, runtime: Runtime | None = None
) -> AsyncIterator[TcpListener]:
    """Run the listener for the duration of the block; ``listener.port`` is the bound port."""
    listener = TcpListener(service, runtime or Runtime())
    server = await asyncio.start_server(listener._handle, host, port)
    listener.server = server
    try:
        yield listener
    finally:
        server.close()
        with suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)
