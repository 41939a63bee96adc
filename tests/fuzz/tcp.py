"""What the TCP fuzzers (Fish, Tsuro) share: one connection per case, its writes (split across
several ``write`` calls, or several messages in one), and what came back until the server closed.

A frame ``WAIT`` between writes waits for one line from the server first (e.g. ``PlayerConnected``
before a seated player misbehaves); ``PAUSE`` lets a moment pass, so that the writes around it
reach the server as separate segments.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.cases import Case, Tally

__all__ = ["PAUSE", "WAIT", "Exchange", "exchange", "run_cases"]

WAIT = "@wait@"
PAUSE = "@pause@"
#: How long the server may take to answer or to close before the oracle calls it a hang.
ANSWER_TIMEOUT = 8.0
#: A whole case (connect, writes, reads) within this, or the server is stuck.
CASE_TIMEOUT = 30.0


@dataclass
class Exchange:
    """What one connection received: decoded lines, and how it ended."""

    lines: list[Any] = field(default_factory=list)
    end: str = "open"  # "eof", "reset", "open" (we hung up first) or "timeout"


class _Lines(asyncio.Protocol):
    """A client connection that keeps every byte the kernel delivered, even when the stream then
    ends with a reset. asyncio's StreamReader raises the reset before returning lines it already
    holds, and a reset is common here: a server that closes while a case's later writes are in
    flight answers them with RST, after its last words (EJECTED, GAME_END) had arrived."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.end: str | None = None
        self.changed = asyncio.Event()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.changed.set()

    def eof_received(self) -> bool:
        self.end = "eof"
        self.changed.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.end is None:
            self.end = "eof" if exc is None else "reset"
        self.changed.set()

    def write(self, data: bytes) -> bool:
        """False once the connection is gone (the server hung up mid-case)."""
        if self.transport is None or self.transport.is_closing() or self.end is not None:
            return False
        self.transport.write(data)
        return True

    async def line(self, timeout: float) -> bytes | None:
        """The next whole line, or None at the end (``end`` says how) or after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while b"\n" not in self.buffer:
            if self.end is not None:
                return None
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                # On a loaded machine the timeout and the data (with the server's close) can
                # come in the same turn of the loop: what arrived still counts.
                if b"\n" not in self.buffer:
                    return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


async def _read_line(client: _Lines, got: Exchange, timeout: float) -> bool:
    """One more line into ``got``; False at the end of the stream (or after ``timeout``)."""
    line = await client.line(timeout)
    if line is None:
        got.end = client.end or "timeout"
        return False
    try:
        got.lines.append(json.loads(line))
    except ValueError:
        got.lines.append({"unparsable": line[:200].decode(errors="replace")})
    return True


async def exchange(port: int, case: Case, greeting: bool, until_close: bool) -> Exchange:
    """Send the case on a new connection; read until the server closes (``until_close``) or
    until one answer has come (or a moment has passed), then hang up."""
    got = Exchange()
    _, client = await asyncio.get_running_loop().create_connection(_Lines, "127.0.0.1", port)
    try:
        if greeting and not await _read_line(client, got, ANSWER_TIMEOUT):
            return got
        for frame in case.frames:
            if frame == WAIT:
                if not await _read_line(client, got, ANSWER_TIMEOUT):
                    return got
            elif frame == PAUSE:
                await asyncio.sleep(0.003)
            elif not client.write(frame if isinstance(frame, bytes) else frame.encode()):
                break  # the server hung up mid-case: read what it said before it did
        if until_close:
            while await _read_line(client, got, ANSWER_TIMEOUT):
                pass
        else:
            # A Fish join is answered (PlayerConnected); a Tsuro one is not until its table starts.
            answered = case.expect == "joined" and not greeting
            await _read_line(client, got, ANSWER_TIMEOUT if answered else 0.05)
            if got.end == "timeout":
                got.end = "open"
        return got
    finally:
        if client.transport is not None:
            client.transport.close()


Judge = Callable[[Case, Exchange], tuple[str, str | None]]


async def run_cases(
    port: int, work: list[Case], tally: Tally, judge: Judge, greeting: bool, workers: int = 8
) -> None:
    queue = list(reversed(work))

    async def worker() -> None:
        while queue:
            case = queue.pop()
            try:
                got = await asyncio.wait_for(
                    exchange(port, case, greeting, until_close=case.expect not in ("any", "joined")),
                    CASE_TIMEOUT,
                )
            except OSError as error:
                tally.record(case, "connect failed", f"could not connect: {error!r}")
                continue
            except TimeoutError:
                tally.record(case, "hang", f"no end within {CASE_TIMEOUT} s")
                continue
            outcome, problem = judge(case, got)
            tally.record(case, outcome, problem)

    await asyncio.gather(*(worker() for _ in range(workers)))
